import { FormatError, isFormatError } from '../errors.js';
import { evaluateConstant } from '../print-fmt/evaluate-constant.js';
import { parseCExpression, parsePrintFmt } from '../print-fmt/parse-print-fmt.js';
import type { PrintFmt } from '../print-fmt/print-fmt-tree.js';
import { type FieldDeclaration, parseFieldDeclaration } from './field-declaration.js';

/** One field line of a format file (`field:int next_pid; offset:56; size:4; signed:1;`). */
export interface FormatField {
  /** `next_pid`; for arrays without the `[..]`. */
  name: string;
  /** The C text as printed: `char prev_comm[16]`, `__data_loc char[] name`. */
  declaration: string;
  /** C type without name and array: `char`, `pid_t`, `unsigned long` (element type for dynamic arrays). */
  type: string;
  byteOffset: number;
  size: number;
  /** Undefined when the file has no `signed:` (very old kernels). */
  signed: boolean | undefined;
  /** Fixed arrays; `length` undefined when the length is textual and not computable, or empty. */
  array: { length: number | undefined; lengthText: string } | undefined;
  /** `__data_loc` (offset from the record start) or `__rel_loc` (offset from the field's end). */
  dynamic: 'data_loc' | 'rel_loc' | undefined;
  /** A field of the common header (`common_type`, `common_pid`, ...). */
  isCommon: boolean;
}

/** A parsed `events/<system>/<event>/format` file. */
export interface EventFormat {
  system: string;
  name: string;
  /** The event id (`ID:`), the value of `common_type` in its records. */
  id: number;
  commonFields: FormatField[];
  fields: FormatField[];
  /** Parsed `print fmt:`; undefined if it failed to parse (see {@link printFmtError}). */
  printFmt: PrintFmt | undefined;
  printFmtText: string;
  printFmtError?: string;
  /** Size of the fixed part of the record: max(offset + size) over all fields. */
  fixedSize: number;
  /**
   * The kernel's `sizeof(long)` as far as this file shows it (from a `long`, `unsigned long` or
   * pointer field of a non-syscall event); undefined when no field tells.
   */
  longSize: 4 | 8 | undefined;
}

/** Largest offset or size accepted in a field line (records live in sub-buffers of at most 1 MiB). */
export const maxFieldExtent = 1 << 20;

const fieldLineRe = /^\s*field(?:\s+special)?\s*:(.*)$/;

function lineError(code: 'malformed' | 'out-of-range' | 'truncated', message: string, line: number, event?: string): FormatError {
  return new FormatError(code, `format line ${line}: ${message}`, event ? { line, event } : { line });
}

function evalArrayLength(text: string): number | undefined {
  const expr = parseCExpression(text);
  if (!expr) return undefined;
  const v = evaluateConstant(expr, 8);
  return v !== undefined && v >= 0n && v <= BigInt(maxFieldExtent) ? Number(v) : undefined;
}

/** The usual shape of a field line, read with one match (the general loop handles the rest). */
const standardFieldRe = /^([^;]*);\toffset:(\d{1,7});\tsize:(\d{1,7});(?:\tsigned:([01]);)?$/;

