// The bpf_conformance / uBPF assembler syntax: `add32 %r0, 1`, `ldxw %r0, [%r1+4]`,
// `lock fetch add [%r10-8], %r1`, `jeq %r1, 0x1, +2`, `call local f`, `lddw %r0, 0x1122334455667788`.
// Registers may be written with or without `%`.
import { helperId } from '../helpers.js';
import type { InstructionFields } from '../instruction.js';
import { splitImm64 } from '../instruction.js';
import { AluOp, AtomicOp, atomicFetch, CallSource, InsnClass, JmpOp, Mode, Opcode, PseudoSource, Size, Source } from '../opcode.js';
import type { ParsedInsn, SourceLine } from './line.js';
import { parseMemoryInner } from './memory.js';
import { isLabel, isNumber, parseImm32, parseImm64, parseJumpOffset, parseRegister } from './numbers.js';

interface Operand {
  text: string;
  column: number;
}

const aluOps: Record<string, number> = {
  add: AluOp.add,
  sub: AluOp.sub,
  mul: AluOp.mul,
  div: AluOp.div,
  sdiv: AluOp.div,
  or: AluOp.or,
  and: AluOp.and,
  lsh: AluOp.lsh,
  rsh: AluOp.rsh,
  mod: AluOp.mod,
  smod: AluOp.mod,
  xor: AluOp.xor,
  mov: AluOp.mov,
  arsh: AluOp.arsh,
};

const jmpOps: Record<string, number> = {
  jeq: JmpOp.jeq,
  jgt: JmpOp.jgt,
  jge: JmpOp.jge,
  jset: JmpOp.jset,
  jne: JmpOp.jne,
  jsgt: JmpOp.jsgt,
  jsge: JmpOp.jsge,
  jlt: JmpOp.jlt,
  jle: JmpOp.jle,
  jslt: JmpOp.jslt,
  jsle: JmpOp.jsle,
};

const sizes: Record<string, number> = { b: Size.b, h: Size.h, w: Size.w, dw: Size.dw };

const atomicOps: Record<string, number> = {
  add: AtomicOp.add,
  or: AtomicOp.or,
  and: AtomicOp.and,
  xor: AtomicOp.xor,
  xchg: AtomicOp.xchg,
  cmpxchg: AtomicOp.cmpxchg,
};

const pseudoByName: Record<string, number> = {
  map_fd: PseudoSource.mapFd,
  map_value: PseudoSource.mapValue,
  btf_id: PseudoSource.btfId,
  func: PseudoSource.func,
  map_idx: PseudoSource.mapIdx,
  map_idx_value: PseudoSource.mapIdxValue,
};

/** Splits `text` (from 0-based index `start` of the line) on top-level commas. */
function splitOperands(src: SourceLine, start: number): Operand[] {
  const text = src.text;
  const out: Operand[] = [];
  let depth = 0;
  let begin = start;
  const push = (end: number) => {
    const raw = text.slice(begin, end);
    const lead = raw.length - raw.trimStart().length;
    const t = raw.trim();
    out.push({ text: t, column: begin + lead + 1 });
  };
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
    else if (c === ',' && depth === 0) {
      push(i);
      begin = i + 1;
    }
  }
  push(text.length);
  if (out.length === 1 && out[0]!.text === '') return [];
  return out;
}

function expectCount(src: SourceLine, mnemonic: string, ops: Operand[], n: number, shape: string): void {
  if (ops.length !== n) {
    throw src.error(
      'operand-count',
      `invalid number of operands for ${mnemonic}: expected ${n} (${shape}), got ${ops.length}`,
      ops[n]?.column ?? src.firstColumn(),
    );
  }
  for (const op of ops) if (op.text === '') throw src.error('syntax', `syntax error: empty operand for ${mnemonic}`, op.column);
}

function reg(src: SourceLine, op: Operand): number {
  return parseRegister(op.text, src, op.column, { percent: true }).reg;
}

