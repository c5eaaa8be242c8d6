// Encoders of the output payloads (docs/OUTPUTS.md): a loaded spec's maps, its output queue and a
// target's counters, as the JSON data an agent uploads.
import type { ValueType } from '@probeyard/compat';
import { decodeTyped, type MapSnapshot, type TypedValue, typeSize, type VmOutput } from '@probeyard/vm';
import type { TargetCounters } from './dispatcher.js';
import type { LoadedSpec } from './load-spec.js';
import type { CountersPayload, EventsPayload, JsonValue, MapSnapshotJson, MapSnapshotPayload, OutputEventJson, SnapshotEntryJson } from './payloads.js';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const padding = /^_*pad/;

/** An integer as JSON: a number when exact, else its decimal string. */
export function jsonOfInteger(v: bigint | number): number | string {
  if (typeof v === 'number') return v;
  return v <= MAX_SAFE && v >= -MAX_SAFE ? Number(v) : v.toString();
}

/**
 * Text as the kernel's readers see it: a C string ends at its first NUL (a `char[16]` comm's
 * padding, a `%c` of 0 in a `bpf_trace_printk` line). The registry stores text, and text cannot
 * hold U+0000, so nothing after it is kept.
 */
export function cString(s: string): string {
  const nul = s.indexOf('\0');
  return nul < 0 ? s : s.slice(0, nul);
}

/** A decoded value as JSON data: integers as numbers (strings beyond ±2^53), strings up to a NUL, structs without padding members. */
export function jsonOfTyped(v: TypedValue): JsonValue {
  if (typeof v === 'bigint' || typeof v === 'number') return jsonOfInteger(v);
  if (typeof v === 'string') return cString(v);
  if (Array.isArray(v)) return v.map(jsonOfTyped);
  const out: { [k: string]: JsonValue } = {};
  for (const [k, x] of Object.entries(v)) if (!padding.test(k)) out[k] = jsonOfTyped(x);
  return out;
}

const hexOf = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

