import type { FieldOperand, SourceLine } from './line.js';
import { parseOffset, parseRegister } from './numbers.js';

/** A parsed memory reference: base register, constant offset, and maybe a symbolic field operand. */
export interface MemoryOperand {
  reg: number;
  offset: number;
  field?: FieldOperand;
}

const fieldRe = /^([A-Za-z_][\w]*)\.([A-Za-z_][\w]*)$/;

/**
 * Parses the inside of a memory reference: `REG`, `REG + N`, `REG - N`, `REG + event.field` or
 * `REG + event.field + N`. `column` is the 1-based column of the first character of `inner`.
 */
export function parseMemoryInner(inner: string, src: SourceLine, column: number, percent: boolean): MemoryOperand {
  const m = /^(\s*)(%?[rw]?\w+)\s*(.*)$/.exec(inner);
  if (!m) throw src.error('invalid-operand', `invalid memory operand: '${inner.trim()}'`, column);
  const regText = m[2]!;
  const { reg } = parseRegister(regText, src, column + m[1]!.length, { percent, w: false });
  const rest = m[3]!.trim();
  if (rest === '') return { reg, offset: 0 };
  const restColumn = column + inner.indexOf(rest);
  // Terms joined by + and -: at most one symbolic field term, the rest numbers.
  const terms = rest.match(/[+-]\s*[^+-]+/g);
  if (!terms || terms.join('').replace(/\s+/g, '') !== rest.replace(/\s+/g, '')) {
    throw src.error('invalid-operand', `invalid memory operand: '${inner.trim()}' (expected REG, REG+N, REG-N or REG + event.field)`, restColumn);
  }
  let offset = 0;
  let field: FieldOperand | undefined;
  let at = 0;
  for (const term of terms) {
    const termColumn = restColumn + rest.indexOf(term, at);
    at = rest.indexOf(term, at) + term.length;
    const sign = term[0]!;
    const body = term.slice(1).trim();
    const f = fieldRe.exec(body);
    if (f) {
      if (field) throw src.error('invalid-operand', `invalid memory operand: two field operands in '${inner.trim()}'`, termColumn);
      if (sign !== '+') throw src.error('invalid-operand', `invalid memory operand: a field operand is added, not subtracted`, termColumn);
      field = { event: f[1]!, field: f[2]!, addend: 0, column: termColumn + term.indexOf(body) };
      continue;
    }
    offset += parseOffset(`${sign}${body}`, src, termColumn);
  }
  if (offset < -0x8000 || offset > 0x7fff) {
    throw src.error('out-of-range', `offset out of range: ${offset} does not fit in 16 bits (-32768 to 32767)`, restColumn);
  }
  if (field) {
    field.addend = offset;
    return { reg, offset, field };
  }
  return { reg, offset };
}
