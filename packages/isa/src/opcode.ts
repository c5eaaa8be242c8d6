// The bit-field families of an eBPF instruction (RFC 9669 section 3), each its own small type.
//
//   msb                                                        lsb
//   +------------------------+----------------+----+----+--------+
//   |immediate               |offset          |src |dst |opcode  |
//   +------------------------+----------------+----+----+--------+
//    63                    32 31            16 15 12 11 8 7      0
//
// The opcode byte is read differently per class:
//
//   arithmetic and jump:      load and store:
//   +--------+-+-----+        +-----+-----+-----+
//   |op (4)  |s|class|        |mode |size |class|
//   +--------+-+-----+        +-----+-----+-----+
//    7      4 3 2   0          7   5 4   3 2   0

/**
 * Instruction class, the low three bits of the opcode (the kernel's `BPF_CLASS()`: `BPF_LD`, `BPF_LDX`,
 * `BPF_ST`, `BPF_STX`, `BPF_ALU`, `BPF_JMP`, `BPF_JMP32`, `BPF_ALU64`).
 *
 *   +-----+-----+-----+-----+-----+-----+-----+-----+
 *   |  7  |  6  |  5  |  4  |  3  |  2  |  1  |  0  |
 *   +-----+-----+-----+-----+-----+-----+-----+-----+
 *   |        (per class)          |      class      |
 *   +-----------------------------+-----------------+
 */
export const InsnClass = {
  /** `BPF_LD`: 64-bit immediate loads (`lddw`) and legacy packet loads. */
  ld: 0x00,
  /** `BPF_LDX`: load from memory into a register. */
  ldx: 0x01,
  /** `BPF_ST`: store an immediate to memory. */
  st: 0x02,
  /** `BPF_STX`: store a register to memory, and atomics. */
  stx: 0x03,
  /** `BPF_ALU`: 32-bit arithmetic. */
  alu: 0x04,
  /** `BPF_JMP`: 64-bit jumps, calls, exit. */
  jmp: 0x05,
  /** `BPF_JMP32`: 32-bit jumps and `gotol`. */
  jmp32: 0x06,
  /** `BPF_ALU64`: 64-bit arithmetic. */
  alu64: 0x07,
} as const;
export type InsnClass = (typeof InsnClass)[keyof typeof InsnClass];

/** Mask of the class bits (`BPF_CLASS(code)`). */
export const classMask = 0x07;

/**
 * Source operand of arithmetic and jump instructions, bit 3 of the opcode (`BPF_SRC()`: `BPF_K`, `BPF_X`).
 * For `BPF_END` the same bit selects the byte order (`BPF_TO_LE` / `BPF_TO_BE`), see {@link ByteOrder}.
 *
 *   +--------+---+-------+
 *   | op (4) | s | class |
 *   +--------+---+-------+
 *              ^ 0 = immediate (K), 1 = register (X)
 */
export const Source = {
  /** `BPF_K`: use the 32-bit immediate. */
  imm: 0x00,
  /** `BPF_X`: use the source register. */
  reg: 0x08,
} as const;
export type Source = (typeof Source)[keyof typeof Source];

/**
 * Byte order of `BPF_END` in the `BPF_ALU` class (`BPF_TO_LE`, `BPF_TO_BE`), bit 3 of the opcode. In the
 * `BPF_ALU64` class the bit must be zero and the instruction is the unconditional byte swap.
 */
export const ByteOrder = {
  /** `BPF_TO_LE`: convert to little-endian (`le16`, `le32`, `le64`). */
  toLe: 0x00,
  /** `BPF_TO_BE`: convert to big-endian (`be16`, `be32`, `be64`). */
  toBe: 0x08,
} as const;
export type ByteOrder = (typeof ByteOrder)[keyof typeof ByteOrder];

/**
 * Arithmetic operation, the high four bits of an `BPF_ALU`/`BPF_ALU64` opcode (`BPF_OP()`).
 *
 *   +--------+---+-------+
 *   | op (4) | s | class |
 *   +--------+---+-------+
 *    7      4
 *
 * `div` and `mod` are signed (`sdiv`, `smod`) when the offset is 1; `mov` sign-extends (`movsx`) when the
 * offset is 8, 16 or 32.
 */
