import { formatInstruction } from '@probeyard/isa';
import { helperName } from './helper-protos.js';
import { Alu, Atomic, Cls, Jmp, Mode, Pseudo, aluOp, cls, isSrcReg, mode, sizeBytes } from './opcodes.js';
import type { Program } from './program.js';

/** The kernel log's spelling of each ALU operation (`+=`, `s>>=`, …). */
export const ALU_TEXT: Record<number, string> = {
  [Alu.ADD]: '+=',
  [Alu.SUB]: '-=',
  [Alu.MUL]: '*=',
  [Alu.DIV]: '/=',
  [Alu.OR]: '|=',
  [Alu.AND]: '&=',
  [Alu.LSH]: '<<=',
  [Alu.RSH]: '>>=',
  [Alu.MOD]: '%=',
  [Alu.XOR]: '^=',
  [Alu.MOV]: '=',
  [Alu.ARSH]: 's>>=',
};

const JMP_TEXT: Record<number, string> = {
  [Jmp.JEQ]: '==',
  [Jmp.JGT]: '>',
  [Jmp.JGE]: '>=',
  [Jmp.JSET]: '&',
  [Jmp.JNE]: '!=',
  [Jmp.JSGT]: 's>',
  [Jmp.JSGE]: 's>=',
  [Jmp.JLT]: '<',
  [Jmp.JLE]: '<=',
  [Jmp.JSLT]: 's<',
  [Jmp.JSLE]: 's<=',
};

const hex = (n: number): string => (n < 0 ? `-0x${(-n).toString(16)}` : `0x${n.toString(16)}`);
const signed = (n: number): string => (n < 0 ? `${n}` : `+${n}`);

/**
 * The text of instruction `i` in the style of the kernel verifier's log (`r1 = *(u32 *)(r1 +8)`,
 * `if r1 > 0x5 goto pc+2`). Used for diagnostics; an unknown opcode prints as `(xx) ???`.
 */
export function formatInsn(p: Program, i: number): string {
  const op = p.opcode[i]!;
  const dst = p.dst[i]!;
  const src = p.src[i]!;
  const off = p.off[i]!;
  const imm = p.imm[i]!;
  const c = cls(op);
  switch (c) {
    case Cls.ALU:
    case Cls.ALU64: {
      const r = c === Cls.ALU64 ? 'r' : 'w';
      const o = aluOp(op);
      const s = isSrcReg(op) ? `${r}${src}` : `${imm}`;
      if (o === Alu.NEG) return `${r}${dst} = -${r}${dst}`;
      if (o === Alu.END) {
        const kind = c === Cls.ALU64 ? 'bswap' : isSrcReg(op) ? 'be' : 'le';
        return `r${dst} = ${kind}${imm} r${dst}`;
      }
      if (o === Alu.MOV && off !== 0 && isSrcReg(op)) return `${r}${dst} = (s${off})${r}${src}`;
      if ((o === Alu.DIV || o === Alu.MOD) && off === 1) return `${r}${dst} s${ALU_TEXT[o]} ${s}`;
      const t = ALU_TEXT[o];
      return t === undefined ? `(${op.toString(16).padStart(2, '0')}) ???` : `${r}${dst} ${t} ${s}`;
    }
    case Cls.LDX: {
      const sz = sizeBytes(op) * 8;
      const sx = mode(op) === Mode.MEMSX ? 's' : 'u';
      return `r${dst} = *(${sx}${sz} *)(r${src} ${signed(off)})`;
    }
    case Cls.ST:
      return `*(u${sizeBytes(op) * 8} *)(r${dst} ${signed(off)}) = ${imm}`;
    case Cls.STX: {
      const sz = sizeBytes(op) * 8;
      if (mode(op) === Mode.ATOMIC) {
        const w = sz === 64 ? '64' : '';
        const addr = `(u${sz} *)(r${dst} ${signed(off)})`;
        if (imm === Atomic.XCHG) return `r${src} = atomic${w}_xchg(${addr}, r${src})`;
        if (imm === Atomic.CMPXCHG) return `r0 = atomic${w}_cmpxchg(${addr}, r0, r${src})`;
        const name = { [Atomic.ADD]: 'add', [Atomic.OR]: 'or', [Atomic.AND]: 'and', [Atomic.XOR]: 'xor' }[
          imm & ~Atomic.FETCH
        ];
        if (imm & Atomic.FETCH) return `r${src} = atomic${w}_fetch_${name}(${addr}, r${src})`;
        const sym = { add: '+=', or: '|=', and: '&=', xor: '^=' }[name ?? 'add'];
        return `lock *${addr} ${sym} r${src}`;
      }
      return `*(u${sz} *)(r${dst} ${signed(off)}) = r${src}`;
    }
    case Cls.LD: {
      if (op === 0x18) {
        const hi = i + 1 < p.length ? p.imm[i + 1]! : 0;
        if (src === Pseudo.MAP_FD || src === Pseudo.MAP_IDX) return `r${dst} = map[fd:${imm}]`;
        if (src === Pseudo.MAP_VALUE || src === Pseudo.MAP_IDX_VALUE) return `r${dst} = map[fd:${imm}]+${hi}`;
        const v = (BigInt(hi >>> 0) << 32n) | BigInt(imm >>> 0);
        return `r${dst} = 0x${v.toString(16)}`;
      }
      const sz = sizeBytes(op) * 8;
      if (mode(op) === Mode.ABS) return `r0 = *(u${sz} *)skb[${imm}]`;
      if (mode(op) === Mode.IND) return `r0 = *(u${sz} *)skb[r${src} + ${imm}]`;
      return `(${op.toString(16).padStart(2, '0')}) ???`;
    }
    case Cls.JMP:
    case Cls.JMP32: {
      const o = aluOp(op);
      if (o === Jmp.JA) return c === Cls.JMP32 ? `gotol pc${signed(imm)}` : `goto pc${signed(off)}`;
      if (o === Jmp.EXIT) return 'exit';
      if (o === Jmp.CALL) {
        if (src === 1) return `call pc${signed(imm)}`;
        if (src === 2) return `call kernel-function#${imm}`;
        return `call ${helperName(imm)}#${imm}`;
      }
      const r = c === Cls.JMP32 ? 'w' : 'r';
      const t = JMP_TEXT[o];
      if (t === undefined) return `(${op.toString(16).padStart(2, '0')}) ???`;
      const s = isSrcReg(op) ? `${r}${src}` : hex(imm);
      return `if ${r}${dst} ${t} ${s} goto pc${signed(off)}`;
    }
  }
  return `(${op.toString(16).padStart(2, '0')}) ???`;
}

/**
 * The text of instruction `i` as the isa package's disassembler writes it (LLVM syntax,
 * `r0 = *(u32 *)(r1 + 8)`), or the kernel-style text when the encoding is one it refuses.
 */
export function insnTextOf(p: Program, i: number): string {
  try {
    return formatInstruction({
      opcode: p.opcode[i]!,
      dst: p.dst[i]!,
      src: p.src[i]!,
      offset: p.off[i]!,
      imm: p.imm[i]!,
      immHi: p.opcode[i] === 0x18 && i + 1 < p.length ? p.imm[i + 1]! : 0,
    });
  } catch {
    return formatInsn(p, i);
  }
}
