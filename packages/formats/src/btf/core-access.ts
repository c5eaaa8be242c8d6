import { FormatError } from '../errors.js';
import type { BtfSpec } from './btf-spec.js';
import type { BtfMember } from './btf-type.js';
import {
  coreRelocationKindName,
  type CoreRelocationKindName,
  isEnumvalRelocation,
  isFieldRelocation,
  isTypeRelocation,
} from './core-relocation-kind.js';

/** libbpf's `BPF_CORE_SPEC_MAX_LEN`: at most this many indices in an access string. */
export const CORE_SPEC_MAX_LEN = 64;

/** One step of a resolved access string after the root. */
export type CoreAccessStep =
  | { kind: 'member'; index: number; name: string; structTypeId: number; typeId: number; bitOffset: number; bitfieldSize: number }
  | { kind: 'array'; index: number; arrayTypeId: number; typeId: number };

/**
 * A CO-RE access resolved against the *local* BTF of the object: the field path by name and the
 * values clang baked into the instruction (which a loader later replaces with the target's).
 */
export interface CoreAccess {
  kind: number;
  kindName: CoreRelocationKindName;
  /** The relocation's `type_id` and the struct/union/enum it resolves to (typedefs skipped). */
  typeId: number;
  rootTypeId: number;
  /** Name of the root type, with any `___flavor` suffix. */
  rootName: string;
  accessString: string;
  /** The parsed indices of the access string. */
  indices: number[];
  /** Steps after the first index (which indexes the root as an array: `ctx[0]`). */
  steps: CoreAccessStep[];
  /** Named path to the field: `ent.pid`, `args[2]`, `u.weight` ('' for type / enum kinds). */
  fieldPath: string;
  /** Field kinds: the field's type, bit offset from the root, bitfield width (0 if none). */
  fieldTypeId?: number;
  bitOffset?: number;
  bitfieldSize?: number;
  /** Field kinds: load offset and size as libbpf computes them (bitfields widen to a load unit). */
  byteOffset?: number;
  byteSize?: number;
  signed?: boolean;
  /** Field kinds: shifts that extract a bitfield from a u64 load (`FIELD_LSHIFT_U64/RSHIFT_U64`). */
  lshiftU64?: number;
  rshiftU64?: number;
  /** Enumerator kinds: the enumerator named by the index. */
  enumerator?: { name: string; value: number | bigint };
  /**
   * The value libbpf computes for this relocation against the local BTF (offset, size, 0/1
   * flag, shift, type id, enumerator value). It equals the immediate clang baked into the
   * instruction (what llvm-objdump shows), except `field-lshift-u64` on big endian: clang 14
   * assumes the bitfield was probe-read into the first bytes of a u64, libbpf assumes a
   * direct load of `byteSize` bytes (`(8 - byteSize) * 8` more).
   */
  localValue: number | bigint;
}

/** Parses "0:2:1" into indices; `malformed` for anything else. */
export function parseAccessString(s: string): number[] {
  if (!/^\d+(:\d+)*$/.test(s)) throw new FormatError('malformed', `access string "${s.slice(0, 40)}": want colon-separated indices`);
  const parts = s.split(':');
  if (parts.length > CORE_SPEC_MAX_LEN) throw new FormatError('out-of-range', `access string: ${parts.length} indices, at most ${CORE_SPEC_MAX_LEN}`);
  return parts.map((p) => {
    const n = Number(p);
    if (!Number.isSafeInteger(n) || n > 0x7fffffff) throw new FormatError('out-of-range', `access string "${s.slice(0, 40)}": index ${p.slice(0, 20)} too large`);
    return n;
  });
}

/**
 * Resolves a CO-RE relocation's access string against `btf` (the object's own BTF), as libbpf's
 * `bpf_core_parse_spec` + `bpf_core_calc_relo` do for the local side. Errors (`out-of-range`,
 * `malformed`) name the relocation; callers may treat one bad relocation as poisoning its
 * instruction only.
 */
