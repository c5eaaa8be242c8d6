import { InternalOp } from '../internal-op.js';

/**
 * The interpreter's dense instruction ids. The predecoder gives every slot one id that names
 * exactly one behaviour (`add64Imm`, `jneReg`, `ldxb`, …), so the interpreter's single `switch`
 * has no second dispatch inside a case and V8 compiles it to one jump table. The `switch` in
 * interpret.ts spells these ids as numeric literals (a non-literal `case` label would turn the rest of
 * the switch into a chain of comparisons); its comments name them.
 *
 * Ids {@link Code.addImmJneImm} to {@link Code.addImmJltReg} are superinstructions: common pairs of adjacent
 * instructions executed by one case ({@link Code.addImmAddImmJneImm} a triple, {@link Code.scanLdxb},
 * {@link Code.scanUpLdxb} and their sizes the five or four slots of a scanning loop). Only the first slot of a pair gets the fused id; the
 * second keeps its own, so a jump into the middle of a pair still runs it alone. A fused case
 * counts two instructions and stops exactly where the pair would (a fault in the first half
 * leaves the pc and count of the first).
 */
export const Code = {
  invalid: 0,
  // ALU64
  add64Imm: 1,
  add64Reg: 2,
  sub64Imm: 3,
  sub64Reg: 4,
  mul64Imm: 5,
  mul64Reg: 6,
  div64Imm: 7,
  div64Reg: 8,
  mod64Imm: 9,
  mod64Reg: 10,
  or64Imm: 11,
  or64Reg: 12,
  and64Imm: 13,
  and64Reg: 14,
  lsh64Imm: 15,
  lsh64Reg: 16,
  rsh64Imm: 17,
  rsh64Reg: 18,
  neg64: 19,
  xor64Imm: 20,
  xor64Reg: 21,
  mov64Imm: 22,
  mov64Reg: 23,
  arsh64Imm: 24,
  arsh64Reg: 25,
  sdiv64Imm: 26,
  sdiv64Reg: 27,
  smod64Imm: 28,
  smod64Reg: 29,
  movsx8To64: 30,
  movsx16To64: 31,
  movsx32To64: 32,
  loadImm64: 33,
  // ALU (32-bit)
  add32Imm: 34,
  add32Reg: 35,
  sub32Imm: 36,
  sub32Reg: 37,
  mul32Imm: 38,
  mul32Reg: 39,
  div32Imm: 40,
  div32Reg: 41,
  mod32Imm: 42,
  mod32Reg: 43,
  or32Imm: 44,
  or32Reg: 45,
  and32Imm: 46,
  and32Reg: 47,
  lsh32Imm: 48,
  lsh32Reg: 49,
  rsh32Imm: 50,
  rsh32Reg: 51,
  neg32: 52,
  xor32Imm: 53,
  xor32Reg: 54,
  mov32Imm: 55,
  mov32Reg: 56,
  arsh32Imm: 57,
  arsh32Reg: 58,
  sdiv32Imm: 59,
  sdiv32Reg: 60,
  smod32Imm: 61,
  smod32Reg: 62,
  movsx8To32: 63,
  movsx16To32: 64,
  le16: 65,
  le32: 66,
  le64: 67,
  swap16: 68,
  swap32: 69,
  swap64: 70,
  // loads and stores
  ldxw: 71,
  ldxh: 72,
  ldxb: 73,
  ldxdw: 74,
  ldxsw: 75,
  ldxsh: 76,
  ldxsb: 77,
  stw: 78,
  sth: 79,
  stb: 80,
  stdw: 81,
  stxw: 82,
  stxh: 83,
  stxb: 84,
  stxdw: 85,
  atomic32: 86,
  atomic64: 87,
  // jumps: JMP (64-bit compares), then JMP32 in the same order at +22
  ja: 88,
  jeqImm: 89,
  jeqReg: 90,
  jgtImm: 91,
  jgtReg: 92,
  jgeImm: 93,
  jgeReg: 94,
  jsetImm: 95,
  jsetReg: 96,
  jneImm: 97,
  jneReg: 98,
  jsgtImm: 99,
  jsgtReg: 100,
  jsgeImm: 101,
  jsgeReg: 102,
  jltImm: 103,
  jltReg: 104,
  jleImm: 105,
  jleReg: 106,
  jsltImm: 107,
  jsltReg: 108,
  jsleImm: 109,
  jsleReg: 110,
  jeq32Imm: 111,
  jeq32Reg: 112,
  jgt32Imm: 113,
  jgt32Reg: 114,
  jge32Imm: 115,
  jge32Reg: 116,
  jset32Imm: 117,
  jset32Reg: 118,
  jne32Imm: 119,
  jne32Reg: 120,
  jsgt32Imm: 121,
  jsgt32Reg: 122,
  jsge32Imm: 123,
  jsge32Reg: 124,
  jlt32Imm: 125,
  jlt32Reg: 126,
  jle32Imm: 127,
  jle32Reg: 128,
  jslt32Imm: 129,
  jslt32Reg: 130,
  jsle32Imm: 131,
  jsle32Reg: 132,
  callHelper: 133,
  callReg: 134,
  callLocal: 135,
  exit: 136,
  // superinstructions (first slot of a pair)
  /** `rX += imm; if rX != imm2 goto` (a loop counter). */
  addImmJneImm: 137,
  /** `rX += imm; if rX == imm2 goto`. */
  addImmJeqImm: 138,
  /** `rX = rY; rX >>= imm` (field extraction, hashing). */
  movRshImm: 139,
  /** `rX = rY; rX <<= imm`. */
  movLshImm: 140,
  /** `rX = *(u8 *)(rY + off); rZ += rX` (load and accumulate). */
  ldxbAdd: 141,
  /** `rX = *(u32 *)(rY + off); rZ += rX`. */
  ldxwAdd: 142,
  /** `rX = *(u64 *)(rY + off); rZ += rX`. */
  ldxdwAdd: 143,
  /** `rX += imm; if rX < rY goto` (an up-counting loop, unsigned). */
  addImmJltReg: 144,
  /** `gotol` (JMP32 `ja`: the offset is in imm); after the superinstructions, its id came last. */
  gotol: 145,
  /**
   * Never a slot's id: the interpreter's own step after a `bpf_loop` callback returned (the next
   * iteration, or the end of the loop), reached from `exit` when the frame's return is marked.
   */
  loopNext: 146,
  /**
   * `rA += imm; rB += imm2; if rB != imm3 goto` (a pointer or index stepped beside a counted-down
   * loop counter: the last three slots of a byte loop): an add-imm followed by a fused
   * {@link addImmJneImm} pair, one case for the three (the second and third slots keep their codes).
   */
  addImmAddImmJneImm: 147,
  /**
   * The canonical scanning loop's five slots, `rX = *(u8 *)(rY + off); rZ += rX; rA += k;
   * rB += k2; if rB != c goto` (load, accumulate, advance, count down, branch: a load + add pair
   * before an {@link addImmAddImmJneImm} triple), any registers and immediates, one case. In the
   * usual shape (the pointer advanced; pointer, loaded value, sum and counter four registers),
   * while the branch goes back to this slot, the case loops by itself (one dispatch per loop, not
   * per iteration), counting five instructions and checking the budget per iteration as the jump
   * would; in another it runs the load + add pair alone. Slots two to five keep their codes. The
   * u16, u32 and u64 loads follow.
   */
  scanLdxb: 148,
  /** {@link scanLdxb} with `*(u16 *)`. */
  scanLdxh: 149,
  /** {@link scanLdxb} with `*(u32 *)`. */
  scanLdxw: 150,
  /** {@link scanLdxb} with `*(u64 *)`. */
  scanLdxdw: 151,
  /**
   * The up-counting scanning loop's four slots, `rX = *(u8 *)(rY + off); rZ += rX; rA += k;
   * if rA < rE goto` (a load + add pair before an {@link addImmJltReg} pair: a pointer or index
   * stepped towards an end register), run as {@link scanLdxb}. The u16, u32 and u64 loads follow.
   */
  scanUpLdxb: 152,
  /** {@link scanUpLdxb} with `*(u16 *)`. */
  scanUpLdxh: 153,
  /** {@link scanUpLdxb} with `*(u32 *)`. */
  scanUpLdxw: 154,
  /** {@link scanUpLdxb} with `*(u64 *)`. */
  scanUpLdxdw: 155,
} as const;
export type Code = (typeof Code)[keyof typeof Code];

