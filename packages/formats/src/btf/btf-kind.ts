/**
 * BTF type kinds (`BTF_KIND_*` of `include/uapi/linux/btf.h`), bits 24–28 of `btf_type.info`:
 *
 *     31  30..29  28....24  23.....16  15..........0
 *   +----+-------+--------+----------+--------------+
 *   | kf | 0     | kind   | 0        | vlen         |
 *   +----+-------+--------+----------+--------------+
 */
export const BtfKind = {
  Void: 0,
  Int: 1,
  Ptr: 2,
  Array: 3,
  Struct: 4,
  Union: 5,
  Enum: 6,
  Fwd: 7,
  Typedef: 8,
  Volatile: 9,
  Const: 10,
  Restrict: 11,
  Func: 12,
  FuncProto: 13,
  Var: 14,
  Datasec: 15,
  Float: 16,
  DeclTag: 17,
  TypeTag: 18,
  Enum64: 19,
} as const;
export type BtfKind = (typeof BtfKind)[keyof typeof BtfKind];

/** Lowercase kind names as the friendly types use them (`bpftool btf dump` prints them upper-case). */
export const btfKindNames = [
  'void',
  'int',
  'ptr',
  'array',
  'struct',
  'union',
  'enum',
  'fwd',
  'typedef',
  'volatile',
  'const',
  'restrict',
  'func',
  'func_proto',
  'var',
  'datasec',
  'float',
  'decl_tag',
  'type_tag',
  'enum64',
] as const;
export type BtfKindName = (typeof btfKindNames)[number];

/** `BTF_INT_*` encoding bits (bits 24–27 of the int's trailing u32). */
export const BtfIntEncoding = { Signed: 1, Char: 2, Bool: 4 } as const;

/** `BTF_FUNC_*` / `BTF_VAR_*` linkage. */
export const btfLinkageNames = ['static', 'global', 'extern'] as const;
export type BtfLinkage = (typeof btfLinkageNames)[number];

/**
 * Bytes of trailing data after the 12-byte `struct btf_type` for a kind with `vlen` entries, or
 * undefined for an unknown kind.
 */
export function btfTrailingSize(kind: number, vlen: number): number | undefined {
  switch (kind) {
    case BtfKind.Int:
      return 4;
    case BtfKind.Array:
      return 12;
    case BtfKind.Struct:
    case BtfKind.Union:
      return 12 * vlen;
    case BtfKind.Enum:
      return 8 * vlen;
    case BtfKind.FuncProto:
      return 8 * vlen;
    case BtfKind.Var:
      return 4;
    case BtfKind.Datasec:
      return 12 * vlen;
    case BtfKind.DeclTag:
      return 4;
    case BtfKind.Enum64:
      return 12 * vlen;
    case BtfKind.Ptr:
    case BtfKind.Fwd:
    case BtfKind.Typedef:
    case BtfKind.Volatile:
    case BtfKind.Const:
    case BtfKind.Restrict:
    case BtfKind.Func:
    case BtfKind.Float:
    case BtfKind.TypeTag:
      return 0;
    default:
      return undefined;
  }
}
