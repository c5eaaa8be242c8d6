import type { RecordBatch, RecordStream, RecordStreamStats, TraceRecord } from '@probeyard/formats';
import { type EventRuntime, RunStatus, type Vm } from '@probeyard/vm';
import { RuntimeError } from './errors.js';
import type { LoadedSpec } from './load-spec.js';

/** What the dispatcher counted for one target since it was attached (cumulative per run). */
export interface TargetCounters {
  /** Records of the target's events dispatched to it (once per record, however many of its programs ran). */
  eventsSeen: number;
  /** Program runs. */
  runs: number;
  instructions: number;
  faults: number;
  budgetExhaustions: number;
  /**
   * Events the feed lost while the target was attached (ring-buffer overruns, per CPU, as the
   * feed reported them): a lost record could have been any enabled event, so a loss counts for
   * every target attached when it is reported.
   */
  lostEvents: number;
  /** Time spent running the target's programs, ns. */
  cpuNs: number;
  /** Outputs (ring buffer, perf, printk) dropped over the output queue's bounds. */
  outputsDropped: number;
  /** probe reads of kernel memory that failed (-EFAULT, zeros): memory a userspace runtime cannot see. */
  kernelReadsFailed: number;
  /** probe reads of user memory that failed the same way. */
  userReadsFailed: number;
}

/** A run that faulted: where, why, and the record it ran on (a copy). */
export interface TargetFault {
  program: string;
  insnIndex: number | undefined;
  insnText: string | undefined;
  message: string;
  /** `budget-exhausted` or `fault`. */
  code: string;
  record: { eventId: number; cpu: number; timeNs: string; hex: string };
}

/** One target attached to a {@link Dispatcher}. */
export class AttachedTarget {
  readonly id: string;
  readonly loaded: LoadedSpec;
  /** Records dispatched to this target. */
  eventsSeen = 0;
  /** Lost events attributed to this target. */
  lostEvents = 0;
  /** Faults since attach (also in the runtimes' counters). */
  faultCount = 0;
  /** The most recent fault, with its record. */
  lastFault: TargetFault | undefined;
  /** Set by {@link Dispatcher.detach}. */
  detached = false;
  /**
   * While set, the target's records are counted in {@link skipped} and not run (a caller
   * throttling a target over its CPU budget); its maps keep what they had.
   */
  paused = false;
  /** Records of the target's events not run because it was paused. */
  skipped = 0;

  constructor(id: string, loaded: LoadedSpec) {
    this.id = id;
    this.loaded = loaded;
  }

  /** The target's counters (sums over its programs' runtimes). */
  get counters(): TargetCounters {
    const c: TargetCounters = {
      eventsSeen: this.eventsSeen,
      runs: 0,
      instructions: 0,
      faults: 0,
      budgetExhaustions: 0,
      lostEvents: this.lostEvents,
      cpuNs: 0,
      outputsDropped: this.loaded.outputs.droppedTotal,
      kernelReadsFailed: 0,
      userReadsFailed: 0,
    };
    for (const p of this.loaded.programs) {
      const r = p.runtime.counters;
      c.runs += r.runs;
      c.instructions += r.instructions;
      c.faults += r.faults;
      c.budgetExhaustions += r.budgetExhaustions;
      c.cpuNs += r.timeNs;
      c.kernelReadsFailed += r.kernelReadsFailed;
      c.userReadsFailed += r.userReadsFailed;
    }
    c.cpuNs = Math.round(c.cpuNs);
    return c;
  }
}

/** The programs of one target attached to one event id. */
interface Attachment {
  target: AttachedTarget;
  runtimes: readonly EventRuntime[];
  names: readonly string[];
}

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

/** Options of {@link Dispatcher.run}. */
export interface DispatchRunOptions {
  /** Stops after the batch during which it is aborted. */
  signal?: AbortSignal;
  /** Called after each batch (snapshots, flushes, deadlines); may attach or detach targets. */
  onBatch?: () => void | Promise<void>;
}

/**
 * Runs many loaded programs (many targets, each its own VM and maps) over one record stream:
 * each record goes, by event id, to the programs attached to that id, in time order. Targets
 * attach and detach at any time, also while a stream is being dispatched (the dispatch table is
 * replaced, never mutated under a running batch). Per-target counters; lost events of the feed
 * are attributed to the targets attached when they are reported. Nothing is allocated per record.
 */