// class ALU / ALU64 operation (high nibble) → the id of its imm form; the reg form is id + 1
const ALU64_IMM = new Map<number, number>([
  [0x00, Code.add64Imm],
  [0x10, Code.sub64Imm],
  [0x20, Code.mul64Imm],
  [0x30, Code.div64Imm],
  [0x40, Code.or64Imm],
  [0x50, Code.and64Imm],
  [0x60, Code.lsh64Imm],
  [0x70, Code.rsh64Imm],
  [0x90, Code.mod64Imm],
  [0xa0, Code.xor64Imm],
  [0xb0, Code.mov64Imm],
  [0xc0, Code.arsh64Imm],
]);
const ALU32_IMM = new Map<number, number>([
  [0x00, Code.add32Imm],
  [0x10, Code.sub32Imm],
  [0x20, Code.mul32Imm],
  [0x30, Code.div32Imm],
  [0x40, Code.or32Imm],
  [0x50, Code.and32Imm],
  [0x60, Code.lsh32Imm],
  [0x70, Code.rsh32Imm],
  [0x90, Code.mod32Imm],
  [0xa0, Code.xor32Imm],
  [0xb0, Code.mov32Imm],
  [0xc0, Code.arsh32Imm],
]);
// class JMP operation (high nibble) → the id of its imm form (JMP32: + 22; reg form: + 1)
const JMP_IMM = new Map<number, number>([
  [0x10, Code.jeqImm],
  [0x20, Code.jgtImm],
  [0x30, Code.jgeImm],
  [0x40, Code.jsetImm],
  [0x50, Code.jneImm],
  [0x60, Code.jsgtImm],
  [0x70, Code.jsgeImm],
  [0xa0, Code.jltImm],
  [0xb0, Code.jleImm],
  [0xc0, Code.jsltImm],
  [0xd0, Code.jsleImm],
]);
const LDX = new Map<number, number>([
  [0x61, Code.ldxw],
  [0x69, Code.ldxh],
  [0x71, Code.ldxb],
  [0x79, Code.ldxdw],
  [0x81, Code.ldxsw],
  [0x89, Code.ldxsh],
  [0x91, Code.ldxsb],
]);
const STORE = new Map<number, number>([
  [0x62, Code.stw],
  [0x6a, Code.sth],
  [0x72, Code.stb],
  [0x7a, Code.stdw],
  [0x63, Code.stxw],
  [0x6b, Code.stxh],
  [0x73, Code.stxb],
  [0x7b, Code.stxdw],
  [0xc3, Code.atomic32],
  [0xdb, Code.atomic64],
]);
// built on first use
let internalCodes: Map<number, number> | undefined;
const internalTable = (): Map<number, number> =>
  new Map<number, number>([
    [InternalOp.sdiv32Imm, Code.sdiv32Imm],
    [InternalOp.sdiv32Reg, Code.sdiv32Reg],
    [InternalOp.smod32Imm, Code.smod32Imm],
    [InternalOp.smod32Reg, Code.smod32Reg],
    [InternalOp.sdiv64Imm, Code.sdiv64Imm],
    [InternalOp.sdiv64Reg, Code.sdiv64Reg],
    [InternalOp.smod64Imm, Code.smod64Imm],
    [InternalOp.smod64Reg, Code.smod64Reg],
    [InternalOp.movsx8To32, Code.movsx8To32],
    [InternalOp.movsx16To32, Code.movsx16To32],
    [InternalOp.movsx8To64, Code.movsx8To64],
    [InternalOp.movsx16To64, Code.movsx16To64],
    [InternalOp.movsx32To64, Code.movsx32To64],
    [InternalOp.loadImm64, Code.loadImm64],
    [InternalOp.le16, Code.le16],
    [InternalOp.le32, Code.le32],
    [InternalOp.le64, Code.le64],
    [InternalOp.be16, Code.swap16],
    [InternalOp.be32, Code.swap32],
    [InternalOp.be64, Code.swap64],
    [InternalOp.bswap16, Code.swap16],
    [InternalOp.bswap32, Code.swap32],
    [InternalOp.bswap64, Code.swap64],
    [InternalOp.callLocal, Code.callLocal],
    [InternalOp.callReg, Code.callReg],
    [InternalOp.lddwTail, Code.invalid],
  ]);

