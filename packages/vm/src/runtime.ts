import type { VmFault } from './errors.js';
import { RingBuffer } from './maps/ring-buffer.js';
import type { LoadedProgram } from './program.js';
import { RunStatus, Vm, type VmOptions, type VmOutput, type VmTier } from './vm.js';

/**
 * One tracepoint record as the runtime needs it. `data` starts at `common_type` (the raw
 * record exactly as the kernel laid it out); `timestamp` is in ns. Adapters turn packages/formats
 * records (trace.dat, trace_pipe_raw) into this shape.
 */
export interface EventRecord {
  cpu: number;
  /** ns; a number (exact below 2^53) or a bigint. */
  timestamp: number | bigint;
  data: Uint8Array;
  /** `common_pid`, when the producer decoded it; otherwise read from the record. */
  pid?: number;
}

/**
 * The fields of packages/formats' `TraceRecord` the runtime reads (structural, so any record
 * cursor with these fields works).
 */
export interface TraceRecordLike {
  cpu: number;
  tsHigh: number;
  tsLow: number;
  bytes: Uint8Array;
  recordOffset: number;
  recordLength: number;
}

/** What the runtime counted since it was created. */
export interface RuntimeCounters {
  eventsSeen: number;
  runs: number;
  instructions: number;
  faults: number;
  budgetExhaustions: number;
  /** probe reads of kernel memory that failed (-EFAULT, zeros): memory a userspace runtime cannot see. */
  kernelReadsFailed: number;
  /** probe reads of user memory that failed the same way. */
  userReadsFailed: number;
  /** Wall time spent inside runs, ns (an estimate from one run in `timeEvery` when that is above 1). */
  timeNs: number;
  /** Outputs that did not fit (ring buffer full). */
  lost: number;
  /**
   * The tier the program runs on: `compiled` (WebAssembly) unless the VM was told to interpret
   * or the compiler did not take the program (then `fallbackReason` says why).
   */
  tier: VmTier;
  /** Time spent compiling the program for this runtime (0 when the module was cached or interpreted), ns. */
  compileNs: number;
  fallbackReason?: string;
}

/** Outputs collected over some events, in order, with a sequence number per batch. */
export interface OutputBatch {
  sequence: number;
  outputs: VmOutput[];
  counters: RuntimeCounters;
  /** The most recent fault in this batch, when there was one. */
  lastFault?: VmFault;
}

export interface RuntimeOptions {
  /** Flush a batch once it holds this many outputs (default 256). */
  batchSize?: number;
  /** Byte offset of `common_pid` in a record (default 4, every kernel's common header). */
  pidOffset?: number;
  /** Only run the program for records this accepts (e.g. one event id); all are counted. */
  accept?: (record: EventRecord) => boolean;
  /**
   * Time one run in this many (default 1: every run) and count it that many times in `timeNs`:
   * reading the clock twice costs about as much as a small program's run, so a runtime that
   * runs millions of events a second samples (16 keeps the estimate within a few percent).
   */
  timeEvery?: number;
}

/**
 * The clock of the sampled run times, ms. `performance` is looked up once: the wrapper that read
 * `globalThis.performance` at every call cost about twice a direct `performance.now()` (~200 vs
 * ~100 ns a read on the 2-vCPU host of the README's figures).
 */
const clock: { now(): number } = typeof globalThis.performance?.now === 'function' ? globalThis.performance : Date;

/**
 * Runs a loaded program once per event record. The VM's outputs (ring buffer and perf records,
 * printk lines) are collected into batches. Faults and budget exhaustions are counted, never
 * thrown: one bad event does not stop the feed.
 */
export class EventRuntime {
  readonly vm: Vm;
  readonly program: LoadedProgram;
  readonly counters: RuntimeCounters = {
    eventsSeen: 0,
    runs: 0,
    instructions: 0,
    faults: 0,
    budgetExhaustions: 0,
    kernelReadsFailed: 0,
    userReadsFailed: 0,
    timeNs: 0,
    lost: 0,
    tier: 'interpreter',
    compileNs: 0,
  };
  private pending: VmOutput[] = [];
  private sequence = 0;
  private lastFault: VmFault | undefined;
  private readonly batchSize: number;
  private readonly pidOffset: number;
  private readonly accept: ((record: EventRecord) => boolean) | undefined;
  private readonly ringBuffers: RingBuffer[];
  private readonly timeEvery: number;
  private untimed = 0;
  /**
   * The batch lane's counts not yet in {@link counters} (see {@link runBatchRecord}): runs (each
   * also an event seen) and their instructions.
   */
  private laneRuns = 0;
  private laneInstructions = 0;
  /**
   * Whether the program calls helpers: only then can a run read the event's CPU, time and pid, or
   * fail a probe read (a tail call is a helper too).
   */
  private readonly callsHelpers: boolean;