export class Dispatcher {
  private readonly targets = new Map<string, AttachedTarget>();
  /** event id → attachments (a new array on every change). */
  private table: (Attachment[] | undefined)[] = [];
  /** Every VM of the attached programs (stageRecords around a batch). */
  private vms: Vm[] = [];
  /** Every runtime of the attached programs (their batch counts flushed after a batch). */
  private runtimes: EventRuntime[] = [];
  private lostSeen: number[] = [];
  /** Records dispatched (all of them, attached or not). */
  records = 0;
  /** Timestamp halves of the last record seen (ns). */
  lastTsHigh = 0;
  lastTsLow = 0;
  /** Added to every record's timestamp (see {@link shiftTime}); two unsigned 32-bit halves. */
  private shiftHigh = 0;
  private shiftLow = 0;

  /** Attaches a loaded spec as target `id` (a new id; detach first to replace). */
  attach(id: string, loaded: LoadedSpec): AttachedTarget {
    if (this.targets.has(id)) throw new RuntimeError('malformed', `attach ${id}: a target with this id is attached`);
    const t = new AttachedTarget(id, loaded);
    this.targets.set(id, t);
    this.rebuild();
    return t;
  }

  /** Detaches target `id`; returns it (with its final counters), or undefined when unknown. */
  detach(id: string): AttachedTarget | undefined {
    const t = this.targets.get(id);
    if (!t) return undefined;
    this.targets.delete(id);
    t.detached = true;
    this.rebuild();
    return t;
  }

  target(id: string): AttachedTarget | undefined {
    return this.targets.get(id);
  }

  /** Attached targets, in attach order. */
  attached(): AttachedTarget[] {
    return [...this.targets.values()];
  }

  /** The union of `system/event`s the attached targets need, sorted (what a live feed enables). */
  events(): string[] {
    const s = new Set<string>();
    for (const t of this.targets.values()) for (const e of t.loaded.events) s.add(e);
    return [...s].sort();
  }

  /**
   * From now on, programs see every record's timestamp plus `ns` (and {@link traceTimeNs} is the
   * shifted time). A recording replayed in a loop starts each pass where the last one ended, so
   * that latencies measured across the seam are not one pass long (runqlat's `[2G, 4G)` bucket).
   */
  shiftTime(ns: bigint): void {
    if (ns < 0n || ns >= 1n << 64n) throw new RangeError(`shiftTime: ${ns} is not an unsigned 64-bit time`);
    this.shiftHigh = Number(ns >> 32n);
    this.shiftLow = Number(ns & 0xffffffffn);
  }

  /** The time shift in force, ns. */
  get timeShiftNs(): bigint {
    return (BigInt(this.shiftHigh) << 32n) | BigInt(this.shiftLow);
  }

  /** The last record's trace time, ns, as a decimal string (it exceeds 2^53). */
  get traceTimeNs(): string {
    return ((BigInt(this.lastTsHigh) << 32n) | BigInt(this.lastTsLow)).toString();
  }

  private rebuild(): void {
    const table: (Attachment[] | undefined)[] = [];
    for (const t of this.targets.values()) {
      const byId = new Map<number, { runtimes: EventRuntime[]; names: string[] }>();
      for (const p of t.loaded.programs) {
        if (p.eventId === undefined) continue;
        const e = byId.get(p.eventId) ?? { runtimes: [], names: [] };
        e.runtimes.push(p.runtime);
        e.names.push(p.name);
        byId.set(p.eventId, e);
      }
      for (const [id, e] of byId) (table[id] ??= []).push({ target: t, runtimes: e.runtimes, names: e.names });
    }
    this.table = table;
    const vms = new Set<Vm>();
    const runtimes = new Set<EventRuntime>();
    for (const list of table)
      for (const a of list ?? [])
        for (const rt of a.runtimes) {
          vms.add(rt.vm);
          runtimes.add(rt);
        }
    this.vms = [...vms];
    // a runtime detached during a batch still has that batch's counts to flush: see dispatch
    for (const rt of this.runtimes) rt.flushBatch();
    this.runtimes = [...runtimes];
  }