/** The {@link Code} of one predecoded opcode (an opcode byte, or an {@link InternalOp}). */
export function codeOfOp(op: number): Code {
  internalCodes ??= internalTable();
  const internal = internalCodes.get(op);
  if (internal !== undefined) return internal as Code;
  const cls = op & 0x07;
  const hi = op & 0xf0;
  const isReg = (op & 0x08) !== 0 ? 1 : 0;
  if (cls === 0x07 || cls === 0x04) {
    if (hi === 0x80) return cls === 0x07 ? Code.neg64 : Code.neg32;
    const base = (cls === 0x07 ? ALU64_IMM : ALU32_IMM).get(hi);
    return base === undefined ? Code.invalid : ((base + isReg) as Code);
  }
  if (cls === 0x05 || cls === 0x06) {
    if (hi === 0x00) return cls === 0x06 ? Code.gotol : Code.ja;
    if (op === 0x85) return Code.callHelper;
    if (op === 0x95) return Code.exit;
    const base = JMP_IMM.get(hi);
    return base === undefined ? Code.invalid : ((base + (cls === 0x06 ? 22 : 0) + isReg) as Code);
  }
  return (LDX.get(op) ?? STORE.get(op) ?? Code.invalid) as Code;
}

/**
 * The interpreter's form of a whole program, one 32-bit word per slot:
 *
 * ```
 *  31              16 15    12 11     8 7              0
 * +------------------+--------+--------+----------------+
 * |  offset (signed) |  src   |  dst   |      code      |
 * +------------------+--------+--------+----------------+
 * ```
 *
 * `code` is {@link codeOfOp} of the slot, or a superinstruction when the slot and the next form
 * a pair whose registers line up. One load gives the interpreter everything but the immediate;
 * a jump's target is `pc + 1 + offset` (`gotol` and local calls take it from the immediate).
 */