/** Bytes without a type: 1, 2, 4 or 8 bytes as a little-endian unsigned integer, else undefined. */
export function untypedInteger(raw: Uint8Array | undefined): bigint | undefined {
  if (!raw || (raw.length !== 1 && raw.length !== 2 && raw.length !== 4 && raw.length !== 8)) return undefined;
  let v = 0n;
  for (let i = raw.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(raw[i]!);
  return v;
}

/** Decodes bytes with `type` when it fits them, else as an untyped integer, else `{ hex }`. */
export function decodeBytes(bytes: Uint8Array, type: ValueType | undefined): TypedValue | { hex: string } {
  if (type !== undefined && typeSize(type) <= bytes.length) return decodeTyped(bytes, type);
  const n = untypedInteger(bytes);
  return n !== undefined ? n : { hex: hexOf(bytes) };
}

const jsonOfDecoded = (v: TypedValue | { hex: string }): JsonValue => (typeof v === 'object' && v !== null && !Array.isArray(v) && 'hex' in v && typeof v.hex === 'string' && Object.keys(v).length === 1 ? { hex: v.hex } : jsonOfTyped(v as TypedValue));

/** Sums per-CPU values when they are integers or arrays of integers; undefined otherwise. */
export function sumCounters(values: readonly (TypedValue | { hex: string })[]): TypedValue | undefined {
  const first = values[0];
  if (first === undefined) return undefined;
  if (typeof first === 'number' || typeof first === 'bigint') {
    let s = 0n;
    for (const v of values) {
      if (typeof v !== 'number' && typeof v !== 'bigint') return undefined;
      s += BigInt(v);
    }
    return s;
  }
  if (Array.isArray(first)) {
    const out: bigint[] = new Array<bigint>(first.length).fill(0n);
    for (const v of values) {
      if (!Array.isArray(v) || v.length !== first.length) return undefined;
      for (let i = 0; i < v.length; i++) {
        const x = v[i];
        if (typeof x !== 'number' && typeof x !== 'bigint') return undefined;
        out[i]! += BigInt(x);
      }
    }
    return out;
  }
  return undefined;
}

const isZero = (b: Uint8Array) => {
  for (let i = 0; i < b.length; i++) if (b[i] !== 0) return false;
  return true;
};

/** Options of {@link encodeMapSnapshot}. */
export interface MapSnapshotOptions {
  runId: string;
  /** Default: now. */
  takenAt?: Date;
  /** Trace time of the last record seen, ns (decimal string); default '0'. */
  traceTimeNs?: string;
  eventsSeen: number;
  eventsLost: number;
  /** Entries kept per map at most (default 10,000); the rest are counted in `truncated`. */
  maxEntries?: number;
}

/** One map of a loaded spec as a snapshot map (entries decoded), from a vm {@link MapSnapshot}. */
export function encodeSnapshotMap(
  snap: MapSnapshot,
  spec: { keyType?: ValueType; valueType?: ValueType; display: MapSnapshotJson['display'] },
  maxEntries = 10_000,
): MapSnapshotJson {
  const entries: SnapshotEntryJson[] = [];
  let truncated = 0;
  const skipZero = snap.type.endsWith('array') && snap.maxEntries > 1;
  for (const e of snap.entries) {
    if (skipZero && e.values.every(isZero)) continue;
    if (entries.length >= maxEntries) {
      truncated++;
      continue;
    }
    const key = jsonOfDecoded(decodeBytes(e.key, spec.keyType));
    const decoded = e.values.map((v) => decodeBytes(v, spec.valueType));
    if (decoded.length === 1) {
      entries.push({ key, value: jsonOfDecoded(decoded[0]!) });
      continue;
    }
    const sum = sumCounters(decoded);
    entries.push(sum !== undefined ? { key, value: jsonOfTyped(sum) } : { key, values: decoded.map(jsonOfDecoded) });
  }
  const out: MapSnapshotJson = { name: snap.name, type: snap.type, maxEntries: snap.maxEntries, display: spec.display, entries, truncated };
  if (spec.keyType) out.keyType = spec.keyType;
  if (spec.valueType) out.valueType = spec.valueType;
  return out;
}

/**
 * A `map_snapshot` payload of a loaded spec: every map but `hidden` and `events` ones, decoded
 * with the spec's BTF key and value types where it has them.
 */
export function encodeMapSnapshot(loaded: LoadedSpec, options: MapSnapshotOptions): MapSnapshotPayload {
  const maps: MapSnapshotJson[] = [];
  const snaps = loaded.snapshot();
  snaps.forEach((snap, i) => {
    const display = loaded.displays[i]!;
    if (display.kind === 'hidden' || display.kind === 'events') return;
    const s = loaded.spec.maps[i]!;
    const spec: Parameters<typeof encodeSnapshotMap>[1] = { display };
    if (s.keyType) spec.keyType = s.keyType;
    if (s.valueType) spec.valueType = s.valueType;
    maps.push(encodeSnapshotMap(snap, spec, options.maxEntries));
  });
  return {
    v: 1,
    runId: options.runId,
    takenAt: (options.takenAt ?? new Date()).toISOString(),
    traceTimeNs: options.traceTimeNs ?? '0',
    eventsSeen: options.eventsSeen,
    eventsLost: options.eventsLost,
    maps,
  };
}

/**
 * An `events` payload: outputs in emission order, each ring-buffer or perf record decoded with
 * the record layout its map has in the object's BTF (`SpecMap.eventType`: a struct named like the
 * map's events; for a ring buffer also its value type) when the record is long enough for it,
 * else `{ hex }`.
 */
export function encodeEvents(loaded: LoadedSpec, outputs: readonly VmOutput[], dropped: number, runId: string): EventsPayload {
  const typeOf = new Map<string, ValueType | undefined>();
  for (const m of loaded.spec.maps) if (m.type === 27 || m.type === 4) typeOf.set(m.name, m.eventType ?? (m.type === 27 ? m.valueType : undefined));
  const events: OutputEventJson[] = outputs.map((o) => {
    if (o.kind === 'printk') return { timeNs: o.timestamp.toString(), cpu: o.cpu, source: 'printk', text: cString(o.text) };
    const type = typeOf.get(o.map);
    const data = type !== undefined && typeSize(type) <= o.data.length ? jsonOfTyped(decodeTyped(o.data, type)) : { hex: hexOf(o.data) };
    return { timeNs: o.timestamp.toString(), cpu: o.cpu, source: o.kind, map: o.map, data };
  });
  return { v: 1, runId, events, dropped };
}

/** A `counters` payload of a target's counters. */
export function encodeCounters(
  c: Omit<TargetCounters, 'kernelReadsFailed' | 'userReadsFailed'> & Partial<Pick<TargetCounters, 'kernelReadsFailed'>>,
  options: { runId: string; takenAt?: Date; kernelReadsFailed?: number },
): CountersPayload {
  return {
    v: 1,
    runId: options.runId,
    takenAt: (options.takenAt ?? new Date()).toISOString(),
    eventsSeen: c.eventsSeen,
    runs: c.runs,
    instructions: c.instructions,
    faults: c.faults,
    lostEvents: c.lostEvents,
    cpuNs: c.cpuNs,
    outputsDropped: c.outputsDropped,
    kernelReadsFailed: options.kernelReadsFailed ?? c.kernelReadsFailed ?? 0,
  };
}