function isRegister(text: string): boolean {
  return /^%?r\d+$/.test(text) || text.startsWith('%');
}

function memory(src: SourceLine, op: Operand, mnemonic: string) {
  const m = /^\[(.*)\]$/.exec(op.text);
  if (!m) throw src.error('invalid-operand', `invalid operand for ${mnemonic}: expected a memory operand [REG+OFFSET], got '${op.text}'`, op.column);
  return parseMemoryInner(m[1]!, src, op.column + 1, true);
}

function insn(opcode: number, dst = 0, srcReg = 0, offset = 0, imm = 0): InstructionFields {
  return { opcode, dst, src: srcReg, offset, imm };
}

function jumpTarget(src: SourceLine, op: Operand, into: 'offset' | 'imm'): { value: number; label?: string } {
  const n = parseJumpOffset(op.text, src, op.column, into === 'offset' ? 16 : 32);
  if (n !== undefined) return { value: n };
  if (!isLabel(op.text)) throw src.error('invalid-operand', `invalid jump target: '${op.text}' (expected +N, -N or a label)`, op.column);
  return { value: 0, label: op.text };
}

/** Parses the `call` forms shared by both syntaxes; `llvm` decides what a bare negative number means. */
export function parseCall(src: SourceLine, restStart: number, llvm: boolean): ParsedInsn {
  const rest = src.text.slice(restStart);
  const lead = rest.length - rest.trimStart().length;
  const column = restStart + lead + 1;
  const words = rest.trim().split(/\s+/).filter((w) => w !== '');
  const helper = (imm: number): ParsedInsn => ({ fields: insn(Opcode.call, 0, CallSource.helper, 0, imm) });
  if (words.length === 0) throw src.error('operand-count', 'invalid number of operands for call: expected a helper id, a label or a register', column);
  const [first, second] = words as [string, string | undefined];
  if (words.length === 1) {
    if (/^%?[rw]\d+$/.test(first) || (first.startsWith('%') && !llvm)) {
      const r = parseRegister(first, src, column, { percent: true }).reg;
      return { fields: insn(Opcode.callx, r) };
    }
    const pc = /^pc([+-].*)$/.exec(first);
    if (pc) return { fields: insn(Opcode.call, 0, CallSource.local, 0, parseImm32(pc[1]!, src, column + 2)) };
    if (isNumber(first)) {
      const imm = parseImm32(first, src, column);
      // llvm-objdump prints an unlinked local call as `call -1`; helper ids are never negative.
      if (llvm && imm < 0) return { fields: insn(Opcode.call, 0, CallSource.local, 0, imm) };
      return helper(imm);
    }
    if (isLabel(first)) {
      return { fields: insn(Opcode.call, 0, CallSource.local), target: { label: first, into: 'imm', column, helperFallback: helperId(first) } };
    }
    throw src.error('invalid-operand', `invalid operand for call: '${first}'`, column);
  }
  if (words.length === 2 && second !== undefined) {
    const secondColumn = src.columnOf(second, restStart + lead + first.length);
    switch (first) {
      case 'helper': {
        if (isNumber(second)) return helper(parseImm32(second, src, secondColumn));
        if (/^%?r\d+$/.test(second)) return { fields: insn(Opcode.callx, parseRegister(second, src, secondColumn, { percent: true }).reg) };
        const id = helperId(second);
        if (id === undefined) throw src.error('unknown-helper', `unknown helper: '${second}'`, secondColumn);
        return helper(id);
      }
      case 'local': {
        const t = jumpTarget(src, { text: second, column: secondColumn }, 'imm');
        const parsed: ParsedInsn = { fields: insn(Opcode.call, 0, CallSource.local, 0, t.value) };
        if (t.label) parsed.target = { label: t.label, into: 'imm', column: secondColumn };
        return parsed;
      }
      case 'runtime':
      case 'kfunc':
        return { fields: insn(Opcode.call, 0, CallSource.btfId, 0, parseImm32(second, src, secondColumn)) };
    }
    throw src.error('invalid-operand', `invalid call mode: '${first}' (expected helper, local, runtime or kfunc)`, column);
  }
  throw src.error('operand-count', `invalid number of operands for call: expected at most 2, got ${words.length}`, column);
}

