import type { DisplayHint, SpecMap, ValueType } from '@probeyard/compat';
import type { KeyType, MapInfo, MapValueKind } from './check.js';

/** `BPF_MAP_TYPE_*` numbers used. */
export const BpfMapType = { hash: 1, array: 2, ringbuf: 27 } as const;

/** One key member in the key buffer. */
export interface KeyField {
  type: KeyType;
  byteOffset: number;
  /** Bytes it takes (8 for integers, the string size). */
  size: number;
}

/** Where everything of a script map lives: the key buffer, the value, the spec entry. */
export interface MapLayout {
  info: MapInfo;
  /** Index in `spec.maps` (the `lddw` immediate). */
  index: number;
  keyFields: KeyField[];
  /** Offset of the histogram slot (u64) after the user keys; undefined for other maps. */
  slotOffset: number | undefined;
  keySize: number;
  valueSize: number;
  value: MapValueKind;
  spec: SpecMap;
}

const keyValueType = (k: KeyType): ValueType => (k.kind === 'int' ? { kind: 'int', size: 8, signed: k.signed } : { kind: 'string', size: k.size });

/**
 * The map of a script map, named as the script names it without the `@` (`@` itself is ''), so the
 * drawing prints `@name`; internal maps start with a dot, which no script map can. Layouts follow
 * packages/compat's display layouts: counters and plain values
 * keyed by their key (one key: that type; several: a struct `k0`, `k1`, …; none: an empty struct
 * of 8 zero bytes); `hist`/`lhist` keyed by (user keys…, `slot`) with a u64 count, bpftrace's
 * bucketing; `avg`/`stats` values a struct of `count` and `total`.
 */
export function layoutMap(info: MapInfo, value: MapValueKind, index: number, maxEntries: number): MapLayout {
  const keys = info.keys ?? [];
  const keyFields: KeyField[] = [];
  let at = 0;
  for (const k of keys) {
    const size = k.kind === 'int' ? 8 : k.size;
    keyFields.push({ type: k, byteOffset: at, size });
    at += size;
  }
  const isHist = value.kind === 'hist' || value.kind === 'lhist';
  let slotOffset: number | undefined;
  let keyType: ValueType;
  if (isHist) {
    slotOffset = at;
    at += 8;
    const slot: ValueType = { kind: 'int', size: 8, signed: false };
    keyType = keys.length === 0 ? slot : { kind: 'struct', fields: [...keyFields.map((f, i) => ({ name: `k${i}`, offset: f.byteOffset, type: keyValueType(f.type) })), { name: 'slot', offset: slotOffset, type: slot }] };
  } else if (keys.length === 0) {
    at = 8;
    keyType = { kind: 'struct', fields: [] };
  } else if (keys.length === 1) {
    keyType = keyValueType(keys[0]!);
  } else {
    keyType = { kind: 'struct', fields: keyFields.map((f, i) => ({ name: `k${i}`, offset: f.byteOffset, type: keyValueType(f.type) })) };
  }
  let valueType: ValueType;
  let valueSize = 8;
  let display: DisplayHint;
  switch (value.kind) {
    case 'count':
      valueType = { kind: 'int', size: 8, signed: false };
      display = { kind: keys.length === 0 ? 'value' : 'counts', source: 'script' };
      break;
    case 'sum':
    case 'min':
    case 'max':
    case 'int':
      valueType = { kind: 'int', size: 8, signed: value.signed };
      display = { kind: keys.length === 0 ? 'value' : 'counts', source: 'script' };
      break;
    case 'string':
      valueType = { kind: 'string', size: value.size };
      valueSize = value.size;
      display = { kind: keys.length === 0 ? 'value' : 'table', source: 'script' };
      break;
    case 'avg':
    case 'stats':
      valueType = {
        kind: 'struct',
        fields: [
          { name: 'count', offset: 0, type: { kind: 'int', size: 8, signed: false } },
          { name: 'total', offset: 8, type: { kind: 'int', size: 8, signed: value.signed } },
        ],
      };
      valueSize = 16;
      display = { kind: value.kind === 'avg' ? 'average' : 'stats', source: 'script' };
      break;
    case 'hist':
      valueType = { kind: 'int', size: 8, signed: false };
      display = { kind: 'log2-histogram', bucket: 'bpftrace', source: 'script' };
      break;
    case 'lhist':
      valueType = { kind: 'int', size: 8, signed: false };
      display = { kind: 'linear-histogram', min: value.min, max: value.max, step: value.step, source: 'script' };
      break;
  }
  const spec: SpecMap = {
    name: info.name,
    type: BpfMapType.hash,
    typeName: 'hash',
    keySize: at,
    valueSize,
    maxEntries,
    flags: 0,
    keyType,
    valueType,
    display,
  };
  return { info, index, keyFields, slotOffset, keySize: at, valueSize, value, spec };
}

/** The ring buffer of printf and the other actions (see compat's `ScriptAction`). */
export function outputMapSpec(): SpecMap {
  return { name: '.output', type: BpfMapType.ringbuf, typeName: 'ringbuf', keySize: 0, valueSize: 0, maxEntries: 256 * 1024, flags: 0, display: { kind: 'events', source: 'script' } };
}

/** A one-entry array holding the start time of the run, for `elapsed` (written by BEGIN). */
export function startMapSpec(): SpecMap {
  return {
    name: '.elapsed',
    type: BpfMapType.array,
    typeName: 'array',
    keySize: 4,
    valueSize: 8,
    maxEntries: 1,
    flags: 0,
    keyType: { kind: 'int', size: 4, signed: false },
    valueType: { kind: 'int', size: 8, signed: false },
    display: { kind: 'hidden', source: 'script' },
  };
}
