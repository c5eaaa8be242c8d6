import { MAX_FRAMES } from '../address.js';
import { callbackEntries, mayCallLoop } from '../callbacks.js';
import { HelperAction, type HelperFn, type HelperHost } from '../helpers/helper-fn.js';
import { HelperId } from '../helper-ids.js';
import { AbortKind, MAX_COMPILED_BUDGET, MAX_REGIONS, StartFlags, State } from '../memory/layout.js';
import { VmMemory } from '../memory/vm-memory.js';
import { hasWebAssembly } from '../memory/wasm-api.js';
import type { LoadedProgram } from '../program.js';
import { RunStatus, TAIL_CALL } from '../run-status.js';
import { BATCH_BYTES, BATCH_RUNS, BATCH_SLOTS, BatchAddr, batchDriverModule, RUN_BYTES, RunField } from './batch-driver.js';
import { PageStage, STAGE_BYTES } from './page-stage.js';
import { type CompiledEntry, compiledModule, instantiate } from './wasm-tier.js';

/**
 * What a program's owner (the per-event runtime) is told about its runs queued with
 * {@link CompiledTier.queueRun}, when the queue runs ({@link CompiledTier.flushBatch}).
 */
export interface BatchSink {
  /**
   * Runs of one flush that exited normally, their instructions, the probe reads that failed in
   * them (and in stopped runs), and this program's share of the flush's wall time, ns.
   */
  ranBatch(runs: number, instructions: number, kernelReadsFailed: number, userReadsFailed: number, timeNs: number): void;
  /** One run that did not exit normally (after the VM finished it): its status; the VM holds the fault. */
  stoppedRun(status: RunStatus, instructions: number): void;
}

interface WasmTable {
  set(index: number, value: unknown): void;
}
type DriverFn = (from: number, count: number, base: number) => number;
const clock: () => number =
  typeof globalThis.performance?.now === 'function' ? () => globalThis.performance.now() : () => Date.now();

/** What the VM's tier choice did so far (the runtime shows these). */
export interface TierCounters {
  /** Programs that run compiled, and programs that fell back to the interpreter. */
  compiledPrograms: number;
  fallbackPrograms: number;
  /** Compile time of the programs this VM compiled (cache hits add nothing), ns. */
  compileNs: number;
  /** Instructions of the programs this VM compiled. */
  compiledInstructions: number;
  /** Runs (and tail-called programs) executed by each tier. */
  compiledRuns: number;
  interpretedRuns: number;
  /** Of the compiled runs, those that took the short path (one of the last two programs run compiled to a normal exit). */
  fastRuns: number;
  /** Why the last program fell back to the interpreter. */
  lastFallbackReason: string | undefined;
}

/**
 * What the compiled tier's glue uses of the VM built on it (`Vm` implements it): the VM as its
 * helpers see it (the compiled code's helper import calls them with it), the helper table, and
 * the interpreter, which runs a program the compiled tier does not take.
 */
export interface CompiledTierHost extends HelperHost {
  readonly helperTable: (HelperFn | undefined)[];
  interpret(prog: LoadedProgram, startCount: number): number;
  currentProgram: LoadedProgram | undefined;
  /** Runs a tail call's target and the programs it tail-calls, `n` instructions counted before it. */
  executeFrom(program: LoadedProgram, n: number): number;
}

/**
 * Whether a run of `program` can see frame 0 of the stack: it names r10 (as a base, a source or
 * a destination), or it calls a helper (a tail call's target runs on the same frame). A program
 * that does neither holds no pointer into the stack, so its runs need no zeroed frame.
 */
export function seesStackOf(program: LoadedProgram): boolean {
  if (program.helpers.size > 0) return true;
  const { dst, src } = program;
  for (let i = 0; i < program.length; i++) if (dst[i] === 10 || src[i] === 10) return true;
  return false;
}