/** Parses one instruction line in the conformance syntax. */
export function parseConformanceLine(src: SourceLine): ParsedInsn {
  const text = src.text;
  const m = /^(\s*)([A-Za-z_][\w.]*)/.exec(text);
  if (!m) throw src.error('syntax', `syntax error: expected a mnemonic, got '${text.trim()}'`);
  const mnemonic = m[2]!.toLowerCase();
  const mColumn = m[1]!.length + 1;
  const restStart = m[0].length;

  if (mnemonic === 'call') return parseCall(src, restStart, false);
  if (mnemonic === 'lock') return parseLock(src, restStart);

  const ops = splitOperands(src, restStart);
  if (mnemonic === 'exit') {
    expectCount(src, mnemonic, ops, 0, 'exit');
    return { fields: insn(Opcode.exit) };
  }
  if (mnemonic === 'ja' || mnemonic === 'ja32' || mnemonic === 'gotol') {
    expectCount(src, mnemonic, ops, 1, `${mnemonic} TARGET`);
    const into = mnemonic === 'ja' ? 'offset' : 'imm';
    const t = jumpTarget(src, ops[0]!, into);
    const fields = into === 'offset' ? insn(Opcode.ja, 0, 0, t.value) : insn(Opcode.gotol, 0, 0, 0, t.value);
    return t.label ? { fields, target: { label: t.label, into, column: ops[0]!.column } } : { fields };
  }

  // Conditional jumps: jeq, jeq32, ...
  const jm = /^(j[a-z]+?)(32)?$/.exec(mnemonic);
  if (jm && jmpOps[jm[1]!] !== undefined) {
    expectCount(src, mnemonic, ops, 3, `${mnemonic} DST, SRC|IMM, TARGET`);
    const cls = jm[2] ? InsnClass.jmp32 : InsnClass.jmp;
    const dst = reg(src, ops[0]!);
    const f = isRegister(ops[1]!.text)
      ? insn(cls | jmpOps[jm[1]!]! | Source.reg, dst, reg(src, ops[1]!))
      : insn(cls | jmpOps[jm[1]!]! | Source.imm, dst, 0, 0, parseImm32(ops[1]!.text, src, ops[1]!.column));
    const t = jumpTarget(src, ops[2]!, 'offset');
    f.offset = t.value;
    return t.label ? { fields: f, target: { label: t.label, into: 'offset', column: ops[2]!.column } } : { fields: f };
  }

  // Byte swaps.
  const sw = /^(le|be|bswap|swap)(16|32|64)$/.exec(mnemonic);
  if (sw) {
    expectCount(src, mnemonic, ops, 1, `${mnemonic} DST`);
    const width = Number(sw[2]);
    const dst = reg(src, ops[0]!);
    if (sw[1] === 'le') return { fields: insn(InsnClass.alu | AluOp.end | Source.imm, dst, 0, 0, width) };
    if (sw[1] === 'be') return { fields: insn(InsnClass.alu | AluOp.end | Source.reg, dst, 0, 0, width) };
    return { fields: insn(InsnClass.alu64 | AluOp.end, dst, 0, 0, width) };
  }

  // neg, neg32, neg64.
  const ng = /^neg(32|64)?$/.exec(mnemonic);
  if (ng) {
    expectCount(src, mnemonic, ops, 1, `${mnemonic} DST`);
    const cls = ng[1] === '32' ? InsnClass.alu : InsnClass.alu64;
    return { fields: insn(cls | AluOp.neg, reg(src, ops[0]!)) };
  }

  // movsx832, movsx1632, movsx864, movsx1664, movsx3264.
  const sx = /^movsx(8|16|32)(32|64)$/.exec(mnemonic);
  if (sx) {
    expectCount(src, mnemonic, ops, 2, `${mnemonic} DST, SRC`);
    const cls = sx[2] === '32' ? InsnClass.alu : InsnClass.alu64;
    return { fields: insn(cls | AluOp.mov | Source.reg, reg(src, ops[0]!), reg(src, ops[1]!), Number(sx[1])) };
  }

  // ALU: add, add32, add64, ...
  const am = /^([a-z]+?)(32|64)?$/.exec(mnemonic);
  if (am && aluOps[am[1]!] !== undefined) {
    expectCount(src, mnemonic, ops, 2, `${mnemonic} DST, SRC|IMM`);
    const cls = am[2] === '32' ? InsnClass.alu : InsnClass.alu64;
    const op = aluOps[am[1]!]!;
    const offset = am[1] === 'sdiv' || am[1] === 'smod' ? 1 : 0;
    const dst = reg(src, ops[0]!);
    if (isRegister(ops[1]!.text)) return { fields: insn(cls | op | Source.reg, dst, reg(src, ops[1]!), offset) };
    return { fields: insn(cls | op | Source.imm, dst, 0, offset, parseImm32(ops[1]!.text, src, ops[1]!.column)) };
  }

  if (mnemonic === 'lddw') {
    const pseudo = parseLddwPseudo(src);
    if (pseudo) return pseudo;
    expectCount(src, mnemonic, ops, 2, 'lddw DST, IMM64');
    const dst = reg(src, ops[0]!);
    const v = ops[1]!;
    if (isNumber(v.text)) {
      const { imm, immHi } = splitImm64(parseImm64(v.text, src, v.column));
      return { fields: { opcode: Opcode.lddw, dst, src: 0, offset: 0, imm, immHi } };
    }
    if (isLabel(v.text)) {
      return { fields: { opcode: Opcode.lddw, dst, src: PseudoSource.mapFd, offset: 0, imm: 0, immHi: 0 }, map: { name: v.text, column: v.column } };
    }
    throw src.error('invalid-operand', `invalid operand for lddw: '${v.text}' (expected a 64-bit number or a map name)`, v.column);
  }

  const ld = /^ld(abs|ind)(b|h|w)$/.exec(mnemonic);
  if (ld) {
    const size = sizes[ld[2]!]!;
    if (ld[1] === 'abs') {
      expectCount(src, mnemonic, ops, 1, `${mnemonic} IMM`);
      return { fields: insn(InsnClass.ld | Mode.abs | size, 0, 0, 0, parseImm32(ops[0]!.text, src, ops[0]!.column)) };
    }
    expectCount(src, mnemonic, ops, 2, `${mnemonic} SRC, IMM`);
    return { fields: insn(InsnClass.ld | Mode.ind | size, 0, reg(src, ops[0]!), 0, parseImm32(ops[1]!.text, src, ops[1]!.column)) };
  }

  const ldx = /^ldx(s?)(b|h|w|dw)$/.exec(mnemonic);
  if (ldx && !(ldx[1] && ldx[2] === 'dw')) {
    expectCount(src, mnemonic, ops, 2, `${mnemonic} DST, [SRC+OFFSET]`);
    const dst = reg(src, ops[0]!);
    const mem = memory(src, ops[1]!, mnemonic);
    const mode = ldx[1] ? Mode.memsx : Mode.mem;
    const parsed: ParsedInsn = { fields: insn(InsnClass.ldx | mode | sizes[ldx[2]!]!, dst, mem.reg, mem.offset) };
    if (mem.field) parsed.field = mem.field;
    return parsed;
  }

  const st = /^st(x?)(b|h|w|dw)$/.exec(mnemonic);
  if (st) {
    const x = st[1] === 'x';
    expectCount(src, mnemonic, ops, 2, `${mnemonic} [DST+OFFSET], ${x ? 'SRC' : 'IMM'}`);
    const mem = memory(src, ops[0]!, mnemonic);
    const size = sizes[st[2]!]!;
    const fields = x
      ? insn(InsnClass.stx | Mode.mem | size, mem.reg, reg(src, ops[1]!), mem.offset)
      : insn(InsnClass.st | Mode.mem | size, mem.reg, 0, mem.offset, parseImm32(ops[1]!.text, src, ops[1]!.column));
    const parsed: ParsedInsn = { fields };
    if (mem.field) parsed.field = mem.field;
    return parsed;
  }

  throw src.error('unknown-mnemonic', `unknown mnemonic '${m[2]}'`, mColumn);
}

