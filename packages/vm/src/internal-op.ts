/**
 * Internal opcodes the predecoder gives instructions whose meaning depends on more than the
 * opcode byte (signed division, sign-extending moves, byte swaps, local calls). They reuse
 * byte values of class `BPF_LD` that the loader refuses on input, so the interpreter still
 * switches on one byte.
 */
export const InternalOp = {
  sdiv32Imm: 0x00,
  sdiv32Reg: 0x08,
  smod32Imm: 0x10,
  smod32Reg: 0x20,
  sdiv64Imm: 0x28,
  sdiv64Reg: 0x30,
  smod64Imm: 0x38,
  smod64Reg: 0x40,
  movsx8To32: 0x48,
  movsx16To32: 0x50,
  movsx8To64: 0x58,
  movsx16To64: 0x60,
  movsx32To64: 0x68,
  /** `lddw` of any kind, resolved to a constant (imm = low half, immHi = high half). */
  loadImm64: 0x18,
  le16: 0x80,
  le32: 0x88,
  le64: 0x90,
  be16: 0x98,
  be32: 0xa0,
  be64: 0xa8,
  bswap16: 0xb0,
  bswap32: 0xb8,
  bswap64: 0xc0,
  callLocal: 0xc8,
  callReg: 0xd0,
  /** Second slot of an `lddw`: never executed (jumps into it are refused at load). */
  lddwTail: 0xf8,
} as const;
export type InternalOp = (typeof InternalOp)[keyof typeof InternalOp];