  /**
   * `vm` must have been created with its `output` option forwarding to
   * {@link EventRuntime.collect} (use {@link createEventRuntime} to get both wired).
   */
  constructor(vm: Vm, program: LoadedProgram, options: RuntimeOptions = {}) {
    this.vm = vm;
    this.program = program;
    this.batchSize = options.batchSize ?? 256;
    this.pidOffset = options.pidOffset ?? 4;
    this.accept = options.accept;
    this.timeEvery = Math.max(1, Math.floor(options.timeEvery ?? 1));
    this.ringBuffers = vm.maps.filter((m): m is RingBuffer => m instanceof RingBuffer);
    this.callsHelpers = program.helpers.size > 0;
    // choose the tier now (compiling once), so the choice and its cost show before the first event
    const before = vm.tierCounters.compileNs;
    this.counters.tier = vm.tierOf(program);
    this.counters.compileNs = vm.tierCounters.compileNs - before;
    if (this.counters.tier !== vm.tier) this.counters.fallbackReason = vm.tierCounters.lastFallbackReason;
  }

  /** Receives one VM output (wire it as the VM's `output` option). */
  collect(output: VmOutput): void {
    this.pending.push(output);
  }

  /** Runs the program on one record; returns how the run ended (or ok when not accepted). */
  runEvent(record: EventRecord): RunStatus {
    this.counters.eventsSeen++;
    if (this.accept && !this.accept(record)) return RunStatus.ok;
    const ts = record.timestamp;
    let lo: number;
    let hi: number;
    if (typeof ts === 'number') {
      lo = ts % 0x100000000 | 0;
      hi = Math.floor(ts / 0x100000000) | 0;
    } else {
      lo = Number(ts & 0xffffffffn) | 0;
      hi = Number((ts >> 32n) & 0xffffffffn) | 0;
    }
    return this.runBytes(record.cpu, lo, hi, record.data, 0, record.data.length, record.pid);
  }

  /**
   * Runs the program on a packages/formats `TraceRecord` (the cursor a `PageReader` or a
   * trace.dat reader fills), in place: no copy of the record object, no allocation.
   */
  runTraceRecord(record: TraceRecordLike): RunStatus {
    this.counters.eventsSeen++;
    // `| 0`: an unsigned half above 2^31 passed as is would be boxed (a heap number per event)
    return this.runBytes(record.cpu, record.tsLow | 0, record.tsHigh | 0, record.bytes, record.recordOffset, record.recordLength);
  }

  /** The allocation-free core: one record as `bytes[byteOffset..+length]`. */
  runBytes(cpu: number, timeLo: number, timeHi: number, bytes: Uint8Array, byteOffset: number, length: number, pid?: number): RunStatus {
    const c = this.counters;
    const vm = this.vm;
    vm.cpu = cpu;
    vm.timeLo = timeLo | 0;
    vm.timeHi = timeHi | 0;
    const p = byteOffset + this.pidOffset;
    vm.pid =
      pid ??
      (length >= this.pidOffset + 4
        ? (bytes[p] as number) | ((bytes[p + 1] as number) << 8) | ((bytes[p + 2] as number) << 16) | ((bytes[p + 3] as number) << 24)
        : 0);
    let status: RunStatus;
    const kernelReads = vm.kernelReadsFailed;
    const userReads = vm.userReadsFailed;
    if (++this.untimed >= this.timeEvery) {
      this.untimed = 0;
      const t0 = clock.now();
      status = vm.run(this.program, bytes, byteOffset, length);
      c.timeNs += (clock.now() - t0) * 1e6 * this.timeEvery;
    } else {
      status = vm.run(this.program, bytes, byteOffset, length);
    }
    c.runs++;
    c.instructions += vm.insnCount;
    c.kernelReadsFailed += vm.kernelReadsFailed - kernelReads;
    c.userReadsFailed += vm.userReadsFailed - userReads;
    if (status === RunStatus.fault) {
      c.faults++;
      this.lastFault = vm.fault;
    } else if (status === RunStatus.budgetExhausted) {
      c.budgetExhaustions++;
      this.lastFault = vm.fault;
    }
    const rbs = this.ringBuffers;
    for (let i = 0; i < rbs.length; i++) (rbs[i] as RingBuffer).consume();
    return status;
  }