/**
 * The compiled tier's glue over the memory model: whether this VM can run compiled code
 * (`startCompiledTier`), each program's compiled entry (`entryOf`: the module of its bytes from
 * the cache of wasm-tier.ts, instantiated once per VM over its linear memory, with the helper
 * import), one program of a run on its tier (`runOne`, the interpreter for a program without an
 * entry), the stage of records read in place (page-stage.ts) and the tier counters. `Vm`
 * (vm.ts) extends it; its methods that need the VM above take it as `this: CompiledTierHost`.
 */
export abstract class CompiledTier extends VmMemory {
  readonly tierCounters: TierCounters = {
    compiledPrograms: 0,
    fallbackPrograms: 0,
    compileNs: 0,
    compiledInstructions: 0,
    compiledRuns: 0,
    interpretedRuns: 0,
    fastRuns: 0,
    lastFallbackReason: undefined,
  };
  /** Pages of the trace feed staged in linear memory (compiled tier; see stageRecords). */
  protected stage: PageStage | undefined;
  private readonly entries = new WeakMap<LoadedProgram, CompiledEntry | null>();
  private unknownHelperId = 0;
  /** The last program run compiled and its entry (skips the WeakMap on the per-event path). */
  protected hotProgram: LoadedProgram | undefined;
  protected hotEntry: CompiledEntry | undefined;
  /**
   * The last program `run` was called with and whether it can write the stack (vm.ts sets them:
   * its frame-0 zeroing; read here to fill the fast slots).
   */
  protected zeroProgram: LoadedProgram | undefined;
  protected zeroSees = true;
  /**
   * The last two programs that ran fresh on the compiled tier to a normal exit, with their entry
   * and whether they can write the stack: their runs take `Vm.runFast` (two, so that a spec
   * whose programs alternate on one VM — runqlat's wakeup and switch — takes it too).
   */
  protected fast0: LoadedProgram | undefined;
  protected fastEntry0: CompiledEntry | undefined;
  protected fastSees0 = true;
  protected fast1: LoadedProgram | undefined;
  protected fastEntry1: CompiledEntry | undefined;
  protected fastSees1 = true;
  /**
   * The program whose fresh compiled run last exited normally, when nothing ran since: the
   * register file then holds the start values of every register it cannot write
   * (compile-wasm.ts, writtenRegisters), so its next `start` stores only the others.
   */
  protected fileProgram: LoadedProgram | undefined;
  /** Whether frame 0 may hold bytes a run wrote (a fresh stack is zero). */
  protected stackDirty = false;

  // ---- the batch path (queueRun / flushBatch; wasm/batch-driver.ts) ----
  private batchFn: DriverFn | undefined;
  private batchTable: WasmTable | undefined;
  /** Linear address of the driver's block (after the stage). */
  private batchBase = 0;
  private batchWords = new Int32Array(0);
  private batchCounts = new Uint32Array(0);
  private readonly batchPrograms: LoadedProgram[] = [];
  private readonly batchSinks: BatchSink[] = [];
  private readonly batchSees: boolean[] = [];
  /** Whether helpers called now run for a queued record (they read its event from the queue). */
  private batchOn = false;
  /** Runs queued (see {@link queueRun}). */
  queued = 0;
  private readonly slotKernelReads = new Float64Array(BATCH_SLOTS);
  private readonly slotUserReads = new Float64Array(BATCH_SLOTS);
  /**
   * Called for each queued run that did not exit normally, when the queue runs, after its
   * {@link BatchSink.stoppedRun}: the run's index in the queue (see {@link queuedRecord}) and status.
   */
  onBatchStop: ((index: number, status: RunStatus) => void) | undefined;

  /**
   * Creates the linear memory (the memory model's {@link createMemory}) when compiled code can
   * run in this VM; otherwise records why not in {@link tierCounters} (every program then
   * falls back to the interpreter).
   */
  protected startCompiledTier(): void {
    const regionCount = 3 + this.maps.length;
    const why = !hasWebAssembly
      ? 'WebAssembly is not available'
      : regionCount > MAX_REGIONS
        ? `${this.maps.length} maps: more regions than the compiled tier's ${MAX_REGIONS}`
        : this.budget > MAX_COMPILED_BUDGET
          ? `budget ${this.budget} is above the compiled tier's ${MAX_COMPILED_BUDGET}`
          : undefined;
    const failed = why ?? this.createMemory(STAGE_BYTES + BATCH_BYTES);
    if (failed !== undefined) this.tierCounters.lastFallbackReason = failed;
  }

