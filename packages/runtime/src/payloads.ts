// The output payloads of docs/OUTPUTS.md as TypeScript types, and validators that read untrusted
// JSON (what an agent uploads) into exactly these shapes: unknown members are left out of the
// copy they return, anything else off-contract is a RuntimeError `malformed` naming its path.
import { type DisplayHint, parseDisplayHint, type ValueType } from '@probeyard/compat';
import { RuntimeError } from './errors.js';

/** A decoded key or value: integers as numbers (decimal strings beyond ±2^53), `char[N]` as strings, structs as objects, arrays as arrays; `{ hex }` for bytes without a type. */
export type JsonValue = number | string | boolean | null | JsonValue[] | { [member: string]: JsonValue };

/** One entry of a map snapshot: `value` (per-CPU integers and counter arrays summed), or `values`, one per CPU. */
export interface SnapshotEntryJson {
  key: JsonValue;
  value?: JsonValue;
  values?: JsonValue[];
}

/** One map of a `map_snapshot`. */
export interface MapSnapshotJson {
  name: string;
  /** The map type's name (`hash`, `array`, `percpu_hash`, ...). */
  type: string;
  /** The map's `max_entries` (a map of one entry is a scalar: drawn `@name: value`). */
  maxEntries?: number;
  display: DisplayHint;
  keyType?: ValueType;
  valueType?: ValueType;
  entries: SnapshotEntryJson[];
  /** Entries left out over the per-snapshot limit. */
  truncated: number;
}

/** `kind: "map_snapshot"`: every shown map, cumulative since the run began. */
export interface MapSnapshotPayload {
  v: 1;
  runId: string;
  /** The node's wall clock, ISO 8601. */
  takenAt: string;
  /** Trace timestamp of the last record seen, ns, decimal. */
  traceTimeNs: string;
  eventsSeen: number;
  eventsLost: number;
  maps: MapSnapshotJson[];
}

/** One output event of a program. */
export interface OutputEventJson {
  timeNs: string;
  cpu: number;
  source: 'ringbuf' | 'perf' | 'printk';
  /** The ring buffer or perf event array (absent for printk). */
  map?: string;
  /** The record, decoded with its BTF type where known, else `{ hex }` (absent for printk). */
  data?: JsonValue;
  /** The printk line. */
  text?: string;
}

/** `kind: "events"`: what the programs emitted, in order, bounded, with what was dropped. */
export interface EventsPayload {
  v: 1;
  runId: string;
  events: OutputEventJson[];
  dropped: number;
}

/** `kind: "counters"`: the target's cost and health, cumulative per run. */
export interface CountersPayload {
  v: 1;
  runId: string;
  takenAt: string;
  eventsSeen: number;
  runs: number;
  instructions: number;
  faults: number;
  lostEvents: number;
  cpuNs: number;
  outputsDropped: number;
  kernelReadsFailed: number;
}

/** The kinds of output batches and their payloads. */
export type OutputKind = 'map_snapshot' | 'events' | 'counters';
export type OutputPayload<K extends OutputKind> = K extends 'map_snapshot' ? MapSnapshotPayload : K extends 'events' ? EventsPayload : CountersPayload;

// ---- validators ---------------------------------------------------------------------------------

/** Limits of the validators (hostile input must cost little). */
const MAX_DEPTH = 16;
const MAX_NAME = 256;