  /**
   * The batch lane (`Dispatcher.dispatch` of packages/runtime): {@link runTraceRecord} of a record
   * of a batch, at `timeLo`/`timeHi` (the record's time as the caller shifted it). The same run,
   * faults (counted and kept at once), outputs and sampled time; the run and its instructions are
   * kept in the runtime until {@link flushBatch} adds them to {@link counters}, which the caller
   * does at the end of its batch (and {@link takeBatch} does too), so counters read between
   * batches are what per-run counting gives. A program that calls no helpers cannot read the
   * event's CPU, time or pid, so they are not set for it (the VM's fields keep the last values set).
   */
  runBatchRecord(record: TraceRecordLike, timeLo: number, timeHi: number): RunStatus {
    const vm = this.vm;
    const bytes = record.bytes;
    const byteOffset = record.recordOffset;
    const length = record.recordLength;
    let status: RunStatus;
    if (!this.callsHelpers) {
      status = this.timedRun(vm, bytes, byteOffset, length);
      this.laneRuns++;
      this.laneInstructions += vm.insnCount;
    } else {
      vm.cpu = record.cpu;
      vm.timeLo = timeLo;
      vm.timeHi = timeHi;
      const p = byteOffset + this.pidOffset;
      vm.pid =
        length >= this.pidOffset + 4
          ? (bytes[p] as number) | ((bytes[p + 1] as number) << 8) | ((bytes[p + 2] as number) << 16) | ((bytes[p + 3] as number) << 24)
          : 0;
      const kernelReads = vm.kernelReadsFailed;
      const userReads = vm.userReadsFailed;
      status = this.timedRun(vm, bytes, byteOffset, length);
      this.laneRuns++;
      this.laneInstructions += vm.insnCount;
      if (vm.kernelReadsFailed !== kernelReads || vm.userReadsFailed !== userReads) {
        this.counters.kernelReadsFailed += vm.kernelReadsFailed - kernelReads;
        this.counters.userReadsFailed += vm.userReadsFailed - userReads;
      }
      const rbs = this.ringBuffers;
      for (let i = 0; i < rbs.length; i++) (rbs[i] as RingBuffer).consume();
    }
    if (status !== RunStatus.ok) this.countStop(status);
    return status;
  }

  /** One run, timed when it is the `timeEvery`th. */
  private timedRun(vm: Vm, bytes: Uint8Array, byteOffset: number, length: number): RunStatus {
    if (++this.untimed < this.timeEvery) return vm.run(this.program, bytes, byteOffset, length);
    this.untimed = 0;
    const t0 = clock.now();
    const status = vm.run(this.program, bytes, byteOffset, length);
    this.counters.timeNs += (clock.now() - t0) * 1e6 * this.timeEvery;
    return status;
  }

  private countStop(status: RunStatus): void {
    if (status === RunStatus.fault) {
      this.counters.faults++;
      this.lastFault = this.vm.fault;
    } else if (status === RunStatus.budgetExhausted) {
      this.counters.budgetExhaustions++;
      this.lastFault = this.vm.fault;
    }
  }

  /** Adds the batch lane's counts ({@link runBatchRecord}) to {@link counters}. */
  flushBatch(): void {
    const runs = this.laneRuns;
    if (runs === 0) return;
    const c = this.counters;
    c.eventsSeen += runs;
    c.runs += runs;
    c.instructions += this.laneInstructions;
    this.laneRuns = 0;
    this.laneInstructions = 0;
  }

  /** Outputs pending since the last batch, as a batch (and starts a new one). */
  takeBatch(): OutputBatch {
    this.flushBatch();
    let lost = 0;
    for (const rb of this.ringBuffers) lost += rb.dropped;
    this.counters.lost = lost;
    const batch: OutputBatch = {
      sequence: this.sequence++,
      outputs: this.pending,
      counters: { ...this.counters },
    };
    if (this.lastFault) batch.lastFault = this.lastFault;
    this.pending = [];
    this.lastFault = undefined;
    return batch;
  }

  /** Whether enough outputs are pending for a batch. */
  get batchReady(): boolean {
    return this.pending.length >= this.batchSize;
  }

  /**
   * Runs the program on every record of `records` and yields output batches as they fill,
   * and a last batch (possibly empty of outputs, with the final counters) at the end.
   */
  async *attach(records: AsyncIterable<EventRecord> | Iterable<EventRecord>): AsyncGenerator<OutputBatch> {
    for await (const record of records) {
      this.runEvent(record);
      if (this.batchReady) yield this.takeBatch();
    }
    yield this.takeBatch();
  }
}

/**
 * A VM and an {@link EventRuntime} wired together: the VM's outputs go to the runtime's batches.
 * `options.output` (if any) still sees every output too.
 */
export function createEventRuntime(
  program: LoadedProgram | ((vm: Vm) => LoadedProgram),
  vmOptions: VmOptions = {},
  runtimeOptions: RuntimeOptions = {},
): EventRuntime {
  let runtime: EventRuntime | undefined;
  const forward = vmOptions.output;
  const vm = new Vm({
    ...vmOptions,
    output: (o) => {
      runtime?.collect(o);
      forward?.(o);
    },
  });
  runtime = new EventRuntime(vm, typeof program === 'function' ? program(vm) : program, runtimeOptions);
  return runtime;
}
