import type { InstructionFields } from './instruction.js';
import { AluOp, AtomicOp, classMask, InsnClass, JmpOp, Mode, Opcode, Size, Source } from './opcode.js';

/**
 * RFC 9669 conformance group of an instruction (section 2.4 and the IANA "BPF Instruction Set"
 * registry): `base32` (32-bit ALU, JMP32, `ja`, call, exit, loads and stores up to 32 bits),
 * `base64` (ALU64, 64-bit jumps, `lddw`, 64-bit and sign-extending memory access), `atomic32`/`atomic64`,
 * `divmul32`/`divmul64` (multiplication, division, modulo), `packet` (legacy `BPF_ABS`/`BPF_IND`).
 * `callx` is not in RFC 9669; it is reported as `base32`.
 */
export const ConformanceGroup = {
  base32: 'base32',
  base64: 'base64',
  atomic32: 'atomic32',
  atomic64: 'atomic64',
  divmul32: 'divmul32',
  divmul64: 'divmul64',
  packet: 'packet',
} as const;
export type ConformanceGroup = (typeof ConformanceGroup)[keyof typeof ConformanceGroup];

/**
 * The instruction set version that introduced an instruction, as LLVM's `-mcpu=v1..v4` names them:
 * v2 added `jlt`/`jle`/`jslt`/`jsle`, v3 the `BPF_JMP32` class and the atomics other than `add`,
 * v4 `movsx`, `BPF_MEMSX` loads, unconditional `bswap`, `sdiv`/`smod` and `gotol`.
 */
export const IsaVersion = { v1: 'v1', v2: 'v2', v3: 'v3', v4: 'v4' } as const;
export type IsaVersion = (typeof IsaVersion)[keyof typeof IsaVersion];

/** The conformance group of a (valid) instruction. */
export function conformanceGroupOf(insn: InstructionFields): ConformanceGroup {
  const { opcode } = insn;
  const cls = opcode & classMask;
  switch (cls) {
    case InsnClass.alu:
    case InsnClass.alu64: {
      const op = opcode & 0xf0;
      const wide = cls === InsnClass.alu64;
      if (op === AluOp.mul || op === AluOp.div || op === AluOp.mod) return wide ? 'divmul64' : 'divmul32';
      return wide ? 'base64' : 'base32';
    }
    case InsnClass.jmp: {
      const op = opcode & 0xf0;
      return op === JmpOp.ja || op === JmpOp.call || op === JmpOp.exit ? 'base32' : 'base64';
    }
    case InsnClass.jmp32:
      return 'base32';
    case InsnClass.ld:
      return opcode === Opcode.lddw ? 'base64' : 'packet';
    case InsnClass.ldx:
      return (opcode & 0x18) === Size.dw || (opcode & 0xe0) === Mode.memsx ? 'base64' : 'base32';
    case InsnClass.st:
      return (opcode & 0x18) === Size.dw ? 'base64' : 'base32';
    default:
      if ((opcode & 0xe0) === Mode.atomic) return (opcode & 0x18) === Size.dw ? 'atomic64' : 'atomic32';
      return (opcode & 0x18) === Size.dw ? 'base64' : 'base32';
  }
}

/** The ISA version (v1-v4) that introduced a (valid) instruction. */
export function isaVersionOf(insn: InstructionFields): IsaVersion {
  const { opcode, offset, imm } = insn;
  const cls = opcode & classMask;
  switch (cls) {
    case InsnClass.alu:
    case InsnClass.alu64: {
      const op = opcode & 0xf0;
      if ((op === AluOp.div || op === AluOp.mod) && offset === 1) return 'v4';
      if (op === AluOp.mov && (opcode & Source.reg) !== 0 && offset !== 0) return 'v4';
      if (op === AluOp.end && cls === InsnClass.alu64) return 'v4';
      return 'v1';
    }
    case InsnClass.jmp32:
      return opcode === Opcode.gotol ? 'v4' : 'v3';
    case InsnClass.jmp: {
      const op = opcode & 0xf0;
      if (op === JmpOp.jlt || op === JmpOp.jle || op === JmpOp.jslt || op === JmpOp.jsle) return 'v2';
      return 'v1';
    }
    case InsnClass.ldx:
      return (opcode & 0xe0) === Mode.memsx ? 'v4' : 'v1';
    case InsnClass.stx:
      if ((opcode & 0xe0) === Mode.atomic && imm !== AtomicOp.add) return 'v3';
      return 'v1';
    default:
      return 'v1';
  }
}

/** The highest ISA version any of the instructions needs (v1 for an empty list). */
export function isaVersionOfProgram(insns: readonly InstructionFields[]): IsaVersion {
  let best: IsaVersion = 'v1';
  for (const i of insns) {
    const v = isaVersionOf(i);
    if (v > best) best = v;
  }
  return best;
}

/** The conformance groups a program uses, sorted. */
export function conformanceGroupsOfProgram(insns: readonly InstructionFields[]): ConformanceGroup[] {
  const set = new Set<ConformanceGroup>();
  for (const i of insns) set.add(conformanceGroupOf(i));
  return [...set].sort();
}