function parseFieldLine(body: string, lineNo: number, isCommon: boolean, event: string | undefined): FormatField {
  const std = standardFieldRe.exec(body);
  if (std) {
    const byteOffset = Number(std[2]);
    const size = Number(std[3]);
    if (byteOffset + size <= maxFieldExtent) {
      const declaration = std[1]!.trim();
      const decl = declarationOf(declaration, lineNo, event);
      if (decl.dynamic === undefined || size === 4) {
        const signed = std[4] === undefined ? undefined : std[4] === '1';
        return { name: decl.name, declaration, type: decl.type, byteOffset, size, signed, array: decl.array, dynamic: decl.dynamic, isCommon };
      }
    }
  }
  const parts = body.split(';');
  const declaration = parts[0]!.trim();
  let byteOffset: number | undefined;
  let size: number | undefined;
  let signed: boolean | undefined;
  for (let k = 1; k < parts.length; k++) {
    const part = parts[k]!.trim();
    if (part === '') continue;
    const m = /^([A-Za-z_]+)\s*:\s*(.*)$/.exec(part);
    if (!m) throw lineError('malformed', `field '${declaration}': cannot read '${part}'`, lineNo, event);
    const key = m[1]!;
    const value = m[2]!.trim();
    if (key === 'offset' || key === 'size' || key === 'signed') {
      if (!/^\d+$/.test(value)) throw lineError('malformed', `field '${declaration}': ${key} '${value}' is not a number`, lineNo, event);
      if (value.length > 9 || Number(value) > maxFieldExtent) {
        throw lineError('out-of-range', `field '${declaration}': ${key} ${value} exceeds ${maxFieldExtent}`, lineNo, event);
      }
      const n = Number(value);
      if (key === 'offset') byteOffset = n;
      else if (key === 'size') size = n;
      else if (n > 1) throw lineError('malformed', `field '${declaration}': signed ${n} is neither 0 nor 1`, lineNo, event);
      else signed = n === 1;
    }
  }
  if (byteOffset === undefined || size === undefined) {
    const code = parts.length < 3 ? 'truncated' : 'malformed';
    throw lineError(code, `field '${declaration}': missing ${byteOffset === undefined ? 'offset' : 'size'}`, lineNo, event);
  }
  if (byteOffset + size > maxFieldExtent) {
    throw lineError('out-of-range', `field '${declaration}': offset ${byteOffset} + size ${size} exceeds ${maxFieldExtent}`, lineNo, event);
  }
  const decl = declarationOf(declaration, lineNo, event);
  if (decl.dynamic !== undefined && size !== 4) {
    throw lineError('malformed', `field '${declaration}': a ${decl.dynamic} field has size ${size}, expected 4`, lineNo, event);
  }
  return { name: decl.name, declaration, type: decl.type, byteOffset, size, signed, array: decl.array, dynamic: decl.dynamic, isCommon };
}

function declarationOf(declaration: string, lineNo: number, event: string | undefined): FieldDeclaration {
  try {
    return parseFieldDeclaration(declaration, evalArrayLength);
  } catch (e) {
    if (isFormatError(e)) throw lineError('malformed', e.message, lineNo, event);
    throw e;
  }
}

function inferLongSize(system: string, fields: readonly FormatField[]): 4 | 8 | undefined {
  if (system === 'syscalls') return undefined; // args are printed with their C types but long-sized
  for (const f of fields) {
    if (f.array || f.dynamic) continue;
    const isLong = /^(unsigned\s+)?long(\s+int)?$/.test(f.type) || f.type.includes('*');
    if (isLong && (f.size === 4 || f.size === 8)) return f.size;
  }
  return undefined;
}

/**
 * Parses the text of `events/<system>/<event>/format`. The `print fmt:` line runs to the end of
 * the text (some kernels print raw newlines inside it); when it does not parse, the format is still
 * returned with `printFmt` undefined and `printFmtError` set. Throws {@link FormatError} with the
 * 1-based `line`: `malformed`, `out-of-range` (absurd offsets or sizes), or `truncated` (the text
 * ends before `name:`, `ID:` and `format:` were all seen). A file without a `print fmt:` line (real:
 * some 3.10 kernels) parses with `printFmtError` set.
 */