export function interpreterCode(op: Uint8Array, dst: Uint8Array, src: Uint8Array, off: Int32Array): Int32Array {
  const n = op.length;
  const base = new Uint8Array(n);
  for (let i = 0; i < n; i++) base[i] = codeOfOp(op[i] as number);
  const code = base.slice();
  for (let i = 0; i + 1 < n; i++) {
    const a = base[i] as number;
    const b = base[i + 1] as number;
    const d = dst[i] as number;
    const d2 = dst[i + 1] as number;
    if (a === Code.add64Imm && d2 === d) {
      if (b === Code.jneImm) code[i] = Code.addImmJneImm;
      else if (b === Code.jeqImm) code[i] = Code.addImmJeqImm;
      else if (b === Code.jltReg) code[i] = Code.addImmJltReg;
    } else if (a === Code.mov64Reg && d2 === d) {
      if (b === Code.rsh64Imm) code[i] = Code.movRshImm;
      else if (b === Code.lsh64Imm) code[i] = Code.movLshImm;
    } else if (b === Code.add64Reg && (src[i + 1] as number) === d) {
      if (a === Code.ldxb) code[i] = Code.ldxbAdd;
      else if (a === Code.ldxw) code[i] = Code.ldxwAdd;
      else if (a === Code.ldxdw) code[i] = Code.ldxdwAdd;
    }
  }
  // triples: an add-imm left alone before a fused add-imm + jne-imm pair
  for (let i = 0; i + 2 < n; i++) {
    if (code[i] === Code.add64Imm && code[i + 1] === Code.addImmJneImm) code[i] = Code.addImmAddImmJneImm;
  }
  // scanning loops: a load (any unsigned size) + add-reg of the loaded register before a triple
  // (down-counting: the triple; up-counting: an add-imm + jlt-reg pair)
  const SCAN = [Code.ldxb, Code.ldxh, Code.ldxw, Code.ldxdw] as number[];
  for (let i = 0; i + 3 < n; i++) {
    if (base[i + 1] !== Code.add64Reg || (src[i + 1] as number) !== dst[i]) continue;
    const size = SCAN.indexOf(base[i] as number);
    if (size < 0) continue;
    if (code[i + 2] === Code.addImmAddImmJneImm && i + 4 < n) code[i] = Code.scanLdxb + size;
    else if (code[i + 2] === Code.addImmJltReg) code[i] = Code.scanUpLdxb + size;
  }
  const insn = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    insn[i] = (code[i] as number) | ((dst[i] as number) << 8) | ((src[i] as number) << 12) | ((off[i] as number) << 16);
  }
  return insn;
}
