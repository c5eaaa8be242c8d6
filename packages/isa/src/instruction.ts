import { Opcode } from './opcode.js';

/**
 * The raw fields of one instruction (the kernel's `struct bpf_insn`), already sign-interpreted:
 * `offset` is a signed 16-bit number, `imm` a signed 32-bit number. An `lddw` is one instruction that
 * spans two 8-byte slots; `immHi` is the immediate of its second slot (the upper 32 bits, signed), so the
 * 64-bit value is `immHi * 2**32 + (imm >>> 0)`. No BigInt here: see {@link imm64} at the API edge.
 */
export interface InstructionFields {
  /** The opcode byte. */
  opcode: number;
  /** Destination register, 0-10. */
  dst: number;
  /** Source register, 0-10 (or a pseudo source for `lddw` and `call`). */
  src: number;
  /** Signed 16-bit offset. */
  offset: number;
  /** Signed 32-bit immediate (the lower half for `lddw`). */
  imm: number;
  /** `lddw` only: the upper 32 bits, signed 32-bit. */
  immHi?: number;
}

/** An instruction as decoded or assembled: its fields and where it sits in the program. */
export interface Instruction extends InstructionFields {
  /** Index of its first 8-byte slot in the program (an `lddw` takes two slots). */
  insnIndex: number;
  /** Byte offset of its first slot, `insnIndex * 8`. */
  byteOffset: number;
}

/** Number of 8-byte slots the instruction occupies: 2 for `lddw`, else 1. */
export function slotCount(insn: Pick<InstructionFields, 'opcode'>): 1 | 2 {
  return insn.opcode === Opcode.lddw ? 2 : 1;
}

/** The 64-bit immediate of an `lddw` as a BigInt (signed), or the sign-extended imm of any other. */
export function imm64(insn: InstructionFields): bigint {
  const lo = BigInt(insn.imm >>> 0);
  if (insn.opcode !== Opcode.lddw) return BigInt(insn.imm);
  return BigInt.asIntN(64, (BigInt(insn.immHi ?? 0) << 32n) | lo);
}

/** Splits a 64-bit value (signed or unsigned) into the `imm`/`immHi` halves of an `lddw`. */
export function splitImm64(value: bigint): { imm: number; immHi: number } {
  const u = BigInt.asUintN(64, value);
  return { imm: Number(BigInt.asIntN(32, u)), immHi: Number(BigInt.asIntN(32, u >> 32n)) };
}

/** Adds `insnIndex` and `byteOffset` to a list of instruction fields, counting `lddw` as two slots. */
export function placeInstructions(fields: readonly InstructionFields[]): Instruction[] {
  const out: Instruction[] = [];
  let insnIndex = 0;
  for (const f of fields) {
    const insn: Instruction = {
      opcode: f.opcode,
      dst: f.dst,
      src: f.src,
      offset: f.offset,
      imm: f.imm,
      insnIndex,
      byteOffset: insnIndex * 8,
    };
    if (f.opcode === Opcode.lddw) insn.immHi = f.immHi ?? 0;
    out.push(insn);
    insnIndex += slotCount(f);
  }
  return out;
}

/** Total number of 8-byte slots of a program. */
export function slotTotal(insns: readonly Pick<InstructionFields, 'opcode'>[]): number {
  let n = 0;
  for (const i of insns) n += slotCount(i);
  return n;
}
