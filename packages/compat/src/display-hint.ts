import { CompatError } from './errors.js';

/**
 * How a map wants to be shown (bpftrace's printing, Grafana's panels). It travels with a program
 * version inside its spec, so the CLI, the agent's outputs and the web app draw a map the same way.
 *
 * - `counts`: `@name[key]: value` rows sorted by value (bpftrace's `count()`, `sum()`, `min()`, `max()`).
 * - `log2-histogram`: a power-of-two histogram (bpftrace's `hist()`); `bucket` says which slot a
 *   value lands in. Drawn with bpftrace's `[lo, hi)` labels and power-of-two units (1K, 1M).
 * - `linear-histogram`: bpftrace's `lhist(v, min, max, step)`.
 * - `average` / `stats`: bpftrace's `avg()` / `stats()` (the value holds a count and a total).
 * - `value`: one scalar (`@x = expr`).
 * - `table`: structured values, one row per key.
 * - `events`: a ring buffer or perf event array: records are output events, not map contents.
 * - `hidden`: internal state (`.rodata`, `.bss`, scratch per-CPU buffers): never drawn by default.
 *
 * Map layouts each kind is drawn from (the drawing side accepts each shape listed):
 * - `counts`, `value`: an integer value per key (per-CPU maps: summed).
 * - histograms: either the key is the slot (an integer key, or a struct/array key whose last member
 *   is the slot, the members before it the histogram's own key, as bpftrace's `@h[comm] = hist(x)`)
 *   and the value its count; or the value is an array of counts, element i being slot i (a struct
 *   whose one array member holds the slots, as libbpf-tools' `struct hist { __u32 slots[N]; }`).
 * - `average`, `stats`: the value is a struct with integer members `count` and `total` (and, for
 *   `stats`, optionally `min` and `max`).
 */
export type DisplayHint =
  | ({ kind: 'counts' } & DisplayCommon)
  | ({ kind: 'log2-histogram'; bucket: Log2Bucketing } & DisplayCommon)
  | ({ kind: 'linear-histogram'; min: number; max: number; step: number } & DisplayCommon)
  | ({ kind: 'average' } & DisplayCommon)
  | ({ kind: 'stats' } & DisplayCommon)
  | ({ kind: 'value' } & DisplayCommon)
  | ({ kind: 'table' } & DisplayCommon)
  | ({ kind: 'events' } & DisplayCommon)
  | ({ kind: 'hidden' } & DisplayCommon);

/**
 * Which slot a value lands in, for a log2 histogram:
 * - `bpftrace`: bpftrace's `hist()` (slot 0 counts negative values, slot 1 the value 0, slot k+2
 *   counts [2^k, 2^(k+1)));
 * - `libbpf-tools`: `log2l(v)` as bcc's libbpf-tools do (slot k counts [2^k, 2^(k+1)), values 0 and
 *   1 both in slot 0).
 */
export type Log2Bucketing = 'bpftrace' | 'libbpf-tools';

export interface DisplayCommon {
  /** Unit of the values (`ns`, `us`, `bytes`, `events`), when known. */
  unit?: string;
  /** Where the hint came from: the script compiler, a convention of the object, or publish metadata. */
  source?: 'script' | 'convention' | 'metadata';
}

export const displayKinds = ['counts', 'log2-histogram', 'linear-histogram', 'average', 'stats', 'value', 'table', 'events', 'hidden'] as const;
export type DisplayKind = (typeof displayKinds)[number];

const bad = (what: string, detail: string) => new CompatError('malformed', `display hint ${what}: ${detail}`);

/** Reads a display hint from JSON-safe data; `malformed` names the bad member. */
export function parseDisplayHint(v: unknown, what = 'display'): DisplayHint {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(what, 'want an object');
  const o = v as Record<string, unknown>;
  const kind = o.kind;
  if (typeof kind !== 'string' || !(displayKinds as readonly string[]).includes(kind)) throw bad(what, `unknown kind '${String(kind)}'`);
  const common: DisplayCommon = {};
  if (o.unit !== undefined) {
    if (typeof o.unit !== 'string' || o.unit.length > 32) throw bad(what, 'unit: want a string of at most 32 characters');
    common.unit = o.unit;
  }
  if (o.source !== undefined) {
    if (o.source !== 'script' && o.source !== 'convention' && o.source !== 'metadata') throw bad(what, `source: unknown '${String(o.source)}'`);
    common.source = o.source;
  }
  const num = (key: string) => {
    const x = o[key];
    if (typeof x !== 'number' || !Number.isSafeInteger(x)) throw bad(what, `${key}: want an integer`);
    return x;
  };
  switch (kind as DisplayKind) {
    case 'log2-histogram': {
      const bucket = o.bucket;
      if (bucket !== 'bpftrace' && bucket !== 'libbpf-tools') throw bad(what, `bucket: unknown '${String(bucket)}'`);
      return { kind: 'log2-histogram', bucket, ...common };
    }
    case 'linear-histogram': {
      const min = num('min');
      const max = num('max');
      const step = num('step');
      if (step <= 0 || max <= min) throw bad(what, `want min < max and step > 0, got min ${min}, max ${max}, step ${step}`);
      return { kind: 'linear-histogram', min, max, step, ...common };
    }
    default:
      return { kind: kind as Exclude<DisplayKind, 'log2-histogram' | 'linear-histogram'>, ...common } as DisplayHint;
  }
}

/** The prefix of a BTF declaration tag that carries a map's display hint in a C object. */
export const displayTagPrefix = 'probeyard.display:';

/**
 * Reads the text of a display tag: `KIND[,key=value...]` after {@link displayTagPrefix}, as a C
 * program writes it on a map with `__attribute__((btf_decl_tag("probeyard.display:hidden")))` or
 * `"probeyard.display:log2-histogram,bucket=libbpf-tools,unit=us"`. Integers (`min`, `max`,
 * `step`) are read as numbers. The hint's `source` is `metadata`.
 */
export function parseDisplayTag(text: string, what = 'display tag'): DisplayHint {
  if (!text.startsWith(displayTagPrefix)) throw bad(what, `want '${displayTagPrefix}KIND[,key=value...]', got '${text}'`);
  const [kind, ...pairs] = text.slice(displayTagPrefix.length).split(',');
  const o: Record<string, unknown> = { kind: kind?.trim(), source: 'metadata' };
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw bad(what, `'${pair}' is not key=value`);
    const key = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (key === 'kind' || key === 'source') throw bad(what, `'${key}' cannot be set by a pair`);
    o[key] = /^-?\d+$/.test(value) ? Number(value) : value;
  }
  return parseDisplayHint(o, what);
}