export function parseEventFormat(text: string, options: { system?: string } = {}): EventFormat {
  const lines = text.split('\n');
  let name: string | undefined;
  let id: number | undefined;
  let sawFormat = false;
  let group = 0; // 0: before the first blank line after "format:", 1: after it
  let sawBlank = false;
  const commonFields: FormatField[] = [];
  const fields: FormatField[] = [];
  let printFmtText: string | undefined;
  let printFmtLine = 0;
  const event = () => (name === undefined ? undefined : options.system ? `${options.system}/${name}` : name);

  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const line = lines[i]!.replace(/\r$/, '');
    if (line.startsWith('print fmt:')) {
      printFmtLine = lineNo;
      printFmtText = [line.slice('print fmt:'.length), ...lines.slice(i + 1)].join('\n').replace(/^ /, '').replace(/\s+$/, '');
      break;
    }
    if (line.trim() === '') {
      if (sawFormat && (commonFields.length > 0 || fields.length > 0)) {
        if (group === 0) sawBlank = true;
        group = 1;
      }
      continue;
    }
    const fm = fieldLineRe.exec(line);
    if (fm) {
      if (!sawFormat) throw lineError('malformed', "field line before 'format:'", lineNo, event());
      const f = parseFieldLine(fm[1]!, lineNo, group === 0, event());
      (group === 0 ? commonFields : fields).push(f);
      continue;
    }
    const kv = /^(\w[\w ]*):\s*(.*)$/.exec(line);
    if (!kv) throw lineError('malformed', `unexpected text '${line.slice(0, 60)}'`, lineNo, event());
    const key = kv[1]!;
    const value = kv[2]!.trim();
    if (key === 'name') {
      if (name !== undefined) throw lineError('malformed', "second 'name:' line", lineNo, event());
      if (!/^[\w.:+-]+$/.test(value)) throw lineError('malformed', `event name '${value.slice(0, 60)}' is not a name`, lineNo);
      name = value;
    } else if (key === 'ID') {
      if (!/^\d+$/.test(value)) throw lineError('malformed', `ID '${value.slice(0, 60)}' is not a number`, lineNo, event());
      if (value.length > 10 || Number(value) > 0x7fffffff) throw lineError('out-of-range', `ID ${value} exceeds ${0x7fffffff}`, lineNo, event());
      id = Number(value);
    } else if (key === 'format') {
      if (value !== '') throw lineError('malformed', `unexpected text after 'format:'`, lineNo, event());
      sawFormat = true;
    } else {
      throw lineError('malformed', `unknown key '${key.slice(0, 60)}'`, lineNo, event());
    }
  }

  const endLine = lines.length;
  if (name === undefined) throw lineError('truncated', "no 'name:' line", endLine);
  if (id === undefined) throw lineError('truncated', "no 'ID:' line", endLine, event());
  if (!sawFormat) throw lineError('truncated', "no 'format:' line", endLine, event());

  // Without a blank separator line (unusual), the common fields are the `common_*` ones.
  if (!sawBlank) {
    const all = commonFields.splice(0);
    for (const f of all) {
      f.isCommon = f.name.startsWith('common_');
      (f.isCommon ? commonFields : fields).push(f);
    }
  }

  let fixedSize = 0;
  for (const f of commonFields) fixedSize = Math.max(fixedSize, f.byteOffset + f.size);
  for (const f of fields) fixedSize = Math.max(fixedSize, f.byteOffset + f.size);

  const system = options.system ?? '';
  const format: EventFormat = {
    system,
    name,
    id,
    commonFields,
    fields,
    printFmt: undefined,
    printFmtText: printFmtText ?? '',
    fixedSize,
    longSize: inferLongSize(system, [...commonFields, ...fields]),
  };
  if (printFmtText === undefined) {
    format.printFmtError = "no 'print fmt:' line";
    return format;
  }
  try {
    format.printFmt = parsePrintFmt(printFmtText, printFmtLine);
  } catch (e) {
    if (!isFormatError(e)) throw e;
    format.printFmtError = `format line ${e.line ?? printFmtLine}: print fmt: ${e.message}`;
  }
  return format;
}

/** The field (common or not) called `name`, or undefined. */
export function findField(format: EventFormat, name: string): FormatField | undefined {
  for (const f of format.fields) if (f.name === name) return f;
  for (const f of format.commonFields) if (f.name === name) return f;
  return undefined;
}
