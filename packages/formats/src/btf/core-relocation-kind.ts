/** `enum bpf_core_relo_kind` (libbpf / kernel `BPF_CORE_*`). */
export const CoreRelocationKind = {
  FieldByteOffset: 0,
  FieldByteSize: 1,
  FieldExists: 2,
  FieldSigned: 3,
  FieldLShiftU64: 4,
  FieldRShiftU64: 5,
  TypeIdLocal: 6,
  TypeIdTarget: 7,
  TypeExists: 8,
  TypeSize: 9,
  EnumvalExists: 10,
  EnumvalValue: 11,
  TypeMatches: 12,
} as const;
export type CoreRelocationKind = (typeof CoreRelocationKind)[keyof typeof CoreRelocationKind];

/** Names of the kinds, indexed by value. */
export const coreRelocationKindNames = [
  'field-byte-offset',
  'field-byte-size',
  'field-exists',
  'field-signed',
  'field-lshift-u64',
  'field-rshift-u64',
  'type-id-local',
  'type-id-target',
  'type-exists',
  'type-size',
  'enumval-exists',
  'enumval-value',
  'type-matches',
] as const;
export type CoreRelocationKindName = (typeof coreRelocationKindNames)[number] | 'unknown';

export function coreRelocationKindName(kind: number): CoreRelocationKindName {
  return coreRelocationKindNames[kind] ?? 'unknown';
}

/** True for the field-based kinds (0–5), whose access string walks members and array elements. */
export function isFieldRelocation(kind: number): boolean {
  return kind >= 0 && kind <= 5;
}

/** True for the type-based kinds (6–9, 12), whose access string is "0". */
export function isTypeRelocation(kind: number): boolean {
  return (kind >= 6 && kind <= 9) || kind === 12;
}

/** True for the enumerator kinds (10, 11), whose access string is the enumerator index. */
export function isEnumvalRelocation(kind: number): boolean {
  return kind === 10 || kind === 11;
}