export const AluOp = {
  /** `BPF_ADD` */
  add: 0x00,
  /** `BPF_SUB` */
  sub: 0x10,
  /** `BPF_MUL` */
  mul: 0x20,
  /** `BPF_DIV` (`sdiv` with offset 1) */
  div: 0x30,
  /** `BPF_OR` */
  or: 0x40,
  /** `BPF_AND` */
  and: 0x50,
  /** `BPF_LSH` */
  lsh: 0x60,
  /** `BPF_RSH` */
  rsh: 0x70,
  /** `BPF_NEG` */
  neg: 0x80,
  /** `BPF_MOD` (`smod` with offset 1) */
  mod: 0x90,
  /** `BPF_XOR` */
  xor: 0xa0,
  /** `BPF_MOV` (`movsx` with offset 8/16/32) */
  mov: 0xb0,
  /** `BPF_ARSH` */
  arsh: 0xc0,
  /** `BPF_END`: byte swap. */
  end: 0xd0,
} as const;
export type AluOp = (typeof AluOp)[keyof typeof AluOp];

/**
 * Jump operation, the high four bits of a `BPF_JMP`/`BPF_JMP32` opcode (`BPF_OP()`).
 *
 *   +--------+---+-------+
 *   | op (4) | s | class |
 *   +--------+---+-------+
 *    7      4
 */
export const JmpOp = {
  /** `BPF_JA`: `goto` (JMP, offset) or `gotol` (JMP32, immediate). */
  ja: 0x00,
  /** `BPF_JEQ` */
  jeq: 0x10,
  /** `BPF_JGT` */
  jgt: 0x20,
  /** `BPF_JGE` */
  jge: 0x30,
  /** `BPF_JSET` */
  jset: 0x40,
  /** `BPF_JNE` */
  jne: 0x50,
  /** `BPF_JSGT` */
  jsgt: 0x60,
  /** `BPF_JSGE` */
  jsge: 0x70,
  /** `BPF_CALL` (JMP only) */
  call: 0x80,
  /** `BPF_EXIT` (JMP only) */
  exit: 0x90,
  /** `BPF_JLT` */
  jlt: 0xa0,
  /** `BPF_JLE` */
  jle: 0xb0,
  /** `BPF_JSLT` */
  jslt: 0xc0,
  /** `BPF_JSLE` */
  jsle: 0xd0,
} as const;
export type JmpOp = (typeof JmpOp)[keyof typeof JmpOp];

/**
 * Access size of loads and stores, bits 3-4 of the opcode (`BPF_SIZE()`: `BPF_W`, `BPF_H`, `BPF_B`, `BPF_DW`).
 *
 *   +------+------+-------+
 *   | mode | size | class |
 *   +------+------+-------+
 *           4    3
 */
export const Size = {
  /** `BPF_W`: 4 bytes. */
  w: 0x00,
  /** `BPF_H`: 2 bytes. */
  h: 0x08,
  /** `BPF_B`: 1 byte. */
  b: 0x10,
  /** `BPF_DW`: 8 bytes. */
  dw: 0x18,
} as const;
export type Size = (typeof Size)[keyof typeof Size];

/** Bytes accessed per {@link Size}. */
export function sizeBytes(size: Size): 1 | 2 | 4 | 8 {
  return size === Size.b ? 1 : size === Size.h ? 2 : size === Size.w ? 4 : 8;
}

/**
 * Addressing mode of loads and stores, the top three bits of the opcode (`BPF_MODE()`: `BPF_IMM`,
 * `BPF_ABS`, `BPF_IND`, `BPF_MEM`, `BPF_MEMSX`, `BPF_ATOMIC`).
 *
 *   +------+------+-------+
 *   | mode | size | class |
 *   +------+------+-------+
 *    7    5
 */
export const Mode = {
  /** `BPF_IMM`: 64-bit immediate (`lddw`), with `BPF_LD` and `BPF_DW` only. */
  imm: 0x00,
  /** `BPF_ABS`: legacy packet load at an absolute offset. */
  abs: 0x20,
  /** `BPF_IND`: legacy packet load at a register-relative offset. */
  ind: 0x40,
  /** `BPF_MEM`: regular load and store. */
  mem: 0x60,
  /** `BPF_MEMSX`: sign-extending load. */
  memsx: 0x80,
  /** `BPF_ATOMIC`: atomic read-modify-write (`BPF_STX` only). */
  atomic: 0xc0,
} as const;
export type Mode = (typeof Mode)[keyof typeof Mode];