  /** Binds the views of the memory model, then the stage's (after creating or growing memory). */
  protected override bindViews(): void {
    super.bindViews();
    const buf = this.memoryBytes.buffer;
    if (this.stage) this.stage.bind(buf);
    else this.stage = new PageStage(this.stageAddr, buf);
    this.batchBase = this.stageAddr + STAGE_BYTES;
    this.batchWords = new Int32Array(buf, this.batchBase, BATCH_BYTES / 4);
    this.batchCounts = new Uint32Array(buf, this.batchBase + BatchAddr.counts, BATCH_SLOTS * 4);
  }

  /**
   * The compiled entry of `program` in this VM, or undefined when it runs on the interpreter:
   * compiles it on first use (or takes the cached module of the same bytes), instantiates it over
   * this VM's memory with the helper import, and counts the choice in {@link tierCounters}.
   */
  protected entryOf(this: CompiledTier & CompiledTierHost, program: LoadedProgram): CompiledEntry | undefined {
    const known = this.entries.get(program);
    if (known !== undefined) return known ?? undefined;
    let entry: CompiledEntry | null = null;
    const c = this.tierCounters;
    if (this.helperTable[HelperId.loop] === undefined && callbackEntries(program).length > 0 && mayCallLoop(program)) {
      // compiled code runs bpf_loop inline; without the helper it must be an unknown id instead
      c.lastFallbackReason = 'bpf_loop: not a helper of this VM';
    } else if (this.memory) {
      const r = compiledModule(program);
      if (r.ok) {
        try {
          const memory = this.memory;
          entry = instantiate(r.compiled, memory, (id, pc, frame) => {
            this.lastPc = pc;
            this.lastProgram = program;
            this.frame = frame;
            const fn = id >= 0 ? this.helperTable[id] : undefined;
            if (fn === undefined) {
              this.unknownHelperId = id;
              return 4;
            }
            // bpf_loop in a program without callbacks (else compiled inline): the interpreter's fault
            if (id === HelperId.loop) return 5;
            return this.batchOn ? this.batchHelper(fn) : fn(this);
          });
          if (!r.cached) {
            c.compileNs += r.compiled.compileNs;
            c.compiledInstructions += r.compiled.instructions;
          }
        } catch (e) {
          c.lastFallbackReason = `instantiate: ${(e as Error).message}`;
        }
      } else c.lastFallbackReason = r.reason;
    }
    if (entry) c.compiledPrograms++;
    else c.fallbackPrograms++;
    this.entries.set(program, entry);
    return entry ?? undefined;
  }

  /**
   * One program (of a run and its tail calls) on its tier, from pc 0 with `n` instructions
   * counted; `fresh` >= 0 (the context's length) when `prog` is the hot compiled program starting
   * a run with its registers not written to the register file.
   */
  protected runOne(this: CompiledTier & CompiledTierHost, prog: LoadedProgram, n: number, fresh: number, staged: number): number {
    const entry = prog === this.hotProgram ? this.hotEntry : this.memory ? this.entryOf(prog) : undefined;
    if (entry === undefined) {
      this.tierCounters.interpretedRuns++;
      return this.interpret(prog, n);
    }
    this.tierCounters.compiledRuns++;
    this.hotProgram = prog;
    this.hotEntry = entry;
    const S = this.runState;
    if ((fresh >= 0 ? entry.start(n, fresh, staged, StartFlags.full) : entry.run(n)) === 0) {
      // exit from frame 0: what conclude does for a run without a fault
      this.insnCount = S[State.n / 4] as number;
      this.lastPc = S[State.pc / 4] as number;
      this.lastProgram = prog;
      this.frame = 0;
      if (fresh >= 0) {
        this.fileProgram = prog;
        if (prog !== this.fast0 && prog === this.zeroProgram) {
          // the newest first (a program in slot 1 swaps places with slot 0)
          this.fast1 = this.fast0;
          this.fastEntry1 = this.fastEntry0;
          this.fastSees1 = this.fastSees0;
          this.fast0 = prog;
          this.fastEntry0 = entry;
          this.fastSees0 = this.zeroSees;
        }
      }
      return RunStatus.ok;
    }
    return this.stopped(prog);
  }

