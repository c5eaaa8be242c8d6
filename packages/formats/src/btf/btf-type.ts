import type { BtfLinkage } from './btf-kind.js';

/**
 * Friendly BTF types, decoded from {@link BtfRawType} records on demand. References stay type
 * ids (never object graphs), so a hostile blob with type loops cannot make decoding recurse.
 */
export type BtfType =
  | BtfVoid
  | BtfInt
  | BtfPtr
  | BtfArray
  | BtfStruct
  | BtfUnion
  | BtfEnum
  | BtfFwd
  | BtfTypedef
  | BtfVolatile
  | BtfConst
  | BtfRestrict
  | BtfFunc
  | BtfFuncProto
  | BtfVar
  | BtfDatasec
  | BtfFloat
  | BtfDeclTag
  | BtfTypeTag
  | BtfEnum64;

interface Base {
  id: number;
  /** Empty for anonymous types. */
  name: string;
}

/** Type id 0. */
export interface BtfVoid extends Base {
  kind: 'void';
}

/** `BTF_KIND_INT`. */
export interface BtfInt extends Base {
  kind: 'int';
  size: number;
  /** `BTF_INT_SIGNED`. */
  signed: boolean;
  /** `BTF_INT_CHAR`. */
  char: boolean;
  /** `BTF_INT_BOOL`. */
  bool: boolean;
  /** `BTF_INT_OFFSET`. */
  bitOffset: number;
  /** `BTF_INT_BITS`. */
  bits: number;
}

/** `BTF_KIND_PTR`. */
export interface BtfPtr extends Base {
  kind: 'ptr';
  type: number;
}

/** `BTF_KIND_ARRAY` (`struct btf_array`). */
export interface BtfArray extends Base {
  kind: 'array';
  type: number;
  indexType: number;
  nelems: number;
}

/** A member of a struct or union (`struct btf_member`). */
export interface BtfMember {
  /** Empty for an anonymous struct/union member. */
  name: string;
  type: number;
  /** Offset of the member in bits from the start of the struct. */
  bitOffset: number;
  /** Bitfield width when the struct has kind_flag set and this member is a bitfield, else 0. */
  bitfieldSize: number;
}

/** `BTF_KIND_STRUCT`. */
export interface BtfStruct extends Base {
  kind: 'struct';
  size: number;
  members: BtfMember[];
}

/** `BTF_KIND_UNION`. */
export interface BtfUnion extends Base {
  kind: 'union';
  size: number;
  members: BtfMember[];
}

/** `BTF_KIND_ENUM` (`struct btf_enum`); kind_flag marks a signed enum. */
export interface BtfEnum extends Base {
  kind: 'enum';
  size: number;
  signed: boolean;
  values: { name: string; value: number }[];
}

/** `BTF_KIND_ENUM64` (`struct btf_enum64`): values as BigInt at this API edge, plus the halves. */
export interface BtfEnum64 extends Base {
  kind: 'enum64';
  size: number;
  signed: boolean;
  values: { name: string; value: bigint; lo32: number; hi32: number }[];
}

/** `BTF_KIND_FWD`: kind_flag 0 = struct, 1 = union. */
export interface BtfFwd extends Base {
  kind: 'fwd';
  fwdKind: 'struct' | 'union';
}

/** `BTF_KIND_TYPEDEF`. */
export interface BtfTypedef extends Base {
  kind: 'typedef';
  type: number;
}

/** `BTF_KIND_VOLATILE`. */
export interface BtfVolatile extends Base {
  kind: 'volatile';
  type: number;
}

/** `BTF_KIND_CONST`. */
export interface BtfConst extends Base {
  kind: 'const';
  type: number;
}

/** `BTF_KIND_RESTRICT`. */
export interface BtfRestrict extends Base {
  kind: 'restrict';
  type: number;
}

/** `BTF_KIND_FUNC`: `type` is its FUNC_PROTO; linkage from vlen. */
export interface BtfFunc extends Base {
  kind: 'func';
  type: number;
  linkage: BtfLinkage;
}

/** `BTF_KIND_FUNC_PROTO` (`struct btf_param`); a last param with type 0 means `...`. */
export interface BtfFuncProto extends Base {
  kind: 'func_proto';
  returnType: number;
  params: { name: string; type: number }[];
  variadic: boolean;
}

/** `BTF_KIND_VAR` (`struct btf_var`). */
export interface BtfVar extends Base {
  kind: 'var';
  type: number;
  linkage: BtfLinkage;
}

/** `BTF_KIND_DATASEC` (`struct btf_var_secinfo`). In a clang object `size` is 0 (libbpf fills it). */
export interface BtfDatasec extends Base {
  kind: 'datasec';
  size: number;
  vars: { type: number; byteOffset: number; size: number }[];
}

/** `BTF_KIND_FLOAT`. */
export interface BtfFloat extends Base {
  kind: 'float';
  size: number;
}

/** `BTF_KIND_DECL_TAG` (`struct btf_decl_tag`): componentIdx -1 tags the type itself. */
export interface BtfDeclTag extends Base {
  kind: 'decl_tag';
  type: number;
  componentIdx: number;
}

/** `BTF_KIND_TYPE_TAG`. */
export interface BtfTypeTag extends Base {
  kind: 'type_tag';
  type: number;
}
