// Bit fields of an eBPF opcode byte (RFC 9669), as the verifier needs them. Kept local so the
// verifier's hot loop switches on plain numbers.
//
//   +-----+---+-----+   ALU/JMP: | op (4) | source (1) | class (3) |
//   |  7..3     2..0 |  LD/ST:   | mode (3) | size (2) | class (3) |

/** Instruction classes (`BPF_LD` … `BPF_ALU64`). */
export const Cls = { LD: 0, LDX: 1, ST: 2, STX: 3, ALU: 4, JMP: 5, JMP32: 6, ALU64: 7 } as const;

/** ALU operations (`BPF_ADD` … `BPF_END`), already shifted right by 4. */
export const Alu = {
  ADD: 0x0,
  SUB: 0x1,
  MUL: 0x2,
  DIV: 0x3,
  OR: 0x4,
  AND: 0x5,
  LSH: 0x6,
  RSH: 0x7,
  NEG: 0x8,
  MOD: 0x9,
  XOR: 0xa,
  MOV: 0xb,
  ARSH: 0xc,
  END: 0xd,
} as const;

/** Jump operations (`BPF_JA` … `BPF_JSLE`), already shifted right by 4. */
export const Jmp = {
  JA: 0x0,
  JEQ: 0x1,
  JGT: 0x2,
  JGE: 0x3,
  JSET: 0x4,
  JNE: 0x5,
  JSGT: 0x6,
  JSGE: 0x7,
  CALL: 0x8,
  EXIT: 0x9,
  JLT: 0xa,
  JLE: 0xb,
  JSLT: 0xc,
  JSLE: 0xd,
} as const;

/** Load/store modes (`BPF_IMM` … `BPF_ATOMIC`). */
export const Mode = { IMM: 0x00, ABS: 0x20, IND: 0x40, MEM: 0x60, MEMSX: 0x80, ATOMIC: 0xc0 } as const;

/** Access size in bytes for each size field value (`BPF_W`, `BPF_H`, `BPF_B`, `BPF_DW`). */
export const SIZE_BYTES = [4, 2, 1, 8] as const;

/** Atomic operations carried in `imm` (`BPF_ADD` … `BPF_CMPXCHG`, with `BPF_FETCH` = 1). */
export const Atomic = {
  ADD: 0x00,
  OR: 0x40,
  AND: 0x50,
  XOR: 0xa0,
  FETCH: 0x01,
  XCHG: 0xe1,
  CMPXCHG: 0xf1,
} as const;

/** `src_reg` of a `BPF_CALL`: helper, bpf-to-bpf call, kernel function. */
export const CallKind = { HELPER: 0, PSEUDO_CALL: 1, KFUNC: 2 } as const;

/** `src_reg` of an `lddw` (`BPF_PSEUDO_MAP_FD`, `BPF_PSEUDO_MAP_VALUE`, …). */
export const Pseudo = { NONE: 0, MAP_FD: 1, MAP_VALUE: 2, BTF_ID: 3, FUNC: 4, MAP_IDX: 5, MAP_IDX_VALUE: 6 } as const;

export const cls = (opcode: number): number => opcode & 0x07;
export const aluOp = (opcode: number): number => opcode >> 4;
export const isSrcReg = (opcode: number): boolean => (opcode & 0x08) !== 0;
export const sizeBytes = (opcode: number): number => SIZE_BYTES[(opcode >> 3) & 3]!;
export const mode = (opcode: number): number => opcode & 0xe0;