  /**
   * Runs one batch of records synchronously; returns the records read. A batch's bytes stay put
   * until the next batch (RecordBatch), so the VMs read its records in place for the batch: each
   * page is staged in a VM's memory once and its records copied into the context inside the
   * compiled code (Vm.stageRecords), not one by one in JavaScript.
   */
  dispatch(batch: RecordBatch): number {
    let n = 0;
    const vms = this.vms;
    for (let i = 0; i < vms.length; i++) vms[i]!.stageRecords(true);
    // per batch, not per record: the time shift, the record count and the last time (stored
    // after the batch), and the runtimes' run counts (EventRuntime.runBatchRecord, flushed after
    // the batch): nothing reads them during a batch but the batch itself
    const shifted = this.shiftHigh !== 0 || this.shiftLow !== 0;
    const shiftHigh = this.shiftHigh;
    const shiftLow = this.shiftLow;
    let tsHigh = this.lastTsHigh;
    let tsLow = this.lastTsLow;
    try {
      for (let r = batch.next(); r !== undefined; r = batch.next()) {
        n++;
        tsHigh = r.tsHigh >>> 0;
        tsLow = r.tsLow >>> 0;
        if (shifted) {
          const low = tsLow + shiftLow;
          tsLow = low >>> 0;
          tsHigh = (tsHigh + shiftHigh + (low > 0xffffffff ? 1 : 0)) >>> 0;
        }
        // read per record: a target attached or detached during the batch replaces the table
        const list = this.table[r.eventId];
        if (list === undefined) continue;
        for (let i = 0; i < list.length; i++) {
          const a = list[i]!;
          if (a.target.paused) {
            a.target.skipped++;
            continue;
          }
          a.target.eventsSeen++;
          const runtimes = a.runtimes;
          for (let j = 0; j < runtimes.length; j++) {
            // `| 0`: an unsigned half above 2^31 passed as is would be boxed (a heap number per event)
            if (runtimes[j]!.runBatchRecord(r, tsLow | 0, tsHigh | 0) !== RunStatus.ok) this.noteFault(a, j, r);
          }
        }
      }
    } finally {
      this.records += n;
      this.lastTsHigh = tsHigh;
      this.lastTsLow = tsLow;
      const runtimes = this.runtimes;
      for (let i = 0; i < runtimes.length; i++) runtimes[i]!.flushBatch();
      for (let i = 0; i < vms.length; i++) vms[i]!.stageRecords(false);
    }
    return n;
  }

  /** Runs the programs attached to one record's event id (the path {@link dispatch} takes per record). */
  dispatchRecord(r: TraceRecord): void {
    this.records++;
    let tsHigh = r.tsHigh >>> 0;
    let tsLow = r.tsLow >>> 0;
    const shifted = this.shiftHigh !== 0 || this.shiftLow !== 0;
    if (shifted) {
      const low = tsLow + this.shiftLow;
      tsLow = low >>> 0;
      tsHigh = (tsHigh + this.shiftHigh + (low > 0xffffffff ? 1 : 0)) >>> 0;
    }
    this.lastTsHigh = tsHigh;
    this.lastTsLow = tsLow;
    const list = this.table[r.eventId];
    if (list === undefined) return;
    for (let i = 0; i < list.length; i++) {
      const a = list[i]!;
      if (a.target.paused) {
        a.target.skipped++;
        continue;
      }
      a.target.eventsSeen++;
      const runtimes = a.runtimes;
      for (let j = 0; j < runtimes.length; j++) {
        const rt = runtimes[j]!;
        let status: RunStatus;
        if (!shifted) status = rt.runTraceRecord(r);
        else {
          rt.counters.eventsSeen++;
          status = rt.runBytes(r.cpu, tsLow | 0, tsHigh | 0, r.bytes, r.recordOffset, r.recordLength);
        }
        if (status !== RunStatus.ok) this.noteFault(a, j, r);
      }
    }
  }

  private noteFault(a: Attachment, j: number, r: TraceRecord): void {
    const vm = a.runtimes[j]!.vm;
    const f = vm.fault;
    a.target.faultCount++;
    a.target.lastFault = {
      program: a.names[j]!,
      insnIndex: f?.pc,
      insnText: f?.insnText,
      message: f?.message ?? 'fault',
      code: f?.code ?? 'fault',
      record: { eventId: r.eventId, cpu: r.cpu, timeNs: r.timestamp().toString(), hex: hex(r.bytes.subarray(r.recordOffset, r.recordOffset + r.recordLength)) },
    };
  }

  /**
   * Attributes the feed's losses reported since the last call (`stats.lostByCpu`) to every
   * attached target; returns the events newly lost.
   */
  syncLost(stats: RecordStreamStats): number {
    let delta = 0;
    const byCpu = stats.lostByCpu;
    for (let c = 0; c < byCpu.length; c++) {
      const now = byCpu[c] ?? 0;
      const d = now - (this.lostSeen[c] ?? 0);
      if (d > 0) delta += d;
      this.lostSeen[c] = now;
    }
    if (delta > 0) for (const t of this.targets.values()) t.lostEvents += delta;
    return delta;
  }

  /** Events lost per CPU so far, as last synced from the feed. */
  get lostByCpu(): readonly number[] {
    return this.lostSeen;
  }

  /**
   * Dispatches a whole stream: batch after batch, attributing lost events after each, until the
   * stream ends or `signal` is aborted. Does not close the stream.
   */
  async run(stream: RecordStream, options: DispatchRunOptions = {}): Promise<void> {
    for await (const batch of stream) {
      this.dispatch(batch);
      this.syncLost(stream.stats);
      if (options.onBatch) await options.onBatch();
      if (options.signal?.aborted) break;
    }
  }
}
