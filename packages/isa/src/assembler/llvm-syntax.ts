// The LLVM BPF syntax that llvm-objdump prints: `r0 = *(u32 *)(r1 + 4)`, `if r1 > 3 goto +2`,
// `r1 = 0x1234 ll`, `call 14`, `w0 += 1`, `lock *(u64 *)(r10 - 8) += r1`,
// `r0 = atomic_fetch_add((u64 *)(r10 - 8), r0)`, `r1 = bswap16 r1`, `r0 = (s8)r1`, `r0 s/= 3`.
import type { InstructionFields } from '../instruction.js';
import { splitImm64 } from '../instruction.js';
import { AluOp, AtomicOp, atomicFetch, InsnClass, JmpOp, Mode, Opcode, Size, Source } from '../opcode.js';
import { parseCall } from './conformance-syntax.js';
import type { ParsedInsn, SourceLine } from './line.js';
import { parseMemoryInner } from './memory.js';
import { isLabel, isNumber, parseImm32, parseImm64, parseJumpOffset, parseRegister } from './numbers.js';

const aluByOp: Record<string, { op: number; signed?: boolean }> = {
  '+=': { op: AluOp.add },
  '-=': { op: AluOp.sub },
  '*=': { op: AluOp.mul },
  '/=': { op: AluOp.div },
  's/=': { op: AluOp.div, signed: true },
  '|=': { op: AluOp.or },
  '&=': { op: AluOp.and },
  '<<=': { op: AluOp.lsh },
  '>>=': { op: AluOp.rsh },
  '%=': { op: AluOp.mod },
  's%=': { op: AluOp.mod, signed: true },
  '^=': { op: AluOp.xor },
  's>>=': { op: AluOp.arsh },
};

const jmpByOp: Record<string, number> = {
  '==': JmpOp.jeq,
  '>': JmpOp.jgt,
  '>=': JmpOp.jge,
  '&': JmpOp.jset,
  '!=': JmpOp.jne,
  's>': JmpOp.jsgt,
  's>=': JmpOp.jsge,
  '<': JmpOp.jlt,
  '<=': JmpOp.jle,
  's<': JmpOp.jslt,
  's<=': JmpOp.jsle,
};

const atomicByOp: Record<string, number> = { '+=': AtomicOp.add, '|=': AtomicOp.or, '&=': AtomicOp.and, '^=': AtomicOp.xor };
const atomicByName: Record<string, number> = { add: AtomicOp.add, or: AtomicOp.or, and: AtomicOp.and, xor: AtomicOp.xor };
const sizeByBits: Record<string, number> = { '8': Size.b, '16': Size.h, '32': Size.w, '64': Size.dw };

// Pieces of the patterns. Every group is captured so columns come from RegExp match indices (flag d).
const R = '([rw]\\d+)';
const V = '(\\S+?)'; // register or number, checked afterwards
const MEM = '\\(([^()]*)\\)';

interface Form {
  re: RegExp;
  build: (m: RegExpExecArray, ctx: Ctx) => ParsedInsn;
}

interface Ctx {
  src: SourceLine;
  /** 1-based column of group `i` of the match. */
  col: (m: RegExpExecArray, i: number) => number;
}

function insn(opcode: number, dst = 0, srcReg = 0, offset = 0, imm = 0): InstructionFields {
  return { opcode, dst, src: srcReg, offset, imm };
}

function regOf(ctx: Ctx, m: RegExpExecArray, i: number): { reg: number; w: boolean } {
  return parseRegister(m[i]!, ctx.src, ctx.col(m, i), { w: true });
}

function target(ctx: Ctx, m: RegExpExecArray, i: number, into: 'offset' | 'imm', fields: InstructionFields): ParsedInsn {
  const text = m[i]!;
  const n = parseJumpOffset(text, ctx.src, ctx.col(m, i), into === 'offset' ? 16 : 32);
  if (n !== undefined) {
    if (into === 'offset') fields.offset = n;
    else fields.imm = n;
    return { fields };
  }
  if (!isLabel(text)) throw ctx.src.error('invalid-operand', `invalid jump target: '${text}' (expected +N, -N or a label)`, ctx.col(m, i));
  return { fields, target: { label: text, into, column: ctx.col(m, i) } };
}

function memOperand(ctx: Ctx, m: RegExpExecArray, i: number) {
  return parseMemoryInner(m[i]!, ctx.src, ctx.col(m, i), false);
}

function sameWidth(ctx: Ctx, m: RegExpExecArray, a: { w: boolean }, b: { w: boolean }, i: number): void {
  if (a.w !== b.w) throw ctx.src.error('invalid-operand', `invalid operand: '${m[i]}' mixes r and w registers`, ctx.col(m, i));
}

