import { VmError } from '../errors.js';
import { ArrayMap } from './array-map.js';
import { HashMap } from './hash-map.js';
import { type BpfMap, MapType, mapTypeNames, roundUp8 } from './map.js';
import { QueueStackMap } from './queue-stack-map.js';

/**
 * A small BTF-like description of a key or value layout (`struct btf_type` reduced to what a
 * dashboard needs): integers, fixed arrays, C strings (`char[N]`) and structs with field offsets.
 */
export type TypeDescription =
  | { kind: 'int'; size: 1 | 2 | 4 | 8; signed?: boolean }
  | { kind: 'string'; size: number }
  | { kind: 'array'; element: TypeDescription; length: number }
  | { kind: 'struct'; fields: readonly { name: string; offset: number; type: TypeDescription }[] };

/** A decoded value: integers of 8 bytes are bigints, smaller ones numbers. */
export type TypedValue = number | bigint | string | TypedValue[] | { [field: string]: TypedValue };

/** Bytes a described type occupies. */
export function typeSize(type: TypeDescription): number {
  switch (type.kind) {
    case 'int':
      return type.size;
    case 'string':
      return type.size;
    case 'array':
      return typeSize(type.element) * type.length;
    case 'struct':
      return type.fields.reduce((end, f) => Math.max(end, f.offset + typeSize(f.type)), 0);
  }
}

/** Decodes `bytes[offset..]` as `type` (little-endian, as the VM stores). */
export function decodeTyped(bytes: Uint8Array, type: TypeDescription, offset = 0): TypedValue {
  const size = typeSize(type);
  if (offset + size > bytes.length) {
    throw new VmError('invalid-argument', `decode typed value: ${size} bytes at offset ${offset} exceed ${bytes.length}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (type.kind) {
    case 'int': {
      const s = type.signed === true;
      if (type.size === 1) return s ? view.getInt8(offset) : view.getUint8(offset);
      if (type.size === 2) return s ? view.getInt16(offset, true) : view.getUint16(offset, true);
      if (type.size === 4) return s ? view.getInt32(offset, true) : view.getUint32(offset, true);
      return s ? view.getBigInt64(offset, true) : view.getBigUint64(offset, true);
    }
    case 'string': {
      let end = offset;
      while (end < offset + type.size && bytes[end] !== 0) end++;
      return new TextDecoder().decode(bytes.subarray(offset, end));
    }
    case 'array': {
      const step = typeSize(type.element);
      return Array.from({ length: type.length }, (_, i) => decodeTyped(bytes, type.element, offset + i * step));
    }
    case 'struct': {
      const out: { [field: string]: TypedValue } = {};
      for (const f of type.fields) out[f.name] = decodeTyped(bytes, f.type, offset + f.offset);
      return out;
    }
  }
}

/**
 * One entry of a snapshot. For per-CPU maps `values` has one entry per CPU. A queue or stack map
 * has one entry per value it holds, in the order pops would take them, each with a key of 0 bytes
 * (and no `typedKey`).
 */
export interface SnapshotEntry {
  key: Uint8Array;
  values: Uint8Array[];
  typedKey?: TypedValue;
  typedValues?: TypedValue[];
}

export interface MapSnapshot {
  name: string;
  type: string;
  keySize: number;
  valueSize: number;
  maxEntries: number;
  entries: SnapshotEntry[];
}

/**
 * Copies a map's keys and values (for the agent's reports), in get_next_key order (queue and
 * stack maps: in pop order, without popping). With type descriptions, each entry also carries
 * decoded keys and values. Ring buffers, fd arrays and stack trace maps (always empty here) give
 * no entries.
 */
export function snapshotMap(map: BpfMap, types: { key?: TypeDescription; value?: TypeDescription } = {}): MapSnapshot {
  const spec = map.spec;
  const perCpu =
    spec.type === MapType.percpuArray || spec.type === MapType.percpuHash || spec.type === MapType.lruPercpuHash;
  const entries: SnapshotEntry[] = [];
  const split = (user: Uint8Array): Uint8Array[] => {
    if (!perCpu) return [user];
    const stride = roundUp8(spec.valueSize);
    const out: Uint8Array[] = [];
    for (let at = 0; at < user.length; at += stride) out.push(user.slice(at, at + spec.valueSize));
    return out;
  };
  const pairs: Iterable<[Uint8Array, Uint8Array]> =
    map instanceof HashMap
      ? map.entries()
      : map instanceof ArrayMap && !map.isFdArray
        ? (function* () {
            for (const k of map.keys()) yield [k, map.lookup(k) as Uint8Array] as [Uint8Array, Uint8Array];
          })()
        : map instanceof QueueStackMap
          ? (function* () {
              for (const v of map.valuesInPopOrder()) yield [new Uint8Array(0), v] as [Uint8Array, Uint8Array];
            })()
          : [];
  for (const [key, user] of pairs) {
    const e: SnapshotEntry = { key, values: split(user) };
    if (types.key && key.length > 0) e.typedKey = decodeTyped(key, types.key);
    if (types.value) {
      const t = types.value;
      e.typedValues = e.values.map((v) => decodeTyped(v, t));
    }
    entries.push(e);
  }
  return {
    name: spec.name,
    type: mapTypeNames[spec.type],
    keySize: spec.keySize,
    valueSize: spec.valueSize,
    maxEntries: spec.maxEntries,
    entries,
  };
}
