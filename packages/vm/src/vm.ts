import {
  addressToBigInt,
  CONTEXT_REGION,
  formatAddress,
  MAP_HANDLE_REGION,
  MAX_FRAMES,
  STACK_FRAME_SIZE,
  STACK_REGION,
  STACK_TOP,
} from './address.js';
import { callbackEntries, mayCallLoop } from './callbacks.js';
import { PageStage, STAGE_BYTES } from './wasm/page-stage.js';
import { RecordCopy } from './wasm/record-copy.js';
import { type RegionKind, VmError, VmFault } from './errors.js';
import { HelperId } from './helper-ids.js';
import type { HelperEnvironment, VmOutput } from './helper-env.js';
import { type InterpreterHost, interpreterMethods } from './interpreter/interpret.js';
import { HelperAction, type HelperFn, standardHelpers } from './helpers.js';
import { formatInsn } from './insn-text.js';
import type { BpfMap } from './maps/map.js';
import { RingBuffer } from './maps/ring-buffer.js';
import { RunStatus, TAIL_CALL } from './run-status.js';
import type { LoadedProgram, LoadOptions, MapRef } from './program.js';
import {
  AbortKind,
  BASE_ADDR,
  LEN_ADDR,
  LOW_ADDR,
  MAPS_ADDR,
  MAX_COMPILED_BUDGET,
  MAX_REGIONS,
  PAGE,
  REG_HI_ADDR,
  REG_LO_ADDR,
  STACK_ADDR,
  StartFlags,
  State,
  STATE_ADDR,
} from './wasm/wasm-layout.js';
import {
  type CompiledEntry,
  compiledModule,
  createWasmMemory,
  hasWebAssembly,
  instantiate,
  type WasmMemory,
} from './wasm/wasm-tier.js';

const EMPTY = new Uint8Array(0);

export type { HelperEnvironment, VmOutput } from './helper-env.js';

export { RunStatus } from './run-status.js';

export interface VmOptions {
  /** Maps programs may reference; a program's map "fd" is the index in this list. */
  maps?: readonly BpfMap[];
  /** Instructions one run may execute (default 1,000,000, the kernel verifier's limit). */
  budget?: number;
  /**
   * Helpers by id. With `standardHelpers: false` only these exist; otherwise they are added to
   * (and override) the standard set.
   */
  helpers?: ReadonlyMap<number, HelperFn>;
  standardHelpers?: boolean;
  /** Receives every output (ring buffer and perf records, printk lines). */
  output?: (output: VmOutput) => void;
  environment?: HelperEnvironment;
  /** Seed of `bpf_get_prandom_u32` (xorshift). */
  randomSeed?: number;
  /**
   * Execution tier. `compiled` (the default) compiles each program once to WebAssembly
   * (wasm/compile-wasm.ts) and runs it as machine code, falling back to the interpreter for a
   * program it does not take or cannot compile (see {@link Vm.tierCounters}); `interpreter`
   * forces the interpreter (one `switch` on dense predecoded codes, interpreter-code.ts).
   */
  tier?: VmTier;
}

