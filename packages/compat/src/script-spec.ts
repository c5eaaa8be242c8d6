import type { SpecAttach, ValueType } from './program-spec.js';

/**
 * A probe the runtime fires itself, not a kernel event: a script's `BEGIN`, `END` and
 * `interval:…` blocks (packages/script). Its program attaches as `{ kind: 'other', section }`
 * with `section` one of:
 *
 * - `BEGIN`: run once before the first record (several run in spec order);
 * - `END`: run once after the last record, or after an `exit` action, before the maps are printed;
 * - `interval/<N>`: run every N nanoseconds of trace time from the start of the run (on a replay
 *   the records' clock, so a replay gives the same output every time).
 *
 * The runtime runs such a program with a record of at least 8 zero bytes as its context (a common
 * header with pid 0; the compiler never reads it) on CPU 0, with the trace time of the moment as
 * its timestamp: the first record's for BEGIN, the last record's for END, start + k·N for an
 * interval. The verifier checks it with a tracepoint context of no particular event.
 */
export type RuntimeProbe = { kind: 'begin' } | { kind: 'end' } | { kind: 'interval'; periodNs: number };

const intervalRe = /^interval\/([1-9]\d{0,15})$/;

/** The runtime probe a program's attach point names, or undefined for a kernel event. */
export function runtimeProbeOf(attach: SpecAttach): RuntimeProbe | undefined {
  if (attach.kind !== 'other') return undefined;
  if (attach.section === 'BEGIN') return { kind: 'begin' };
  if (attach.section === 'END') return { kind: 'end' };
  const m = intervalRe.exec(attach.section);
  if (m) {
    const periodNs = Number(m[1]);
    if (Number.isSafeInteger(periodNs)) return { kind: 'interval', periodNs };
  }
  return undefined;
}

/** The section of a runtime probe (`BEGIN`, `END`, `interval/1000000000`). */
export function runtimeProbeSection(probe: RuntimeProbe): string {
  return probe.kind === 'begin' ? 'BEGIN' : probe.kind === 'end' ? 'END' : `interval/${probe.periodNs}`;
}

/**
 * One argument of a `printf` record: its byte offset in the record (after the 8-byte action
 * index) and its type (`int` of 8 bytes, or a NUL-padded `string`).
 */
export interface ScriptPrintfArg {
  byteOffset: number;
  type: ValueType;
}

/**
 * What a record of a script's output ring buffer asks the runtime to do; the record's first
 * 8 bytes (u64, little-endian) are the index of its action in {@link SpecScript.actions}.
 *
 * - `printf`: text, formatted from `format` (bpftrace's printf dialect) and the record's arguments;
 *   packages/script's `formatPrintf` renders it;
 * - `print`: print map `map` (index in `spec.maps`) now, as at the end of a run; `top` > 0 keeps
 *   only the `top` largest entries, `div` > 1 divides every value (bpftrace's `print(@m, top, div)`);
 * - `clear`: delete every entry of `map`; `zero`: set every value of `map` to zero, keys kept;
 * - `time`: the wall-clock time when the record is handled, formatted with strftime conversions
 *   (`formatTime`; bpftrace's `time("fmt")`, default `"%H:%M:%S\n"`);
 * - `exit`: stop the run (END programs still run, then the maps are printed).
 */
export type ScriptAction =
  | { kind: 'printf'; format: string; args: ScriptPrintfArg[] }
  | { kind: 'print'; map: number; top: number; div: number }
  | { kind: 'clear'; map: number }
  | { kind: 'zero'; map: number }
  | { kind: 'time'; format: string }
  | { kind: 'exit' };

/**
 * The runtime side of a program compiled from a script (packages/script): its text, and the
 * actions its output ring buffer carries (see {@link ScriptAction}). Its BEGIN, END and interval
 * probes are programs with a {@link RuntimeProbe} attach point.
 */
export interface SpecScript {
  /** The script as written. */
  source: string;
  /** The ring buffer map (index in `spec.maps`) whose records are actions; -1 when there is none. */
  outputMap: number;
  actions: ScriptAction[];
}