  /** A helper called by a queued run: the run's event first, its failed probe reads counted per program. */
  private batchHelper(this: CompiledTier & CompiledTierHost, fn: HelperFn): number {
    const w = this.batchWords;
    const d = (BatchAddr.runs + (w[BatchAddr.current / 4] as number) * RUN_BYTES) / 4;
    this.cpu = w[d + RunField.cpu] as number;
    this.timeLo = w[d + RunField.timeLo] as number;
    this.timeHi = w[d + RunField.timeHi] as number;
    this.pid = w[d + RunField.pid] as number;
    const kernelReads = this.kernelReadsFailed;
    const userReads = this.userReadsFailed;
    const action = fn(this);
    if (this.kernelReadsFailed !== kernelReads || this.userReadsFailed !== userReads) {
      const slot = w[d + RunField.slot] as number;
      this.slotKernelReads[slot]! += this.kernelReadsFailed - kernelReads;
      this.slotUserReads[slot]! += this.userReadsFailed - userReads;
    }
    return action;
  }

  /**
   * The batch slot of `program` (registering it and its sink on first use), or -1 when its runs
   * cannot be queued: it does not run compiled, the VM has ring buffers (their records are
   * consumed per run), or the VM has {@link BATCH_SLOTS} programs queued already.
   */
  batchSlotOf(this: CompiledTier & CompiledTierHost, program: LoadedProgram, sink: BatchSink, hasRingBuffers: boolean): number {
    const known = this.batchPrograms.indexOf(program);
    if (known >= 0) return this.batchSinks[known] === sink ? known : -1;
    if (hasRingBuffers || this.memory === undefined || this.stage === undefined || this.batchPrograms.length >= BATCH_SLOTS) return -1;
    const entry = this.entryOf(program);
    if (entry === undefined) return -1;
    const api = (globalThis as { WebAssembly?: { Table: new (d: { element: string; initial: number }) => WasmTable; Instance: new (m: object, i: object) => { exports: Record<string, unknown> } } }).WebAssembly;
    if (api === undefined) return -1;
    if (this.batchTable === undefined) {
      const table = new api.Table({ element: 'anyfunc', initial: BATCH_SLOTS });
      const instance = new api.Instance(batchDriverModule(), { vm: { memory: this.memory, table } });
      this.batchTable = table;
      this.batchFn = instance.exports.batch as DriverFn;
    }
    const slot = this.batchPrograms.length;
    this.batchPrograms.push(program);
    this.batchSinks.push(sink);
    const sees = seesStackOf(program);
    this.batchSees.push(sees);
    this.batchWords[BatchAddr.sees / 4 + slot] = sees ? 1 : 0;
    this.batchTable.set(slot, entry.start);
    return slot;
  }

