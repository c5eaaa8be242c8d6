// A script's run (a spec compiled by packages/script, `spec.script` present) as bpftrace runs one:
// BEGIN before the first record, interval probes by trace time, the output ring buffer's actions
// in order (printf text, time, print a map, clear, zero, exit), END after the last record or an exit.
// The conventions are packages/compat's (`script-spec.ts`: runtime probes and actions).
import { formatPrintf, formatTime, runtimeProbeOf, type ScriptAction } from '@probeyard/compat';
import type { RecordStream, TraceRecord } from '@probeyard/formats';
import { type EventRuntime, snapshotMap } from '@probeyard/vm';
import type { Dispatcher } from './dispatcher.js';
import { drawMap } from './draw/draw-maps.js';
import { encodeSnapshotMap } from './encode.js';
import type { LoadedSpec } from './load-spec.js';
import type { JsonValue, MapSnapshotJson } from './payloads.js';

/** Options of a {@link ScriptSession}. */
export interface ScriptSessionOptions {
  /** Receives printf text and the maps `print()` draws, in order. */
  onText: (text: string) => void;
  /** The wall clock `time()` prints (when the action is handled, as bpftrace's user space does); default `new Date()`. */
  now?: () => Date;
}

interface IntervalProbe {
  runtime: EventRuntime;
  periodNs: bigint;
  dueNs: bigint;
}

/** The 8-byte zero record a runtime probe runs on (a common header with pid 0). */
const emptyRecord = new Uint8Array(8);

/** Options of {@link ScriptSession.run}. */
export interface ScriptRunOptions {
  /** Stops reading after the batch during which it is aborted (END still runs). */
  signal?: AbortSignal;
  /** Called after each batch; true stops reading (END still runs). */
  onBatch?: () => boolean | undefined | Promise<boolean | undefined>;
}

/**
 * Runs the runtime side of a loaded script. Without `spec.script` it does nothing but dispatch
 * (any spec can run through it). Use {@link run} for a whole stream, or {@link begin},
 * {@link beforeRecord}, {@link drain} and {@link end} around a loop of one's own.
 */
export class ScriptSession {
  readonly loaded: LoadedSpec;
  /** An exit action was carried out: no more records. */
  exited = false;
  private readonly onText: (text: string) => void;
  private readonly now: () => Date;
  private readonly begins: EventRuntime[] = [];
  private readonly ends: EventRuntime[] = [];
  private readonly intervals: IntervalProbe[] = [];
  /** The earliest interval due, split in halves so the per-record check needs no BigInt. */
  private dueHigh = 0xffffffff;
  private dueLow = 0xffffffff;
  private begun = false;
  private lastNs = 0n;

  constructor(loaded: LoadedSpec, options: ScriptSessionOptions) {
    this.loaded = loaded;
    this.onText = options.onText;
    this.now = options.now ?? (() => new Date());
    for (const p of loaded.programs) {
      const spec = loaded.spec.programs.find((x) => x.name === p.name);
      const probe = spec === undefined ? undefined : runtimeProbeOf(spec.attach);
      if (probe?.kind === 'begin') this.begins.push(p.runtime);
      else if (probe?.kind === 'end') this.ends.push(p.runtime);
      else if (probe?.kind === 'interval') this.intervals.push({ runtime: p.runtime, periodNs: BigInt(probe.periodNs), dueNs: 0n });
    }
  }

  /** Whether the script has interval probes (a loop without records must keep a clock for them). */
  get hasIntervals(): boolean {
    return this.intervals.length > 0;
  }

  private runProbe(rt: EventRuntime, ns: bigint): void {
    rt.runEvent({ cpu: 0, timestamp: ns, data: emptyRecord, pid: 0 });
    this.drain();
  }

  /** Runs the BEGIN programs at trace time `ns` (the first record's time on a replay); intervals count from it. */
  begin(ns: bigint): void {
    if (this.begun) return;
    this.begun = true;
    this.lastNs = ns;
    for (const i of this.intervals) i.dueNs = ns + i.periodNs;
    this.setDue();
    for (const rt of this.begins) if (!this.exited) this.runProbe(rt, ns);
  }

  private setDue(): void {
    let due: bigint | undefined;
    for (const i of this.intervals) if (due === undefined || i.dueNs < due) due = i.dueNs;
    if (due === undefined) {
      this.dueHigh = 0xffffffff;
      this.dueLow = 0xffffffff;
    } else {
      this.dueHigh = Number((due >> 32n) & 0xffffffffn);
      this.dueLow = Number(due & 0xffffffffn);
    }
  }

  /** Fires every interval due at or before trace time `ns`, in time order. */
  advance(ns: bigint): void {
    if (!this.begun) this.begin(ns);
    for (;;) {
      let next: IntervalProbe | undefined;
      for (const i of this.intervals) if (i.dueNs <= ns && (next === undefined || i.dueNs < next.dueNs)) next = i;
      if (next === undefined || this.exited) break;
      const at = next.dueNs;
      next.dueNs += next.periodNs;
      this.runProbe(next.runtime, at);
    }
    this.lastNs = ns;
    this.setDue();
  }