export function resolveCoreAccess(btf: BtfSpec, relo: { typeId: number; accessString: string; kind: number }): CoreAccess {
  const { typeId, accessString, kind } = relo;
  const kindName = coreRelocationKindName(kind);
  if (kindName === 'unknown') throw new FormatError('unsupported', `core relocation kind ${kind}: unknown`);
  if (typeId === 0 || typeId >= btf.typeCount) throw new FormatError('out-of-range', `core relocation type id ${typeId}: past the ${btf.typeCount - 1} types`);
  const indices = parseAccessString(accessString);
  const rootTypeId = btf.resolve(typeId);
  const root = btf.type(rootTypeId);
  const base = { kind, kindName, typeId, rootTypeId, rootName: root.name, accessString, indices, steps: [] as CoreAccessStep[], fieldPath: '' };

  if (isTypeRelocation(kind)) {
    if (indices.length !== 1 || indices[0] !== 0) throw new FormatError('malformed', `core ${kindName} relocation: access string "${accessString}", want "0"`);
    let localValue: number;
    if (kindName === 'type-size') localValue = btf.sizeOf(rootTypeId);
    else if (kindName === 'type-id-local' || kindName === 'type-id-target') localValue = typeId;
    else localValue = 1;
    return { ...base, localValue };
  }

  if (isEnumvalRelocation(kind)) {
    if (root.kind !== 'enum' && root.kind !== 'enum64') throw new FormatError('malformed', `core ${kindName} relocation: type ${typeId} is ${root.kind}, want enum`);
    const idx = indices[0] ?? 0;
    const e = root.values[idx];
    if (indices.length !== 1 || e === undefined) {
      throw new FormatError('out-of-range', `core ${kindName} relocation: enumerator ${idx} of enum ${root.name || typeId} with ${root.values.length} values`);
    }
    const enumerator = { name: e.name, value: e.value };
    return { ...base, fieldPath: e.name, enumerator, localValue: kindName === 'enumval-value' ? e.value : 1 };
  }

  if (!isFieldRelocation(kind)) throw new FormatError('unsupported', `core relocation kind ${kind}: unknown`);
  // First index: pointer arithmetic on the root (`ctx[i]`).
  const first = indices[0] ?? 0;
  let bitOffset = first === 0 ? 0 : first * btf.sizeOf(rootTypeId) * 8;
  let cur = typeId;
  let bitfieldSize = 0;
  const steps: CoreAccessStep[] = [];
  const path: string[] = [];
  for (let i = 1; i < indices.length; i++) {
    const idx = indices[i] as number;
    const resolvedId = btf.resolve(cur);
    const t = btf.type(resolvedId);
    if (t.kind === 'struct' || t.kind === 'union') {
      const m = t.members[idx] as BtfMember | undefined;
      if (m === undefined) {
        throw new FormatError('out-of-range', `access string "${accessString}": member ${idx} of ${t.kind} ${t.name || resolvedId} with ${t.members.length} members`);
      }
      bitOffset += m.bitOffset;
      bitfieldSize = m.bitfieldSize;
      steps.push({ kind: 'member', index: idx, name: m.name, structTypeId: resolvedId, typeId: m.type, bitOffset: m.bitOffset, bitfieldSize: m.bitfieldSize });
      if (m.name !== '') path.push(path.length === 0 ? m.name : `.${m.name}`);
      cur = m.type;
    } else if (t.kind === 'array') {
      if (idx >= t.nelems && t.nelems !== 0) {
        throw new FormatError('out-of-range', `access string "${accessString}": element ${idx} of array of ${t.nelems}`);
      }
      bitOffset += idx * btf.sizeOf(t.type) * 8;
      bitfieldSize = 0;
      steps.push({ kind: 'array', index: idx, arrayTypeId: resolvedId, typeId: t.type });
      path.push(`[${idx}]`);
      cur = t.type;
    } else {
      throw new FormatError('malformed', `access string "${accessString}": index ${i} applies to ${t.kind}, want struct, union or array`);
    }
  }
  const fieldTypeId = cur;
  const field = btf.type(btf.resolve(fieldTypeId));
  let byteSize: number;
  let byteOffset: number;
  let bitSize: number;
  if (bitfieldSize === 0) {
    byteSize = btf.sizeOf(fieldTypeId);
    byteOffset = Math.floor(bitOffset / 8);
    bitSize = byteSize * 8;
  } else {
    // A bitfield is read with the smallest aligned load (of at least the member type's size) that covers it.
    byteSize = btf.sizeOf(fieldTypeId);
    bitSize = bitfieldSize;
    byteOffset = Math.floor(bitOffset / 8 / byteSize) * byteSize;
    while (bitOffset + bitSize - byteOffset * 8 > byteSize * 8) {
      if (byteSize >= 8) throw new FormatError('malformed', `access string "${accessString}": bitfield at bit ${bitOffset} of ${bitSize} bits spans more than 8 bytes`);
      byteSize *= 2;
      byteOffset = Math.floor(bitOffset / 8 / byteSize) * byteSize;
    }
  }
  const signed = field.kind === 'int' ? field.signed : field.kind === 'enum' || field.kind === 'enum64' ? field.signed : false;
  const lshiftU64 = btf.littleEndian ? 64 - (bitOffset + bitSize - byteOffset * 8) : (8 - byteSize) * 8 + (bitOffset - byteOffset * 8);
  const rshiftU64 = 64 - bitSize;
  const values: Record<string, number> = {
    'field-byte-offset': byteOffset,
    'field-byte-size': byteSize,
    'field-exists': 1,
    'field-signed': signed ? 1 : 0,
    'field-lshift-u64': lshiftU64,
    'field-rshift-u64': rshiftU64,
  };
  return {
    ...base,
    steps,
    fieldPath: path.join(''),
    fieldTypeId,
    bitOffset,
    bitfieldSize,
    byteOffset,
    byteSize,
    signed,
    lshiftU64,
    rshiftU64,
    localValue: values[kindName] ?? 0,
  };
}

/**
 * One line describing a resolved access, in the style of libbpf's CO-RE log:
 * `field-byte-offset [59] struct request_flags.prio (0:2 @ offset 0)`,
 * `type-size [59] struct request_flags`, `enumval-value [41] enum req_op::REQ_OP_FLUSH = 2`.
 */
export function formatCoreAccess(btf: BtfSpec, a: CoreAccess): string {
  const root = btf.type(a.rootTypeId);
  const rootText = `[${a.rootTypeId}] ${root.kind === 'enum64' ? 'enum' : root.kind} ${root.name || '(anon)'}`;
  if (a.enumerator !== undefined) return `${a.kindName} ${rootText}::${a.enumerator.name} = ${a.enumerator.value}`;
  if (a.fieldTypeId === undefined) return `${a.kindName} ${rootText}`;
  const path = a.fieldPath === '' ? '' : a.fieldPath.startsWith('[') ? a.fieldPath : `.${a.fieldPath}`;
  const bits = a.bitfieldSize ? `, bits ${a.bitOffset}+${a.bitfieldSize}` : '';
  return `${a.kindName} ${rootText}${path} (${a.accessString} @ offset ${a.byteOffset}, size ${a.byteSize}${bits})`;
}