  /**
   * Queues a run of the program in batch slot `slot` on `bytes[byteOffset..+length]` (a record of
   * a batch staged with {@link stageRecords}, whose bytes stay put until the queue runs) with its
   * event (CPU, time halves, pid) and a tag (an int) for the owner ({@link queuedRecord}). Runs the queue
   * first when it is full, or when the record's page must be staged (staging may overwrite a
   * window a queued run reads). Returns false when the record cannot be read in place: the
   * queue is then empty and the caller runs it as usual.
   */
  queueRun(this: CompiledTier & CompiledTierHost, slot: number, cpu: number, timeLo: number, timeHi: number, pid: number, bytes: Uint8Array, byteOffset: number, length: number, tag: number): boolean {
    const stage = this.stage as PageStage;
    if (!stage.on || length <= 16 || length > this.contextBuffer.length) {
      if (this.queued > 0) this.flushBatch();
      return false;
    }
    if (this.queued === BATCH_RUNS) this.flushBatch();
    let staged = stage.find(bytes, byteOffset, length);
    if (staged === 0) {
      if (this.queued > 0) this.flushBatch();
      staged = stage.locate(bytes, byteOffset, length);
      if (staged === 0) return false;
    }
    const w = this.batchWords;
    const d = (BatchAddr.runs + this.queued++ * RUN_BYTES) / 4;
    w[d] = slot;
    w[d + RunField.staged] = staged;
    w[d + RunField.length] = length;
    w[d + RunField.cpu] = cpu;
    w[d + RunField.timeLo] = timeLo;
    w[d + RunField.timeHi] = timeHi;
    w[d + RunField.pid] = pid;
    w[d + RunField.tag] = tag;
    return true;
  }

  /**
   * A queued run's record (a copy, from the staged window: no window is replaced while runs are
   * queued), CPU and tag; valid in {@link onBatchStop}.
   */
  queuedRecord(index: number): { bytes: Uint8Array; cpu: number; tag: number } {
    const w = this.batchWords;
    const d = (BatchAddr.runs + index * RUN_BYTES) / 4;
    const at = w[d + RunField.staged] as number;
    return { bytes: this.memoryBytes.slice(at, at + (w[d + RunField.length] as number)), cpu: w[d + RunField.cpu] as number, tag: w[d + RunField.tag] as number };
  }

  /**
   * Runs the queued runs in order, in one call into wasm per stretch of runs that exit normally
   * (see batch-driver.ts); a run that stops (fault, budget, helper exit, tail call) is finished
   * here as `Vm.runFast` finishes it. Every run's outcome is what `run` would have given.
   */
  flushBatch(this: CompiledTier & CompiledTierHost): void {
    const count = this.queued;
    if (count === 0) return;
    const t0 = clock();
    const w = this.batchWords;
    const base = this.batchBase;
    const fn = this.batchFn as DriverFn;
    const progs = this.batchPrograms;
    const S = this.runState;
    // what runFast reads from the VM, handed to the driver
    const file = this.fileProgram === undefined ? -1 : progs.indexOf(this.fileProgram);
    w[BatchAddr.last / 4] = file;
    w[BatchAddr.dirty / 4] = this.stackDirty ? 1 : 0;
    this.batchCounts.fill(0);
    this.tailCalls = 0;
    this.faultValue = undefined;
    this.pendingFault = undefined;
    if (this.maps.length > 0) this.syncMapRegions();
    this.batchOn = true;
    let normal = true;
    try {
      let from = 0;
      while (from < count) {
        const stop = fn(from, count, base);
        if (stop >= count) break;
        // run `stop` returned 1 from start: finish it as runFast does
        const d = (BatchAddr.runs + stop * RUN_BYTES) / 4;
        const slot = w[d + RunField.slot] as number;
        const program = progs[slot] as LoadedProgram;
        this.cpu = w[d + RunField.cpu] as number;
        this.timeLo = w[d + RunField.timeLo] as number;
        this.timeHi = w[d + RunField.timeHi] as number;
        this.pid = w[d + RunField.pid] as number;
        this.currentProgram = program;
        this.fileProgram = undefined;
        this.tierCounters.compiledRuns++;
        let status = this.stopped(program);
        if (status === TAIL_CALL) {
          const target = this.tailTarget as LoadedProgram;
          this.tailTarget = undefined;
          status = this.executeFrom(target, this.insnCount);
        }
        this.batchSinks[slot]?.stoppedRun(status as RunStatus, this.insnCount);
        this.onBatchStop?.(stop, status as RunStatus);
        // the next run starts as runFast starts it
        this.tailCalls = 0;
        this.pendingFault = undefined;
        w[BatchAddr.last / 4] = -1;
        w[BatchAddr.dirty / 4] = this.stackDirty ? 1 : 0;
        if (this.maps.length > 0) this.syncMapRegions();
        normal = stop + 1 < count;
        from = stop + 1;
      }
    } finally {
      this.batchOn = false;
      this.queued = 0;
    }
    this.stackDirty = w[BatchAddr.dirty / 4] !== 0;
    const last = w[BatchAddr.last / 4] as number;
    if (normal && last >= 0) {
      // the last run exited normally: what runFast leaves
      const program = progs[last] as LoadedProgram;
      this.insnCount = S[State.n / 4] as number;
      this.lastPc = S[State.pc / 4] as number;
      this.lastProgram = program;
      this.currentProgram = program;
      this.frame = 0;
      this.fileProgram = program;
      this.faultValue = undefined;
    }
    const ns = (clock() - t0) * 1e6;
    const counts = this.batchCounts;
    let runs = 0;
    for (let s = 0; s < progs.length; s++) runs += counts[s * 4 + 2] as number;
    this.tierCounters.compiledRuns += runs;
    this.tierCounters.fastRuns += runs;
    for (let s = 0; s < progs.length; s++) {
      const r = counts[s * 4 + 2] as number;
      const kr = this.slotKernelReads[s] as number;
      const ur = this.slotUserReads[s] as number;
      if (r === 0 && kr === 0 && ur === 0) continue;
      const insns = (counts[s * 4] as number) + (counts[s * 4 + 1] as number) * 0x100000000;
      this.batchSinks[s]?.ranBatch(r, insns, kr, ur, runs > 0 ? (ns * r) / runs : 0);
      this.slotKernelReads[s] = 0;
      this.slotUserReads[s] = 0;
    }
  }