/** The execution tiers: WebAssembly-compiled, or interpreted. */
export type VmTier = 'compiled' | 'interpreter';

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
 * The interpreter and its memory. One `Vm` owns the registers, a stack of 8 frames, the region
 * table (context, stack, each map's values, each ring buffer) and the helper table; programs
 * loaded with {@link Vm.loadOptions} run on it with {@link Vm.run}. Per-event state (CPU,
 * timestamp, pid) is set before each run.
 */
/** The interpreter's methods (interpreter/interpret.ts), installed on the prototype after the class. */
type InterpreterMethods = typeof interpreterMethods;
export interface Vm extends InterpreterMethods {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface above declares the interpreter's methods, installed on the prototype after the class
export class Vm implements InterpreterHost {
  /** Low and high 32-bit halves of r0..r10. */
  regLo = new Int32Array(11);
  regHi = new Int32Array(11);
  readonly maps: readonly BpfMap[];
  readonly budget: number;
  readonly environment: HelperEnvironment;
  readonly output: (output: VmOutput) => void;
  /** The tier asked for (a program may still fall back to the interpreter: {@link tierOf}). */
  readonly tier: VmTier;
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
  /** The program being run. */
  currentProgram: LoadedProgram | undefined;
  /**
   * The compiled tier's linear memory: registers, region table, stack, map values and the
   * context live here (wasm/wasm-layout.ts), and the typed arrays of this VM and its maps are
   * views of it. Undefined when the VM interprets only.
   */
  private memory: WasmMemory | undefined;
  private runState = new Int32Array(8);
  private regionBase = new Int32Array(0);
  private mapAddr: number[] = [];
  /** Bytes of each map's values (kept apart: a view's length reads 0 once memory.grow detached it). */
  private mapBytes: number[] = [];
  private regionCount = 0;
  private contextAddr = 0;
  /** Pages of the trace feed staged in linear memory (compiled tier; see stageRecords). */
  private stage: PageStage | undefined;
  private stageAddr = 0;
  /** The whole linear memory, bytes (compiled tier). */
  private memoryBytes = new Uint8Array(0);
  private readonly entries = new WeakMap<LoadedProgram, CompiledEntry | null>();
  private unknownHelperId = 0;
  /** The last program run compiled and its entry (skips the WeakMap on the per-event path). */
  private hotProgram: LoadedProgram | undefined;
  private hotEntry: CompiledEntry | undefined;
  /**
   * The last two programs that ran fresh on the compiled tier to a normal exit, with their entry
   * and whether they can write the stack: their runs take {@link runFast} (two, so that a spec
   * whose programs alternate on one VM — runqlat's wakeup and switch — takes it too).
   */
  private fast0: LoadedProgram | undefined;
  private fastEntry0: CompiledEntry | undefined;
  private fastSees0 = true;
  private fast1: LoadedProgram | undefined;
  private fastEntry1: CompiledEntry | undefined;
  private fastSees1 = true;
  /**
   * The program whose fresh compiled run last exited normally, when nothing ran since: the
   * register file then holds the start values of every register it cannot write
   * (compile-wasm.ts, writtenRegisters), so its next `start` stores only the others.
   */
  private fileProgram: LoadedProgram | undefined;

  // Region table: index = region id (high half of an address).
  readonly regionBytes: Uint8Array[] = [];
  readonly regionViews: DataView[] = [];
  regionLength: Int32Array;
  /**
   * First accessible byte of each region: 0, except for the stack, where it is the bottom of the
   * current frame (a frame reaches its own 512 bytes and its callers', never a callee's).
   */
  regionLow: Int32Array;
  readonly regionKind: RegionKind[] = [];
  private contextBuffer = new Uint8Array(256);
  /** {@link contextBuffer} as 32-bit words (its length rounded down), for copying records by words. */
  private contextWords = new Int32Array(this.contextBuffer.buffer, 0, 64);
  /** Copies records into the context in JavaScript (wasm/record-copy.ts), its sources cached. */
  private readonly recordCopy = new RecordCopy();
  private readonly ringBuffers: RingBuffer[];
  /** Whether each program run here can see the stack (see {@link seesStack}); the last one apart. */
  private readonly stackUsers = new WeakMap<LoadedProgram, boolean>();
  private zeroProgram: LoadedProgram | undefined;
  private zeroSees = true;
  /** Whether frame 0 may hold bytes a run wrote (a fresh stack is zero). */
  private stackDirty = false;
  /** The stack as 8-byte words (zeroing frame 0 per run: one `fill`). */
  private stackWords: Float64Array;

  readonly helperTable: (HelperFn | undefined)[] = [];
  readonly frameReturn = new Int32Array(MAX_FRAMES);
  readonly frameSaved = new Int32Array(MAX_FRAMES * 9);
  /**
   * Per frame, the `bpf_loop` it is running (its callback runs in the next frame, whose return
   * is marked -1): iterations asked, the current index, the callback's pc, the context (lo, hi),
   * the pc of the `call`.
   */
  readonly frameLoop = new Int32Array(MAX_FRAMES * 6);

  /** CPU of the current event (`bpf_get_smp_processor_id`). */
  cpu = 0;
  /** Timestamp of the current event, ns, as halves (`bpf_ktime_get_ns`). */
  timeLo = 0;
  timeHi = 0;
  /** `common_pid` of the current event. */
  pid = 0;
  /** xorshift32 state of `bpf_get_prandom_u32`. */
  randomState: number;

  /**
   * probe reads that failed since the VM was made, because the address is outside everything the
   * VM holds (the record, the stack, map values): kernel memory (`bpf_probe_read_kernel*`, and the
   * legacy `bpf_probe_read*`, which read kernel addresses first) and user memory
   * (`bpf_probe_read_user*`). A userspace runtime sees neither; runtimes count them per program.
   */
  kernelReadsFailed = 0;
  userReadsFailed = 0;

  /** Instructions executed by the last run. */
  insnCount = 0;
  /** Program and pc where the last run stopped. */
  lastProgram: LoadedProgram | undefined;
  lastPc = 0;
  /** Tail calls made by the current run. */
  tailCalls = 0;
  /** Set by the tail-call helper: the program to continue with. */
  tailTarget: LoadedProgram | undefined;
  /** Current call depth (0 = the program's main frame). */
  frame = 0;
  private faultValue: VmFault | undefined;
  // where the interpreter loop left a fault: base register of a memory access, its size, a message
  faultBase = -1;
  faultSize = 0;
  faultMsg = '';
  private pendingFault: { message: string; address?: [number, number]; region?: RegionKind } | undefined;

  constructor(options: VmOptions = {}) {
    this.maps = options.maps ?? [];
    this.ringBuffers = this.maps.filter((m): m is RingBuffer => m instanceof RingBuffer);
    this.budget = options.budget ?? 1_000_000;
    this.environment = options.environment ?? {};
    this.output = options.output ?? (() => {});
    this.tier = options.tier ?? 'compiled';
    this.randomState = (options.randomSeed ?? 0x2545f491) | 0 || 1;
    if (options.standardHelpers !== false) {
      for (const [id, fn] of standardHelpers) this.helperTable[id] = fn;
    }
    if (options.helpers) for (const [id, fn] of options.helpers) this.helperTable[id] = fn;

    const regionCount = 3 + this.maps.length;
    this.regionLength = new Int32Array(regionCount);
    this.regionLow = new Int32Array(regionCount);
    this.addRegion(0, new Uint8Array(0), 'none');
    this.addRegion(CONTEXT_REGION, this.contextBuffer, 'context');
    this.regionLength[CONTEXT_REGION] = 0;
    const stack = new Uint8Array(STACK_FRAME_SIZE * MAX_FRAMES);
    this.stackWords = new Float64Array(stack.buffer);
    this.addRegion(STACK_REGION, stack, 'stack');
    this.maps.forEach((map, i) => {
      const id = 3 + i;
      map.regionId = id;
      this.addRegion(id, map.values, map instanceof RingBuffer ? 'ringbuf' : 'map-value');
      if (map instanceof RingBuffer) {
        map.emit = (rb, data) =>
          this.output({ kind: 'ringbuf', map: rb.name, cpu: this.cpu, timestamp: this.timestamp, data });
      }
    });
    if (this.tier === 'compiled') {
      const why = !hasWebAssembly
        ? 'WebAssembly is not available'
        : regionCount > MAX_REGIONS
          ? `${this.maps.length} maps: more regions than the compiled tier's ${MAX_REGIONS}`
          : this.budget > MAX_COMPILED_BUDGET
            ? `budget ${this.budget} is above the compiled tier's ${MAX_COMPILED_BUDGET}`
            : undefined;
      if (why === undefined) this.createMemory();
      else this.tierCounters.lastFallbackReason = why;
    }
  }

  /**
   * Moves the registers, the region table, the stack, every map's values and the context into
   * one WebAssembly memory (see wasm/wasm-layout.ts) so compiled code and the interpreter share them.
   */
  private createMemory(): void {
    let at = MAPS_ADDR;
    this.mapBytes = this.maps.map((m) => m.values.length);
    this.regionCount = this.regionLength.length;
    this.mapAddr = this.maps.map((m) => {
      const a = at;
      at += (m.values.length + 7) & ~7;
      return a;
    });
    this.stageAddr = at;
    at += STAGE_BYTES;
    this.contextAddr = at;
    const contextCapacity = Math.max(65536, this.contextBuffer.length);
    const pages = Math.ceil((at + contextCapacity) / PAGE);
    let memory: WasmMemory;
    try {
      memory = createWasmMemory(pages);
    } catch (e) {
      this.tierCounters.lastFallbackReason = `memory of ${pages} pages: ${(e as Error).message}`;
      return;
    }
    const old = {
      lo: this.regLo,
      hi: this.regHi,
      low: this.regionLow,
      len: this.regionLength,
      stack: this.regionBytes[STACK_REGION] as Uint8Array,
      context: this.contextBuffer,
    };
    const mapValues = this.maps.map((m) => m.values);
    this.memory = memory;
    this.bindViews();
    const buf = memory.buffer;
    new Uint8Array(buf, STACK_ADDR, old.stack.length).set(old.stack);
    this.maps.forEach((m, i) => {
      new Uint8Array(buf, this.mapAddr[i] as number, m.values.length).set(mapValues[i] as Uint8Array);
    });
    this.regLo.set(old.lo);
    this.regHi.set(old.hi);
    this.regionLow.set(old.low);
    this.regionLength.set(old.len);
    this.regionLength[CONTEXT_REGION] = 0;
    const base = this.regionBase;
    base[CONTEXT_REGION] = this.contextAddr;
    base[STACK_REGION] = STACK_ADDR;
    this.maps.forEach((_, i) => {
      base[3 + i] = this.mapAddr[i] as number;
    });
    this.runState[State.regionCount / 4] = this.regionLength.length;
    this.runState[State.budget / 4] = this.budget;
  }

  /** (Re)creates every typed-array view of the compiled tier's memory (after creating or growing it). */
  private bindViews(): void {
    const memory = this.memory as WasmMemory;
    const buf = memory.buffer;
    // lengths come from fields, never from the old views: after memory.grow they read 0
    const nr = this.regionCount;
    this.regLo = new Int32Array(buf, REG_LO_ADDR, 11);
    this.regHi = new Int32Array(buf, REG_HI_ADDR, 11);
    this.runState = new Int32Array(buf, STATE_ADDR, 8);
    this.regionLow = new Int32Array(buf, LOW_ADDR, nr);
    this.regionLength = new Int32Array(buf, LEN_ADDR, nr);
    this.regionBase = new Int32Array(buf, BASE_ADDR, nr);
    const stack = new Uint8Array(buf, STACK_ADDR, STACK_FRAME_SIZE * MAX_FRAMES);
    this.stackWords = new Float64Array(buf, STACK_ADDR, (STACK_FRAME_SIZE * MAX_FRAMES) / 8);
    this.setRegionBytes(STACK_REGION, stack);
    this.maps.forEach((m, i) => {
      m.values = new Uint8Array(buf, this.mapAddr[i] as number, this.mapBytes[i] as number);
      this.setRegionBytes(3 + i, m.values);
    });
    this.memoryBytes = new Uint8Array(buf);
    if (this.stage) this.stage.bind(buf);
    else this.stage = new PageStage(this.stageAddr, buf);
    this.contextBuffer = new Uint8Array(buf, this.contextAddr, buf.byteLength - this.contextAddr);
    this.contextWords = new Int32Array(buf, this.contextAddr & ~3, this.contextAddr % 4 === 0 ? this.contextBuffer.length >> 2 : 0);
    this.setRegionBytes(CONTEXT_REGION, this.contextBuffer);
  }

  private setRegionBytes(id: number, bytes: Uint8Array): void {
    this.regionBytes[id] = bytes;
    this.regionViews[id] = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /**
   * A map's values may have been taken by another VM since this one last ran (several VMs can
   * share maps): take them back (the compiled tier copies them into its memory).
   */
  private syncMapRegions(): void {
    const maps = this.maps;
    for (let i = 0; i < maps.length; i++) {
      const m = maps[i] as BpfMap;
      const id = 3 + i;
      if (m.values === this.regionBytes[id]) continue;
      if (this.memory) {
        const mine = new Uint8Array(this.memory.buffer, this.mapAddr[i] as number, this.mapBytes[i] as number);
        mine.set(m.values);
        m.values = mine;
        this.setRegionBytes(id, mine);
      } else this.addRegion(id, m.values, this.regionKind[id] as RegionKind);
    }
  }

  /**
   * The tier `program` runs on in this VM: compiles it on first use (or takes the cached module
   * of the same bytes), and counts the choice in {@link tierCounters}.
   */
  tierOf(program: LoadedProgram): VmTier {
    return this.entryOf(program) ? 'compiled' : 'interpreter';
  }

  private entryOf(program: LoadedProgram): CompiledEntry | undefined {
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
            return fn(this);
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
  private runOne(prog: LoadedProgram, n: number, fresh: number, staged: number): number {
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

  /** After compiled code returned 1: the fault, the budget, a helper's exit or a tail call. */
  private stopped(prog: LoadedProgram): number {
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

  private addRegion(id: number, bytes: Uint8Array, kind: RegionKind): void {
    this.regionBytes[id] = bytes;
    this.regionViews[id] = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.regionLength[id] = bytes.length;
    this.regionKind[id] = kind;
  }

  /** The options to load a program for this VM: its helpers and its maps. */
  loadOptions(name?: string): LoadOptions {
    const table = this.helperTable;
    const maps: MapRef[] = this.maps.map((m) => ({
      valueRegion: m.regionId,
      valueSize: m.spec.valueSize,
      directValue: m.values.length > 0 && !(m instanceof RingBuffer),
    }));
    return { name, helpers: (id: number) => id >= 0 && table[id] !== undefined, maps };
  }

  /** Current event timestamp as a bigint (the output API edge). */
  get timestamp(): bigint {
    return addressToBigInt(this.timeLo, this.timeHi);
  }

  /** r0 after the last run, as an unsigned 64-bit bigint. */
  get r0(): bigint {
    return addressToBigInt(this.regLo[0] as number, this.regHi[0] as number);
  }

  /** Why the last run stopped, when it did not end with `exit`. */
  get fault(): VmFault | undefined {
    return this.faultValue;
  }

  /** Sets r0 from a small signed integer (helper return values, errnos). */
  setReturn(value: number): void {
    this.regLo[0] = value | 0;
    this.regHi[0] = value < 0 ? -1 : Math.floor(value / 0x100000000) | 0;
  }

  setReturn64(lo: number, hi: number): void {
    this.regLo[0] = lo | 0;
    this.regHi[0] = hi | 0;
  }

  /**
   * Checks that [address, address + size) lies inside one region; returns the byte offset in
   * that region (the region id is the address's high half), or -1.
   */
  resolve(lo: number, hi: number, size: number): number {
    if (hi <= 0 || hi >= this.regionLength.length) return -1;
    const a = lo >>> 0;
    if (size < 0 || a < (this.regionLow[hi] as number) || a + size > (this.regionLength[hi] as number)) return -1;
    return a;
  }

  /** Kind of the region an address names ('none' when it names none). */
  regionOf(hi: number): RegionKind {
    if (hi === MAP_HANDLE_REGION) return 'map';
    return this.regionKind[hi] ?? 'none';
  }

  /** Stops the run from inside a helper with a fault. */
  helperFault(message: string, address?: [number, number]): HelperAction {
    this.pendingFault = {
      message,
      address,
      region: address ? this.regionOf(address[1]) : undefined,
    };
    return HelperAction.fault;
  }

  /** The map a map handle in r`reg` names, or undefined. */
  mapArg(reg: number): BpfMap | undefined {
    if (this.regHi[reg] !== MAP_HANDLE_REGION) return undefined;
    return this.maps[this.regLo[reg] as number];
  }

  /** Copies `context` into the context region (the event record, read in place by the program). */
  setContext(context: Uint8Array, byteOffset = 0, length = context.length - byteOffset): void {
    const n = length;
    if (n > this.contextBuffer.length) {
      if (this.memory) {
        // the context is last in the compiled tier's memory: grow it, then renew every view
        let size = this.contextBuffer.length;
        while (size < n) size *= 2;
        const pages = Math.ceil((this.contextAddr + size) / PAGE) - this.memory.buffer.byteLength / PAGE;
        if (pages > 0) this.memory.grow(pages);
        this.bindViews();
      } else {
        let size = this.contextBuffer.length;
        while (size < n) size *= 2;
        this.contextBuffer = new Uint8Array(size);
        this.contextWords = new Int32Array(this.contextBuffer.buffer, 0, size >> 2);
        this.addRegion(CONTEXT_REGION, this.contextBuffer, 'context');
      }
    }
    this.recordCopy.copy(this.contextBuffer, this.contextWords, context, byteOffset, n);
    this.regionLength[CONTEXT_REGION] = n;
  }

  /**
   * Runs `program` with r1 = the context (`context[byteOffset..+length]`, copied into the
   * context region), r2 = its length,
   * r10 = the top of frame 0. Returns how it ended; r0 is in {@link regLo}/{@link regHi}
   * (or {@link r0}), the instruction count in {@link insnCount}, a fault in {@link fault}.
   */
  run(program: LoadedProgram, context: Uint8Array = EMPTY, byteOffset = 0, length = context.length - byteOffset): RunStatus {
    // small, so that it inlines into the caller: the general path is a call of its own
    if (program === this.fast0) return this.runFast(program, this.fastEntry0 as CompiledEntry, this.fastSees0, context, byteOffset, length);
    if (program === this.fast1) return this.runFast(program, this.fastEntry1 as CompiledEntry, this.fastSees1, context, byteOffset, length);
    return this.runGeneral(program, context, byteOffset, length);
  }

  /** {@link run} of any program, from any state. */
  private runGeneral(program: LoadedProgram, context: Uint8Array, byteOffset: number, length: number): RunStatus {
    this.fileProgram = undefined;
    // a program that runs compiled sets its registers in its `start` entry (and copies a staged
    // record there); the interpreter reads them from the register file
    const hot = program === this.hotProgram || (this.memory !== undefined && this.entryOf(program) !== undefined);
    // a record of a staged page (stageRecords): the hot program's `start` copies it in wasm
    const stage = this.stage;
    const staged = stage?.on && length > 16 && length <= this.contextBuffer.length ? stage.locate(context, byteOffset, length) : 0;
    if (staged === 0) this.setContext(context, byteOffset, length);
    else {
      this.regionLength[CONTEXT_REGION] = length;
      if (!hot) this.memoryBytes.copyWithin(this.contextAddr, staged, staged + length);
    }
    if (!hot) {
      const L = this.regLo;
      const H = this.regHi;
      for (let i = 0; i < 11; i++) {
        L[i] = 0;
        H[i] = 0;
      }
      L[1] = 0;
      H[1] = CONTEXT_REGION;
      L[2] = length;
      L[10] = STACK_TOP;
      H[10] = STACK_REGION;
    }
    // a zeroed frame 0: nothing of one event is visible to the next (deeper frames are zeroed
    // when a call enters them, and no frame reaches below its own). Only a program that names
    // r10 or calls a helper (a tail call's target runs on the same frame) can write the stack,
    // so after a run of any other the frame is still zero and is not zeroed again.
    let sees: boolean;
    if (program === this.zeroProgram) sees = this.zeroSees;
    else {
      sees = this.stackUsers.get(program) ?? seesStack(program);
      this.stackUsers.set(program, sees);
      this.zeroProgram = program;
      this.zeroSees = sees;
    }
    if (this.stackDirty) this.stackWords.fill(0, (STACK_TOP - STACK_FRAME_SIZE) / 8, STACK_TOP / 8);
    this.stackDirty = sees;
    this.regionLow[STACK_REGION] = STACK_TOP - STACK_FRAME_SIZE;
    this.tailCalls = 0;
    this.faultValue = undefined;
    this.pendingFault = undefined;
    this.currentProgram = program;
    if (this.maps.length > 0) this.syncMapRegions();
    const status = this.execute(program, hot ? length : -1, hot ? staged : 0);
    const rbs = this.ringBuffers;
    for (let i = 0; i < rbs.length; i++) (rbs[i] as RingBuffer).abandonOutstanding();
    return status;
  }

  /**
   * {@link run} of a program of the fast slots (fast0, fast1): compiled, its entry and whether it
   * can write the stack known, so what is left is the context (a staged record is copied by
   * `start`), and `start` zeroes frame 0 when the last run could have written it and stores
   * every register unless the register file holds this program's start values (fileProgram).
   * Same outcome as `run`'s general path.
   */
  private runFast(program: LoadedProgram, entry: CompiledEntry, sees: boolean, context: Uint8Array, byteOffset: number, length: number): RunStatus {
    const stage = this.stage as PageStage;
    const staged = stage.on && length > 16 && length <= this.contextBuffer.length ? stage.locate(context, byteOffset, length) : 0;
    if (staged === 0) this.setContext(context, byteOffset, length);
    const flags = (this.stackDirty ? StartFlags.zeroFrame : 0) | (program === this.fileProgram ? 0 : StartFlags.full);
    this.stackDirty = sees;
    this.tailCalls = 0;
    this.faultValue = undefined;
    this.pendingFault = undefined;
    this.currentProgram = program;
    if (this.maps.length > 0) this.syncMapRegions();
    const c = this.tierCounters;
    c.compiledRuns++;
    c.fastRuns++;
    let status: number;
    if (entry.start(0, length, staged, flags) === 0) {
      const S = this.runState;
      this.insnCount = S[State.n / 4] as number;
      this.lastPc = S[State.pc / 4] as number;
      this.lastProgram = program;
      this.frame = 0;
      this.fileProgram = program;
      status = RunStatus.ok;
    } else {
      this.fileProgram = undefined;
      status = this.stopped(program);
      if (status === TAIL_CALL) {
        const target = this.tailTarget as LoadedProgram;
        this.tailTarget = undefined;
        status = this.execute(target, -1, 0, this.insnCount);
      }
    }
    const rbs = this.ringBuffers;
    for (let i = 0; i < rbs.length; i++) (rbs[i] as RingBuffer).abandonOutstanding();
    return status as RunStatus;
  }

  /** Runs a program, and the programs it tail-calls (`n`: instructions counted before it). */
  private execute(program: LoadedProgram, fresh: number, staged: number, n = 0): RunStatus {
    let prog = program;
    let length = fresh;
    for (;;) {
      const status = this.runOne(prog, n, length, staged);
      length = -1;
      if (status !== TAIL_CALL) return status as RunStatus;
      n = this.insnCount;
      prog = this.tailTarget as LoadedProgram;
      this.tailTarget = undefined;
    }
  }


  /**
   * Records where a run stopped and turns a fault left by the loop (`faultBase`/`faultSize` for
   * memory, `faultMsg` otherwise) into a {@link VmFault}. Shared by the interpreter and the
   * compiled tier.
   */
  conclude(prog: LoadedProgram, pc: number, n: number, frame: number, status: number): number {
    const L = this.regLo;
    const H = this.regHi;
    const LEN = this.regionLength;
    const NR = LEN.length;
    const OFF = prog.off;
    const budget = this.budget;
    this.insnCount = n;
    if (status === TAIL_CALL) return status;
    this.lastPc = pc;
    this.lastProgram = prog;
    this.frame = frame;
    const faultBase = this.faultBase;
    const faultSize = this.faultSize;
    const faultMsg = this.faultMsg;
    if (faultBase >= 0) {
      // memory fault: compute the address reg + off as 64 bits
      const lo = L[faultBase] as number;
      const hi = H[faultBase] as number;
      const s = (lo >>> 0) + (OFF[pc] as number);
      const aLo = s | 0;
      const aHi = (hi + (s > 0xffffffff ? 1 : s < 0 ? -1 : 0)) | 0;
      const region = this.regionOf(hi);
      const regionLen = hi > 0 && hi < NR ? (LEN[hi] as number) : 0;
      const where =
        region === 'none'
          ? 'no region'
          : region === 'map'
            ? 'a map handle (not memory)'
            : (this.regionLow[hi] as number) > 0
              ? `region ${region} bytes [${this.regionLow[hi]}, ${regionLen}) (the current frame and its callers)`
              : `region ${region} of ${regionLen} bytes`;
      this.faultValue = new VmFault(
        `memory fault: ${faultSize}-byte access at ${formatAddress(aLo, aHi)} outside ${where} at pc ${pc} (${formatInsn(prog.bytes, pc)})`,
        pc,
        formatInsn(prog.bytes, pc),
        addressToBigInt(aLo, aHi),
        region,
      );
      status = RunStatus.fault;
    } else if (faultMsg !== '') {
      if (faultMsg === 'helper') {
        const f = this.pendingFault;
        this.pendingFault = undefined;
        const addr = f?.address;
        this.faultValue = new VmFault(
          `helper fault: ${f?.message ?? 'unknown'} at pc ${pc} (${formatInsn(prog.bytes, pc)})`,
          pc,
          formatInsn(prog.bytes, pc),
          addr ? addressToBigInt(addr[0], addr[1]) : undefined,
          f?.region,
        );
      } else {
        this.faultValue = new VmFault(`${faultMsg} at pc ${pc} (${formatInsn(prog.bytes, pc)})`, pc, formatInsn(prog.bytes, pc));
      }
      status = RunStatus.fault;
    } else if (status === RunStatus.budgetExhausted) {
      this.faultValue = new VmFault(
        `instruction budget of ${budget} exhausted at pc ${pc} (${formatInsn(prog.bytes, pc)})`,
        pc,
        formatInsn(prog.bytes, pc),
        undefined,
        undefined,
        'budget-exhausted',
      );
    }
    return status;
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

  /** Runs and returns r0, throwing the fault (a {@link VmFault}) when the run does not exit. */
  runOrThrow(program: LoadedProgram, context?: Uint8Array): bigint {
    const status = this.run(program, context);
    if (status !== RunStatus.ok) throw this.faultValue ?? new VmError('fault', 'run failed');
    return this.r0;
  }
}

/**
 * Whether a run of `program` can see frame 0 of the stack: it names r10 (as a base, a source or
 * a destination), or it calls a helper (a tail call's target runs on the same frame). A program
 * that does neither holds no pointer into the stack, so its runs need no zeroed frame.
 */
function seesStack(program: LoadedProgram): boolean {
  if (program.helpers.size > 0) return true;
  const { dst, src } = program;
  for (let i = 0; i < program.length; i++) if (dst[i] === 10 || src[i] === 10) return true;
  return false;
}

Object.assign(Vm.prototype, interpreterMethods);