type Obj = Record<string, unknown>;
const bad = (path: string, detail: string) => new RuntimeError('malformed', `output payload ${path}: ${detail}`, { path });
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function obj(v: unknown, path: string): Obj {
  if (!isObj(v)) throw bad(path, 'want an object');
  return v;
}
function str(o: Obj, key: string, path: string, max = MAX_NAME): string {
  const v = o[key];
  if (typeof v !== 'string') throw bad(`${path}.${key}`, 'want a string');
  if (v.length > max) throw bad(`${path}.${key}`, `longer than ${max} characters (${v.length})`);
  return v;
}
function count(o: Obj, key: string, path: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw bad(`${path}.${key}`, 'want an integer >= 0');
  return v;
}
function decimal(o: Obj, key: string, path: string): string {
  const v = o[key];
  if (typeof v !== 'string' || !/^(0|[1-9][0-9]{0,19})$/.test(v)) throw bad(`${path}.${key}`, 'want a decimal string');
  return v;
}
function isoTime(o: Obj, key: string, path: string): string {
  const v = str(o, key, path, 40);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(v) || Number.isNaN(Date.parse(v))) throw bad(`${path}.${key}`, `want an ISO 8601 UTC time, got '${v}'`);
  return v;
}
function version(o: Obj, path: string): 1 {
  if (o.v !== 1) throw bad(`${path}.v`, `want 1, got ${JSON.stringify(o.v)}`);
  return 1;
}
function arr(o: Obj, key: string, path: string): unknown[] {
  const v = o[key];
  if (!Array.isArray(v)) throw bad(`${path}.${key}`, 'want an array');
  return v;
}

/** Checks a decoded key or value: JSON data only (finite numbers), nested at most 16 deep. */
export function parseJsonValue(v: unknown, path = 'value', depth = 0): JsonValue {
  if (depth > MAX_DEPTH) throw bad(path, `nested deeper than ${MAX_DEPTH}`);
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw bad(path, 'want a finite number');
    return v;
  }
  if (Array.isArray(v)) return v.map((x, i) => parseJsonValue(x, `${path}[${i}]`, depth + 1));
  if (isObj(v)) {
    const out: { [k: string]: JsonValue } = {};
    // defineProperty: a member named `__proto__` stays a member, never the copy's prototype
    for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: parseJsonValue(x, `${path}.${k}`, depth + 1), enumerable: true, writable: true, configurable: true });
    return out;
  }
  throw bad(path, `not JSON data (${typeof v})`);
}

function parseValueType(v: unknown, path: string, depth = 0): ValueType {
  if (depth > MAX_DEPTH) throw bad(path, `nested deeper than ${MAX_DEPTH}`);
  const o = obj(v, path);
  switch (o.kind) {
    case 'int': {
      const size = o.size;
      if (size !== 1 && size !== 2 && size !== 4 && size !== 8) throw bad(`${path}.size`, 'want 1, 2, 4 or 8');
      if (o.signed !== undefined && typeof o.signed !== 'boolean') throw bad(`${path}.signed`, 'want a boolean');
      return o.signed === undefined ? { kind: 'int', size } : { kind: 'int', size, signed: o.signed };
    }
    case 'string':
      return { kind: 'string', size: count(o, 'size', path) };
    case 'array':
      return { kind: 'array', element: parseValueType(o.element, `${path}.element`, depth + 1), length: count(o, 'length', path) };
    case 'struct':
      return {
        kind: 'struct',
        fields: arr(o, 'fields', path).map((f, i) => {
          const fo = obj(f, `${path}.fields[${i}]`);
          const fp = `${path}.fields[${i}]`;
          return { name: str(fo, 'name', fp), offset: count(fo, 'offset', fp), type: parseValueType(fo.type, `${fp}.type`, depth + 1) };
        }),
      };
    default:
      throw bad(`${path}.kind`, `unknown '${String(o.kind)}'`);
  }
}

function parseEntry(v: unknown, path: string): SnapshotEntryJson {
  const o = obj(v, path);
  if (!('key' in o)) throw bad(`${path}.key`, 'missing');
  const out: SnapshotEntryJson = { key: parseJsonValue(o.key, `${path}.key`) };
  if (o.value !== undefined) out.value = parseJsonValue(o.value, `${path}.value`);
  if (o.values !== undefined) out.values = arr(o, 'values', path).map((x, i) => parseJsonValue(x, `${path}.values[${i}]`));
  if ((out.value === undefined) === (out.values === undefined)) throw bad(path, 'want exactly one of value and values');
  return out;
}