  /** After compiled code returned 1: the fault, the budget, a helper's exit or a tail call. */
  protected stopped(prog: LoadedProgram): number {
    const S = this.runState;
    this.faultBase = -1;
    this.faultSize = 0;
    this.faultMsg = '';
    const pc = S[State.pc / 4] as number;
    const count = S[State.n / 4] as number;
    const frame = S[State.frame / 4] as number;
    const kind = S[State.kind / 4] as number;
    let status: number = RunStatus.ok;
    if (kind === AbortKind.memory) {
      this.faultBase = S[State.faultBase / 4] as number;
      this.faultSize = S[State.faultSize / 4] as number;
    } else if (kind === AbortKind.budget) status = RunStatus.budgetExhausted;
    else if (kind === AbortKind.callDepth) this.faultMsg = `call stack deeper than ${MAX_FRAMES} frames`;
    else if (kind === AbortKind.loopCallback || kind === AbortKind.helper + 5) this.faultMsg = 'bpf_loop: r2 is not a callback address';
    else if (kind === AbortKind.helper + HelperAction.fault) this.faultMsg = 'helper';
    else if (kind === AbortKind.helper + HelperAction.tailCall) status = count > this.budget ? RunStatus.budgetExhausted : TAIL_CALL;
    else if (kind === AbortKind.helper + 4) this.faultMsg = `call to unknown helper ${this.unknownHelperId}`;
    else if (kind !== AbortKind.helper + HelperAction.exit) this.faultMsg = `compiled code stopped with kind ${kind}`;
    return this.conclude(prog, pc, count, frame, status);
  }

  /**
   * Turns reading records in place on or off (compiled tier only; a no-op otherwise). While on,
   * `run(program, page, offset, length)` stages the page around the record in the VM's memory
   * once and copies each record of it into the context inside the compiled code, so the caller
   * promises that the bytes of every buffer it passes stay unchanged until the next call (the
   * trace feed's batches: valid until the next one). Every call drops what was staged.
   */
  stageRecords(on: boolean): void {
    const stage = this.stage;
    if (stage === undefined) return;
    stage.on = on;
    stage.clear();
  }

  /** Page windows staged so far (see {@link stageRecords}). */
  get stagedWindows(): number {
    return this.stage?.staged ?? 0;
  }
}