const forms: Form[] = [
  {
    re: /^\s*(exit)\s*$/d,
    build: () => ({ fields: insn(Opcode.exit) }),
  },
  {
    re: /^\s*(goto|gotol)\s+(\S+)\s*(?:<[^>]*>)?\s*$/d,
    build: (m, ctx) =>
      m[1] === 'goto' ? target(ctx, m, 2, 'offset', insn(Opcode.ja)) : target(ctx, m, 2, 'imm', insn(Opcode.gotol)),
  },
  {
    re: /^\s*callx\s+(\S+)\s*$/d,
    build: (m, ctx) => ({ fields: insn(Opcode.callx, regOf(ctx, m, 1).reg) }),
  },
  {
    re: new RegExp(`^\\s*if\\s+${R}\\s*(==|!=|s>=|s<=|s>|s<|>=|<=|>|<|&)\\s*${V}\\s+goto\\s+(\\S+)\\s*(?:<[^>]*>)?\\s*$`, 'd'),
    build: (m, ctx) => {
      const dst = regOf(ctx, m, 1);
      const cls = dst.w ? InsnClass.jmp32 : InsnClass.jmp;
      const op = jmpByOp[m[2]!]!;
      let fields: InstructionFields;
      if (/^[rw]\d+$/.test(m[3]!)) {
        const s = regOf(ctx, m, 3);
        sameWidth(ctx, m, dst, s, 3);
        fields = insn(cls | op | Source.reg, dst.reg, s.reg);
      } else fields = insn(cls | op | Source.imm, dst.reg, 0, 0, parseImm32(m[3]!, ctx.src, ctx.col(m, 3)));
      return target(ctx, m, 4, 'offset', fields);
    },
  },
  {
    re: /^\s*ld_pseudo\s+(\S+?)\s*,\s*(\S+?)\s*,\s*(\S+?)\s*(?:,\s*(\S+?))?\s*$/d,
    build: (m, ctx) => {
      const dst = regOf(ctx, m, 1).reg;
      const pseudo = parseImm32(m[2]!, ctx.src, ctx.col(m, 2));
      if (pseudo < 1 || pseudo > 6) throw ctx.src.error('invalid-operand', `invalid pseudo source: ${pseudo} (1-6)`, ctx.col(m, 2));
      const imm = parseImm32(m[3]!, ctx.src, ctx.col(m, 3));
      const immHi = m[4] ? parseImm32(m[4], ctx.src, ctx.col(m, 4)) : 0;
      return { fields: { opcode: Opcode.lddw, dst, src: pseudo, offset: 0, imm, immHi } };
    },
  },
  {
    re: new RegExp(`^\\s*lock\\s+\\*\\(u(32|64)\\s*\\*\\)\\s*${MEM}\\s*(\\+=|\\|=|&=|\\^=)\\s*${R}\\s*$`, 'd'),
    build: (m, ctx) => {
      const mem = memOperand(ctx, m, 2);
      const size = m[1] === '32' ? Size.w : Size.dw;
      return { fields: insn(InsnClass.stx | Mode.atomic | size, mem.reg, regOf(ctx, m, 4).reg, mem.offset, atomicByOp[m[3]!]!) };
    },
  },
  {
    re: new RegExp(`^\\s*\\*\\(u(8|16|32|64)\\s*\\*\\)\\s*${MEM}\\s*=\\s*(\\S+)\\s*$`, 'd'),
    build: (m, ctx) => {
      const mem = memOperand(ctx, m, 2);
      const size = sizeByBits[m[1]!]!;
      const value = m[3]!;
      const fields = /^[rw]\d+$/.test(value)
        ? insn(InsnClass.stx | Mode.mem | size, mem.reg, regOf(ctx, m, 3).reg, mem.offset)
        : insn(InsnClass.st | Mode.mem | size, mem.reg, 0, mem.offset, parseImm32(value, ctx.src, ctx.col(m, 3)));
      const parsed: ParsedInsn = { fields };
      if (mem.field) parsed.field = mem.field;
      return parsed;
    },
  },
  {
    re: new RegExp(`^\\s*${R}\\s*=\\s*\\*\\(([us])(8|16|32|64)\\s*\\*\\)\\s*${MEM}\\s*$`, 'd'),
    build: (m, ctx) => {
      const dst = regOf(ctx, m, 1).reg;
      const mem = memOperand(ctx, m, 4);
      const signed = m[2] === 's';
      if (signed && m[3] === '64') throw ctx.src.error('invalid-operand', 'invalid operand: there is no sign-extending 64-bit load, use u64', ctx.col(m, 2));
      const parsed: ParsedInsn = {
        fields: insn(InsnClass.ldx | (signed ? Mode.memsx : Mode.mem) | sizeByBits[m[3]!]!, dst, mem.reg, mem.offset),
      };
      if (mem.field) parsed.field = mem.field;
      return parsed;
    },
  },
  {
    re: /^\s*r0\s*=\s*\*\(u(8|16|32)\s*\*\)\s*skb\[\s*([^\]]*?)\s*\]\s*$/d,
    build: (m, ctx) => {
      const size = sizeByBits[m[1]!]!;
      const inner = m[2]!;
      if (isNumber(inner)) return { fields: insn(InsnClass.ld | Mode.abs | size, 0, 0, 0, parseImm32(inner, ctx.src, ctx.col(m, 2))) };
      const im = /^([rw]\d+)\s*(?:([+-])\s*(\S+))?$/.exec(inner);
      if (!im) throw ctx.src.error('invalid-operand', `invalid packet offset: '${inner}'`, ctx.col(m, 2));
      const srcReg = parseRegister(im[1]!, ctx.src, ctx.col(m, 2)).reg;
      const imm = im[3] ? parseImm32(`${im[2]}${im[3]}`, ctx.src, ctx.src.columnOf(im[3], ctx.col(m, 2) - 1)) : 0;
      return { fields: insn(InsnClass.ld | Mode.ind | size, 0, srcReg, 0, imm) };
    },
  },
  {
    re: new RegExp(`^\\s*${R}\\s*=\\s*atomic_fetch_(add|or|and|xor)\\(\\s*\\(u(32|64)\\s*\\*\\)\\s*${MEM}\\s*,\\s*${R}\\s*\\)\\s*$`, 'd'),
    build: (m, ctx) => {
      const dst = regOf(ctx, m, 1);
      const s = regOf(ctx, m, 5);
      if (dst.reg !== s.reg) throw ctx.src.error('invalid-operand', `invalid operand: atomic_fetch_${m[2]} returns into its source register (r${s.reg})`, ctx.col(m, 1));
      const mem = memOperand(ctx, m, 4);
      const size = m[3] === '32' ? Size.w : Size.dw;
      return { fields: insn(InsnClass.stx | Mode.atomic | size, mem.reg, s.reg, mem.offset, atomicByName[m[2]!]! | atomicFetch) };
    },
  },
  {
    re: new RegExp(`^\\s*${R}\\s*=\\s*(xchg_64|xchg32_32)\\(\\s*([^,()]*)\\s*,\\s*${R}\\s*\\)\\s*$`, 'd'),
    build: (m, ctx) => {
      const dst = regOf(ctx, m, 1);
      const s = regOf(ctx, m, 4);
      if (dst.reg !== s.reg) throw ctx.src.error('invalid-operand', `invalid operand: ${m[2]} returns into its source register (r${s.reg})`, ctx.col(m, 1));
      const mem = memOperand(ctx, m, 3);
      const size = m[2] === 'xchg_64' ? Size.dw : Size.w;
      return { fields: insn(InsnClass.stx | Mode.atomic | size, mem.reg, s.reg, mem.offset, AtomicOp.xchg) };
    },
  },
  {
    re: new RegExp(`^\\s*${R}\\s*=\\s*(cmpxchg_64|cmpxchg32_32)\\(\\s*([^,()]*)\\s*,\\s*${R}\\s*,\\s*${R}\\s*\\)\\s*$`, 'd'),
    build: (m, ctx) => {
      const dst = regOf(ctx, m, 1);
      const cmp = regOf(ctx, m, 4);
      if (dst.reg !== 0 || cmp.reg !== 0) throw ctx.src.error('invalid-operand', `invalid operand: ${m[2]} compares with and returns into r0`, ctx.col(m, 1));
      const mem = memOperand(ctx, m, 3);
      const size = m[2] === 'cmpxchg_64' ? Size.dw : Size.w;
      return { fields: insn(InsnClass.stx | Mode.atomic | size, mem.reg, regOf(ctx, m, 5).reg, mem.offset, AtomicOp.cmpxchg) };
    },
  },
  {
    re: new RegExp(`^\\s*${R}\\s*=\\s*\\(s(8|16|32)\\)\\s*${R}\\s*$`, 'd'),
    build: (m, ctx) => {
      const dst = regOf(ctx, m, 1);
      const s = regOf(ctx, m, 3);
      sameWidth(ctx, m, dst, s, 3);
      if (dst.w && m[2] === '32') throw ctx.src.error('invalid-operand', 'invalid operand: 32-bit movsx takes s8 or s16', ctx.col(m, 2));
      return { fields: insn((dst.w ? InsnClass.alu : InsnClass.alu64) | AluOp.mov | Source.reg, dst.reg, s.reg, Number(m[2])) };
    },
  },
  {
    re: new RegExp(`^\\s*${R}\\s*=\\s*(be|le|bswap)(16|32|64)\\s+${R}\\s*$`, 'd'),
    build: (m, ctx) => {
      const dst = regOf(ctx, m, 1).reg;
      if (regOf(ctx, m, 4).reg !== dst) throw ctx.src.error('invalid-operand', `invalid operand: ${m[2]}${m[3]} works in place (r${dst} = ${m[2]}${m[3]} r${dst})`, ctx.col(m, 4));
      const width = Number(m[3]);
      if (m[2] === 'bswap') return { fields: insn(InsnClass.alu64 | AluOp.end, dst, 0, 0, width) };
      return { fields: insn(InsnClass.alu | AluOp.end | (m[2] === 'be' ? Source.reg : Source.imm), dst, 0, 0, width) };
    },
  },
  {
    re: new RegExp(`^\\s*${R}\\s*=\\s*-\\s*${R}\\s*$`, 'd'),
    build: (m, ctx) => {
      const dst = regOf(ctx, m, 1);
      const s = regOf(ctx, m, 2);
      sameWidth(ctx, m, dst, s, 2);
      if (dst.reg !== s.reg) throw ctx.src.error('invalid-operand', `invalid operand: negation works in place (r${dst.reg} = -r${dst.reg})`, ctx.col(m, 2));
      return { fields: insn((dst.w ? InsnClass.alu : InsnClass.alu64) | AluOp.neg, dst.reg) };
    },
  },
  {
    re: new RegExp(`^\\s*${R}\\s*=\\s*(\\S+)\\s+ll\\s*$`, 'd'),
    build: (m, ctx) => {
      const dst = regOf(ctx, m, 1);
      if (dst.w) throw ctx.src.error('invalid-operand', 'invalid operand: lddw loads a 64-bit register', ctx.col(m, 1));
      if (isNumber(m[2]!)) {
        const { imm, immHi } = splitImm64(parseImm64(m[2]!, ctx.src, ctx.col(m, 2)));
        return { fields: { opcode: Opcode.lddw, dst: dst.reg, src: 0, offset: 0, imm, immHi } };
      }
      if (!isLabel(m[2]!)) throw ctx.src.error('invalid-operand', `invalid operand for lddw: '${m[2]}'`, ctx.col(m, 2));
      return { fields: { opcode: Opcode.lddw, dst: dst.reg, src: 1, offset: 0, imm: 0, immHi: 0 }, map: { name: m[2]!, column: ctx.col(m, 2) } };
    },
  },
  {
    re: new RegExp(`^\\s*${R}\\s*(=|\\+=|-=|\\*=|/=|s/=|%=|s%=|\\|=|&=|<<=|>>=|s>>=|\\^=)\\s*(\\S+)\\s*$`, 'd'),
    build: (m, ctx) => {
      const dst = regOf(ctx, m, 1);
      const cls = dst.w ? InsnClass.alu : InsnClass.alu64;
      const spec = m[2] === '=' ? { op: AluOp.mov } : aluByOp[m[2]!]!;
      const offset = spec.signed ? 1 : 0;
      if (/^[rw]\d+$/.test(m[3]!)) {
        const s = regOf(ctx, m, 3);
        sameWidth(ctx, m, dst, s, 3);
        return { fields: insn(cls | spec.op | Source.reg, dst.reg, s.reg, offset) };
      }
      return { fields: insn(cls | spec.op | Source.imm, dst.reg, 0, offset, parseImm32(m[3]!, ctx.src, ctx.col(m, 3))) };
    },
  },
];