function parseMap(v: unknown, path: string): MapSnapshotJson {
  const o = obj(v, path);
  let display: DisplayHint;
  try {
    display = parseDisplayHint(o.display, 'display');
  } catch (e) {
    throw bad(`${path}.display`, e instanceof Error ? e.message : String(e));
  }
  const out: MapSnapshotJson = {
    name: str(o, 'name', path),
    type: str(o, 'type', path, 32),
    display,
    entries: arr(o, 'entries', path).map((e, i) => parseEntry(e, `${path}.entries[${i}]`)),
    truncated: count(o, 'truncated', path),
  };
  if (o.maxEntries !== undefined) out.maxEntries = count(o, 'maxEntries', path);
  if (o.keyType !== undefined) out.keyType = parseValueType(o.keyType, `${path}.keyType`);
  if (o.valueType !== undefined) out.valueType = parseValueType(o.valueType, `${path}.valueType`);
  return out;
}

/** Reads a `map_snapshot` payload from untrusted JSON data (a clean copy), or throws `malformed`. */
export function parseMapSnapshotPayload(v: unknown): MapSnapshotPayload {
  const o = obj(v, 'map_snapshot');
  const p = 'map_snapshot';
  return {
    v: version(o, p),
    runId: str(o, 'runId', p, 64),
    takenAt: isoTime(o, 'takenAt', p),
    traceTimeNs: decimal(o, 'traceTimeNs', p),
    eventsSeen: count(o, 'eventsSeen', p),
    eventsLost: count(o, 'eventsLost', p),
    maps: arr(o, 'maps', p).map((m, i) => parseMap(m, `${p}.maps[${i}]`)),
  };
}

const sources = new Set(['ringbuf', 'perf', 'printk']);

/** Reads an `events` payload from untrusted JSON data (a clean copy), or throws `malformed`. */
export function parseEventsPayload(v: unknown): EventsPayload {
  const p = 'events';
  const o = obj(v, p);
  return {
    v: version(o, p),
    runId: str(o, 'runId', p, 64),
    events: arr(o, 'events', p).map((e, i) => {
      const ep = `${p}.events[${i}]`;
      const eo = obj(e, ep);
      const source = eo.source;
      if (typeof source !== 'string' || !sources.has(source)) throw bad(`${ep}.source`, `want ringbuf, perf or printk, got ${JSON.stringify(source)}`);
      const out: OutputEventJson = { timeNs: decimal(eo, 'timeNs', ep), cpu: count(eo, 'cpu', ep), source: source as OutputEventJson['source'] };
      if (source === 'printk') {
        out.text = str(eo, 'text', ep, 4096);
      } else {
        out.map = str(eo, 'map', ep);
        if (!('data' in eo)) throw bad(`${ep}.data`, 'missing');
        out.data = parseJsonValue(eo.data, `${ep}.data`);
      }
      return out;
    }),
    dropped: count(o, 'dropped', p),
  };
}

/** Reads a `counters` payload from untrusted JSON data (a clean copy), or throws `malformed`. */
export function parseCountersPayload(v: unknown): CountersPayload {
  const p = 'counters';
  const o = obj(v, p);
  return {
    v: version(o, p),
    runId: str(o, 'runId', p, 64),
    takenAt: isoTime(o, 'takenAt', p),
    eventsSeen: count(o, 'eventsSeen', p),
    runs: count(o, 'runs', p),
    instructions: count(o, 'instructions', p),
    faults: count(o, 'faults', p),
    lostEvents: count(o, 'lostEvents', p),
    cpuNs: count(o, 'cpuNs', p),
    outputsDropped: count(o, 'outputsDropped', p),
    kernelReadsFailed: count(o, 'kernelReadsFailed', p),
  };
}

/** The validator of an output kind. */
export function parseOutputPayload<K extends OutputKind>(kind: K, v: unknown): OutputPayload<K> {
  switch (kind) {
    case 'map_snapshot':
      return parseMapSnapshotPayload(v) as OutputPayload<K>;
    case 'events':
      return parseEventsPayload(v) as OutputPayload<K>;
    case 'counters':
      return parseCountersPayload(v) as OutputPayload<K>;
    default:
      throw bad('kind', `unknown '${String(kind)}'`);
  }
}