/** `lddw %r1, map_value 7, 16`: the pseudo-source form has a third comma operand, handled here. */
export function parseLddwPseudo(src: SourceLine): ParsedInsn | undefined {
  const m = /^(\s*)lddw\b/i.exec(src.text);
  if (!m) return undefined;
  const ops = splitOperands(src, m[0].length);
  if (ops.length < 2) return undefined;
  const pm = /^([a-z_]+)\s+(\S+)$/.exec(ops[1]!.text);
  if (!pm || pseudoByName[pm[1]!] === undefined) return undefined;
  if (ops.length > 3) throw src.error('operand-count', `invalid number of operands for lddw: expected 'lddw DST, ${pm[1]} IMM[, HI]'`, ops[3]!.column);
  const dst = reg(src, ops[0]!);
  const immColumn = src.columnOf(pm[2]!, ops[1]!.column - 1 + pm[1]!.length);
  const imm = parseImm32(pm[2]!, src, immColumn);
  const immHi = ops[2] ? parseImm32(ops[2].text, src, ops[2].column) : 0;
  return { fields: { opcode: Opcode.lddw, dst, src: pseudoByName[pm[1]!]!, offset: 0, imm, immHi } };
}

function parseLock(src: SourceLine, restStart: number): ParsedInsn {
  const text = src.text;
  const rest = text.slice(restStart);
  const bracket = rest.indexOf('[');
  const head = (bracket < 0 ? rest : rest.slice(0, bracket)).trim().split(/\s+/).filter((w) => w !== '');
  const shape = "'lock [fetch] OP [DST+OFFSET], SRC'";
  if (bracket < 0 || head.length === 0 || head.length > 2 || (head.length === 2 && head[0] !== 'fetch')) {
    throw src.error('operand-count', `invalid number of operands for lock: expected ${shape}`, restStart + 1);
  }
  const fetch = head.length === 2;
  const opName = head[head.length - 1]!;
  const om = /^(add|or|and|xor|xchg|cmpxchg)(32|64)?$/.exec(opName);
  if (!om) throw src.error('unknown-mnemonic', `unknown atomic operation '${opName}' (expected add, or, and, xor, xchg or cmpxchg)`, src.columnOf(opName, restStart));
  const ops = splitOperands(src, restStart + bracket);
  if (ops.length !== 2) throw src.error('operand-count', `invalid number of operands for lock: expected ${shape}`, restStart + bracket + 1);
  const mem = memory(src, ops[0]!, 'lock');
  const srcReg = reg(src, ops[1]!);
  let imm = atomicOps[om[1]!]!;
  if (fetch) {
    if (imm === AtomicOp.xchg || imm === AtomicOp.cmpxchg) {
      throw src.error('invalid-operand', `invalid operand for lock: ${om[1]} always fetches; write 'lock ${om[1]}'`, src.columnOf('fetch', restStart));
    }
    imm |= atomicFetch;
  }
  const size = om[2] === '32' ? Size.w : Size.dw;
  return { fields: insn(InsnClass.stx | Mode.atomic | size, mem.reg, srcReg, mem.offset, imm) };
}