/**
 * Atomic operation, carried in the immediate of a `BPF_STX | BPF_ATOMIC` instruction. `BPF_FETCH` (0x01)
 * makes `add`/`or`/`and`/`xor` return the old value in the source register; `xchg` and `cmpxchg` always
 * include it.
 *
 *   imm:  +----------------+--------+---+
 *         | zero (24)      | op (4) | f |   (op in bits 4-7, f = BPF_FETCH in bit 0)
 *         +----------------+--------+---+
 */
export const AtomicOp = {
  /** `BPF_ADD` */
  add: 0x00,
  /** `BPF_OR` */
  or: 0x40,
  /** `BPF_AND` */
  and: 0x50,
  /** `BPF_XOR` */
  xor: 0xa0,
  /** `BPF_XCHG` (= 0xe0 | `BPF_FETCH`) */
  xchg: 0xe1,
  /** `BPF_CMPXCHG` (= 0xf0 | `BPF_FETCH`) */
  cmpxchg: 0xf1,
} as const;
export type AtomicOp = (typeof AtomicOp)[keyof typeof AtomicOp];

/** `BPF_FETCH`: the atomic operation returns the old value. */
export const atomicFetch = 0x01;

/**
 * Meaning of the source register of `lddw` (`BPF_LD | BPF_IMM | BPF_DW`): the kernel's `BPF_PSEUDO_*`.
 *
 *   +-----+-----+--------+
 *   | src | dst | opcode |   src selects how the 64-bit immediate is interpreted
 *   +-----+-----+--------+
 */
export const PseudoSource = {
  /** Plain 64-bit immediate. */
  imm64: 0,
  /** `BPF_PSEUDO_MAP_FD`: imm is a map file descriptor; dst = the map. */
  mapFd: 1,
  /** `BPF_PSEUDO_MAP_VALUE`: imm is a map fd, next imm an offset into its value. */
  mapValue: 2,
  /** `BPF_PSEUDO_BTF_ID`: imm is a BTF id of a kernel variable. */
  btfId: 3,
  /** `BPF_PSEUDO_FUNC`: imm is a relative instruction offset of a function (code address). */
  func: 4,
  /** `BPF_PSEUDO_MAP_IDX`: imm is an index into the program's map array. */
  mapIdx: 5,
  /** `BPF_PSEUDO_MAP_IDX_VALUE`: as `mapIdx`, next imm an offset into the value. */
  mapIdxValue: 6,
} as const;
export type PseudoSource = (typeof PseudoSource)[keyof typeof PseudoSource];

/**
 * Meaning of the source register of `call` (`BPF_JMP | BPF_CALL`): helper, local function
 * (`BPF_PSEUDO_CALL`) or helper/kfunc by BTF id (`BPF_PSEUDO_KFUNC_CALL`).
 */
export const CallSource = {
  /** Helper function by static id (imm). */
  helper: 0,
  /** `BPF_PSEUDO_CALL`: program-local function, imm = relative instruction offset. */
  local: 1,
  /** `BPF_PSEUDO_KFUNC_CALL`: function by BTF id (imm). */
  btfId: 2,
} as const;
export type CallSource = (typeof CallSource)[keyof typeof CallSource];

/** Opcodes used often enough to name. */
export const Opcode = {
  /** `BPF_LD | BPF_IMM | BPF_DW`: the two-slot 64-bit immediate load. */
  lddw: 0x18,
  /** `BPF_JMP | BPF_CALL` */
  call: 0x85,
  /** `BPF_JMP | BPF_CALL | BPF_X`: call through a register (LLVM `callx`; not in RFC 9669). */
  callx: 0x8d,
  /** `BPF_JMP | BPF_EXIT` */
  exit: 0x95,
  /** `BPF_JMP | BPF_JA` */
  ja: 0x05,
  /** `BPF_JMP32 | BPF_JA`: `gotol` with a 32-bit offset in imm. */
  gotol: 0x06,
} as const;

/** Number of general-purpose registers, r0 to r10 (r10 is the read-only frame pointer). */
export const registerCount = 11;