  /** Call before dispatching a record: runs BEGIN before the first one, and the intervals due. */
  beforeRecord(r: Pick<TraceRecord, 'tsHigh' | 'tsLow'>): void {
    const hi = r.tsHigh >>> 0;
    if (!this.begun || hi > this.dueHigh || (hi === this.dueHigh && r.tsLow >>> 0 >= this.dueLow)) {
      this.advance((BigInt(r.tsHigh >>> 0) << 32n) | BigInt(r.tsLow >>> 0));
    }
  }

  /** Carries out the actions emitted since the last call; true once an exit was among them. */
  drain(): boolean {
    const script = this.loaded.spec.script;
    if (this.loaded.outputs.length === 0 || script === undefined) return this.exited;
    const outputMap = script.outputMap >= 0 ? this.loaded.spec.maps[script.outputMap]?.name : undefined;
    for (const o of this.loaded.outputs.take().outputs) {
      if (o.kind !== 'ringbuf' || o.map !== outputMap || o.data.length < 8) continue;
      const id = new DataView(o.data.buffer, o.data.byteOffset, o.data.byteLength).getUint32(0, true);
      const a = script.actions[id];
      if (a !== undefined) this.act(a, o.data);
    }
    return this.exited;
  }

  private act(a: ScriptAction, record: Uint8Array): void {
    switch (a.kind) {
      case 'printf':
        this.onText(formatPrintf(a, record));
        return;
      case 'time':
        this.onText(formatTime(a.format, this.now()));
        return;
      case 'print':
        this.onText(drawMap(this.mapJson(a.map, a.top, a.div)));
        return;
      case 'clear': {
        const m = this.loaded.maps[a.map];
        if (m !== undefined) for (const k of [...m.keys()]) m.delete(k);
        return;
      }
      case 'zero': {
        const m = this.loaded.maps[a.map];
        if (m !== undefined) {
          const zero = new Uint8Array(m.spec.valueSize);
          for (const k of [...m.keys()]) m.update(k, zero, 0);
        }
        return;
      }
      case 'exit':
        this.exited = true;
        return;
    }
  }

  /** One map as a snapshot, with bpftrace's `top` (the largest N) and `div` (values divided) of `print()`. */
  private mapJson(index: number, top: number, div: number): MapSnapshotJson {
    const s = this.loaded.spec.maps[index]!;
    const types: Parameters<typeof snapshotMap>[1] = {};
    if (s.keyType) types.key = s.keyType;
    if (s.valueType) types.value = s.valueType;
    const map = encodeSnapshotMap(snapshotMap(this.loaded.maps[index]!, types), { ...types, display: this.loaded.displays[index]! });
    if ((top <= 0 && div <= 1) || (map.display.kind !== 'counts' && map.display.kind !== 'value')) return map;
    const num = (v: JsonValue | undefined) => (typeof v === 'number' ? BigInt(v) : typeof v === 'string' && /^-?\d+$/.test(v) ? BigInt(v) : 0n);
    let entries = [...map.entries].sort((x, y) => (num(x.value) < num(y.value) ? -1 : num(x.value) > num(y.value) ? 1 : 0));
    if (top > 0) entries = entries.slice(Math.max(0, entries.length - top));
    if (div > 1) entries = entries.map((e) => ({ ...e, value: Number(num(e.value) / BigInt(div)) }));
    return { ...map, entries };
  }

  /** Runs the END programs (at the last trace time seen, or `ns`) and their actions. */
  end(ns: bigint = this.lastNs): void {
    if (!this.begun) this.begin(ns);
    this.exited = false;
    for (const rt of this.ends) this.runProbe(rt, ns);
    this.exited = true;
  }

  /**
   * Dispatches a whole stream through `dispatcher` (this session's spec attached to it):
   * BEGIN before the first record, intervals by the records' time, actions after each record that
   * emitted any, until the stream ends, an exit, `signal` or `onBatch` stops it; then END. Does
   * not close the stream.
   */
  async run(stream: RecordStream, dispatcher: Dispatcher, options: ScriptRunOptions = {}): Promise<void> {
    const outputs = this.loaded.outputs;
    reading: for await (const batch of stream) {
      for (let r = batch.next(); r !== undefined; r = batch.next()) {
        this.beforeRecord(r);
        if (this.exited) break reading;
        dispatcher.dispatchRecord(r);
        if (outputs.length > 0 && this.drain()) break reading;
      }
      dispatcher.syncLost(stream.stats);
      if (options.onBatch && (await options.onBatch())) break;
      if (options.signal?.aborted) break;
    }
    dispatcher.syncLost(stream.stats);
    this.end(dispatcher.records > 0 ? (BigInt(dispatcher.lastTsHigh >>> 0) << 32n) | BigInt(dispatcher.lastTsLow >>> 0) : this.lastNs);
  }
}