/** Whether a line can only be LLVM syntax (used by syntax auto-detection). */
export function looksLlvm(text: string): boolean {
  return /=/.test(text) || /^\s*(if|goto|gotol|callx|ld_pseudo)\b/.test(text) || /^\s*lock\s+\*/.test(text) || /^\s*call\s+(pc[+-]|kfunc\b)/.test(text);
}

/** Parses one instruction line in the LLVM syntax. */
export function parseLlvmLine(src: SourceLine): ParsedInsn {
  const text = src.text;
  const callMatch = /^(\s*)call\b/.exec(text);
  if (callMatch) return parseCall(src, callMatch[0].length, true);
  const ctx: Ctx = {
    src,
    col: (m, i) => (m.indices?.[i]?.[0] ?? 0) + 1,
  };
  for (const form of forms) {
    const m = form.re.exec(text);
    if (m) return form.build(m, ctx);
  }
  const word = /^\s*([A-Za-z_]\w*)/.exec(text);
  if (word && !/^[rw]\d+$/.test(word[1]!) && !/[=(*]/.test(text)) {
    throw src.error('unknown-mnemonic', `unknown mnemonic '${word[1]}'`);
  }
  throw src.error('syntax', `syntax error: cannot parse '${text.trim()}' as an LLVM-syntax instruction`);
}

