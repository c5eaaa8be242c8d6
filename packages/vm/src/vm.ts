import {
  addressToBigInt,
  CONTEXT_REGION,
  formatAddress,
  FUNC_REGION,
  MAP_HANDLE_REGION,
  MAX_FRAMES,
  STACK_FRAME_SIZE,
  STACK_REGION,
} from './address.js';
import { callbackEntries, isCallbackEntry, mayCallLoop } from './callbacks.js';
import { PageStage, STAGE_BYTES } from './wasm/page-stage.js';
import { type RegionKind, VmError, VmFault } from './errors.js';
import { HelperId } from './helper-ids.js';
import { HelperAction, type HelperFn, standardHelpers } from './helpers.js';
import { Errno } from './maps/errno.js';
import { formatInsn } from './insn-text.js';
import type { BpfMap } from './maps/map.js';
import { RingBuffer } from './maps/ring-buffer.js';
import type { LoadedProgram, LoadOptions, MapRef } from './program.js';
import { mul64, sdivmod64, udivmod64, wide } from './wide.js';
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

/** r10 of frame 0: the stack grows down from the end of the stack region, one frame per call. */
const STACK_TOP = STACK_FRAME_SIZE * MAX_FRAMES;

const EMPTY = new Uint8Array(0);

/** Internal status of {@link Vm.interpret}: continue in `tailTarget`. */
const TAIL_CALL = 3;

/** How a run ended. */
export const RunStatus = { ok: 0, fault: 1, budgetExhausted: 2 } as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

/** One output of a run: a ring-buffer or perf record, or a trace_printk line. */
export type VmOutput =
  | { kind: 'ringbuf'; map: string; cpu: number; timestamp: bigint; data: Uint8Array }
  | { kind: 'perf'; map: string; cpu: number; timestamp: bigint; data: Uint8Array }
  | { kind: 'printk'; cpu: number; timestamp: bigint; pid: number; text: string };

/** What helpers ask about the node (the agent's view of tracefs). */
export interface HelperEnvironment {
  /** tgid of a pid, from `saved_tgids`. */
  tgidOf?: (pid: number) => number | undefined;
  /** comm of a pid, from `saved_cmdlines`. */
  commOf?: (pid: number) => string | undefined;
  /** (uid, gid) of a pid, when the agent knows it. */
  uidGidOf?: (pid: number) => readonly [number, number] | undefined;
  /**
   * The id of a pid's cgroup on the unified hierarchy (cgroup v2: the inode number of its
   * directory), for `bpf_get_current_cgroup_id`; undefined when unknown (the helper gives 0).
   */
  cgroupIdOf?: (pid: number) => bigint | number | undefined;
  /**
   * Whether the task `pid` is under the cgroup in slot `idx` of a cgroup array
   * (`bpf_current_task_under_cgroup`); undefined when unknown (the helper answers -EAGAIN, as
   * for an empty slot).
   */
  taskUnderCgroup?: (pid: number, idx: number) => boolean | undefined;
  /**
   * The pid namespace the records' pids are numbered in (tracefs gives pids of the initial
   * namespace, so this is the node's: the agent reads it with `stat /proc/self/ns/pid` when it
   * runs there): `st_dev` and `st_ino`. `bpf_get_ns_current_pid_tgid` answers for it only;
   * without it the helper gives -ENOENT.
   */
  pidNamespace?: { dev: bigint | number; ino: bigint | number };
  /**
   * Sends signal `sig` for `bpf_send_signal` (`thread` false: to the process of `pid`) or
   * `bpf_send_signal_thread` (`thread` true: to the thread `pid`); returns 0 or a negative
   * errno. Absent (the default), the helpers give -EPERM: a replay cannot signal the task that
   * was recorded, and the VM never signals a process by itself.
   */
  sendSignal?: (pid: number, sig: number, thread: boolean) => number;
  /** `CONFIG_HZ` of the recorded kernel, for `bpf_jiffies64` (default 250). */
  hz?: number;
  /**
   * CLOCK_TAI minus the records' clock, ns, for `bpf_ktime_get_tai_ns` (default 0: the record
   * timestamp itself).
   */
  taiOffsetNs?: bigint | number;
  /** The BPF cookie of the attachment (`bpf_get_attach_cookie`); default 0, as with no cookie. */
  attachCookie?: bigint | number;
}

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
  /** Why the last program fell back to the interpreter. */
  lastFallbackReason: string | undefined;
}

/**
 * The interpreter and its memory. One `Vm` owns the registers, a stack of 8 frames, the region
 * table (context, stack, each map's values, each ring buffer) and the helper table; programs
 * loaded with {@link Vm.loadOptions} run on it with {@link Vm.run}. Per-event state (CPU,
 * timestamp, pid) is set before each run.
 */
export class Vm {
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
  /**
   * Word views of the last two buffers records came from (a reader's pages: one pool per CPU),
   * so copying a record into the context allocates nothing.
   */
  private sourceBuffer0: ArrayBufferLike | undefined;
  private sourceWords0: Int32Array<ArrayBufferLike> = new Int32Array(0);
  private sourceBuffer1: ArrayBufferLike | undefined;
  private sourceWords1: Int32Array<ArrayBufferLike> = new Int32Array(0);
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
  private readonly frameReturn = new Int32Array(MAX_FRAMES);
  private readonly frameSaved = new Int32Array(MAX_FRAMES * 9);
  /**
   * Per frame, the `bpf_loop` it is running (its callback runs in the next frame, whose return
   * is marked -1): iterations asked, the current index, the callback's pc, the context (lo, hi),
   * the pc of the `call`.
   */
  private readonly frameLoop = new Int32Array(MAX_FRAMES * 6);

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
    if ((fresh >= 0 ? entry.start(n, fresh, staged) : entry.run(n)) === 0) {
      // exit from frame 0: what conclude does for a run without a fault
      this.insnCount = S[State.n / 4] as number;
      this.lastPc = S[State.pc / 4] as number;
      this.lastProgram = prog;
      this.frame = 0;
      return RunStatus.ok;
    }
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
    const buf = this.contextBuffer;
    // a byte loop only for the smallest records: per byte it re-checks both arrays (measured:
    // a 64-byte copy took longer than the 15-instruction program it fed); a record inside a
    // larger buffer (a page), 4-byte aligned as ring-buffer records are, goes word by word
    // through a cached view of its buffer: `subarray` would allocate a view per event
    if (n <= 16) {
      for (let i = 0; i < n; i++) buf[i] = context[byteOffset + i] as number;
    } else if (byteOffset === 0 && n === context.length) {
      buf.set(context);
    } else {
      const at = context.byteOffset + byteOffset;
      const words = (at & 3) !== 0 ? undefined : this.wordsOf(context.buffer);
      const w = (n + 3) >> 2;
      const s = at >> 2;
      if (words !== undefined && s + w <= words.length && w <= this.contextWords.length) {
        const dst = this.contextWords;
        // four words a step (measured: about a third faster than one a step on 64 bytes)
        let i = 0;
        for (; i + 4 <= w; i += 4) {
          dst[i] = words[s + i] as number;
          dst[i + 1] = words[s + i + 1] as number;
          dst[i + 2] = words[s + i + 2] as number;
          dst[i + 3] = words[s + i + 3] as number;
        }
        for (; i < w; i++) dst[i] = words[s + i] as number;
      } else buf.set(context.subarray(byteOffset, byteOffset + n));
    }
    this.regionLength[CONTEXT_REGION] = n;
  }

  /** A word view of `buffer` from the two-entry cache (undefined for a buffer it cannot view). */
  private wordsOf(buffer: ArrayBufferLike): Int32Array<ArrayBufferLike> | undefined {
    if (buffer === this.sourceBuffer0) return this.sourceWords0;
    if (buffer === this.sourceBuffer1) return this.sourceWords1;
    if (buffer.byteLength < 64) return undefined;
    this.sourceBuffer1 = this.sourceBuffer0;
    this.sourceWords1 = this.sourceWords0;
    this.sourceBuffer0 = buffer;
    this.sourceWords0 = new Int32Array(buffer, 0, buffer.byteLength >> 2);
    return this.sourceWords0;
  }

  /**
   * Runs `program` with r1 = the context (`context[byteOffset..+length]`, copied into the
   * context region), r2 = its length,
   * r10 = the top of frame 0. Returns how it ended; r0 is in {@link regLo}/{@link regHi}
   * (or {@link r0}), the instruction count in {@link insnCount}, a fault in {@link fault}.
   */
  run(program: LoadedProgram, context: Uint8Array = EMPTY, byteOffset = 0, length = context.length - byteOffset): RunStatus {
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

  /** Runs a program, and the programs it tail-calls. */
  private execute(program: LoadedProgram, fresh: number, staged: number): RunStatus {
    let prog = program;
    let n = 0;
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
   * The interpreter loop over one program, starting at pc 0 with `n` instructions already
   * executed. Returns a {@link RunStatus}, or TAIL_CALL with the target in `tailTarget`.
   *
   * Shape (each point measured with `pnpm bench`): one `switch` over the dense codes of
   * interpreter-code.ts (a jump table; every label a numeric literal), one packed word per slot
   * (code, dst, src, offset) plus the immediate, superinstructions for common pairs, and a hot
   * inner loop without calls: helper calls, BPF-to-BPF calls and 64-bit division leave it for
   * the outer loop, which reads every array again before re-entering, so V8 checks the typed
   * arrays' maps once per entry instead of at every access (a call would make it forget them).
   */
  private interpret(prog: LoadedProgram, startCount: number): number {
    const INSN = prog.insn;
    const IMM = prog.imm;
    const IMMHI = prog.immHi;
    const L = this.regLo;
    const H = this.regHi;
    const LEN = this.regionLength;
    const LOW = this.regionLow;
    const VIEWS = this.regionViews;
    const BYTES = this.regionBytes;
    const NR = LEN.length;
    const HELPERS = this.helperTable;
    const budget = this.budget;
    let pc = 0;
    let n = startCount;
    let frame = 0;
    let status: number = RunStatus.ok;
    this.faultBase = -1;
    this.faultSize = 0;
    this.faultMsg = '';

    let slow = false;
    let w = 0;

    run: for (;;) {
      // read every array once before the hot loop: V8 then checks their maps here, and (the
      // hot loop making no calls) not again per access inside it
      w = (INSN[pc] as number) | (IMM[pc] as number) | (IMMHI[pc] as number) | (L[0] as number) | (H[0] as number);
      w |= (LEN[0] as number) | (LOW[0] as number);
      exec: for (;;) {
        n++;
        // the slot's packed word: code | dst << 8 | src << 12 | offset << 16 (interpreter-code.ts);
        // one jump table over the dense codes, so the labels must stay numeric literals
        w = INSN[pc] as number;
        switch (w & 0xff) {
          case 137: { // addImmJneImm: rX += imm; if rX != imm2 goto
            const d = (w >> 8) & 15;
            const k = IMM[pc] as number;
            const x = ((L[d] as number) + k) | 0;
            const h = ((H[d] as number) + ((IMM[pc] as number) >> 31) + (x >>> 0 < k >>> 0 ? 1 : 0)) | 0;
            L[d] = x;
            H[d] = h;
            n++;
            pc++;
            w = INSN[pc] as number;
            if (x !== IMM[pc] || h !== (IMM[pc] as number) >> 31) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 138: { // addImmJeqImm: rX += imm; if rX == imm2 goto
            const d = (w >> 8) & 15;
            const k = IMM[pc] as number;
            const x = ((L[d] as number) + k) | 0;
            const h = ((H[d] as number) + ((IMM[pc] as number) >> 31) + (x >>> 0 < k >>> 0 ? 1 : 0)) | 0;
            L[d] = x;
            H[d] = h;
            n++;
            pc++;
            w = INSN[pc] as number;
            if (x === IMM[pc] && h === (IMM[pc] as number) >> 31) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 144: { // addImmJltReg: rX += imm; if rX < rY goto
            const d = (w >> 8) & 15;
            const k = IMM[pc] as number;
            const x = ((L[d] as number) + k) | 0;
            const h = ((H[d] as number) + ((IMM[pc] as number) >> 31) + (x >>> 0 < k >>> 0 ? 1 : 0)) | 0;
            L[d] = x;
            H[d] = h;
            n++;
            pc++;
            w = INSN[pc] as number;
            const sr = (w >> 12) & 15;
            const bh = H[sr] as number;
            if (h !== bh ? h >>> 0 < bh >>> 0 : x >>> 0 < (L[sr] as number) >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 139: { // movRshImm: rX = rY; rX >>= imm
            const d = (w >> 8) & 15;
            const sr = (w >> 12) & 15;
            const lo = L[sr] as number;
            const hi = H[sr] as number;
            const c = (IMM[pc + 1] as number) & 63;
            if (c < 32) {
              L[d] = c === 0 ? lo : (lo >>> c) | (hi << (32 - c));
              H[d] = hi >>> c;
            } else {
              L[d] = hi >>> (c - 32);
              H[d] = 0;
            }
            n++;
            pc += 2;
            continue;
          }
          case 140: { // movLshImm: rX = rY; rX <<= imm
            const d = (w >> 8) & 15;
            const sr = (w >> 12) & 15;
            const lo = L[sr] as number;
            const hi = H[sr] as number;
            const c = (IMM[pc + 1] as number) & 63;
            if (c < 32) {
              H[d] = c === 0 ? hi : (hi << c) | (lo >>> (32 - c));
              L[d] = lo << c;
            } else {
              H[d] = lo << (c - 32);
              L[d] = 0;
            }
            n++;
            pc += 2;
            continue;
          }
          case 141: { // ldxbAdd: rX = *(u8 *)(rY + off); rZ += rX
            const s = (w >> 12) & 15;
            const id = H[s] as number;
            const a = ((L[s] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a >= (LEN[id] as number)) {
              this.faultBase = s;
              this.faultSize = 1;
              break exec;
            }
            const d = (w >> 8) & 15;
            const v = (BYTES[id] as Uint8Array)[a] as number;
            L[d] = v;
            H[d] = 0;
            n++;
            pc++;
            w = INSN[pc] as number;
            w = INSN[pc] as number;
            const d2 = (w >> 8) & 15;
            const x = ((L[d2] as number) + v) | 0;
            H[d2] = ((H[d2] as number) + 0 + (x >>> 0 < v >>> 0 ? 1 : 0)) | 0;
            L[d2] = x;
            pc++;
            continue;
          }
          case 142: { // ldxwAdd: rX = *(u32 *)(rY + off); rZ += rX
            const s = (w >> 12) & 15;
            const id = H[s] as number;
            const a = ((L[s] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 4 > (LEN[id] as number)) {
              this.faultBase = s;
              this.faultSize = 4;
              break exec;
            }
            const d = (w >> 8) & 15;
            const v = (VIEWS[id] as DataView).getInt32(a, true);
            L[d] = v;
            H[d] = 0;
            n++;
            pc++;
            w = INSN[pc] as number;
            w = INSN[pc] as number;
            const d2 = (w >> 8) & 15;
            const x = ((L[d2] as number) + v) | 0;
            H[d2] = ((H[d2] as number) + 0 + (x >>> 0 < v >>> 0 ? 1 : 0)) | 0;
            L[d2] = x;
            pc++;
            continue;
          }
          case 143: { // ldxdwAdd: rX = *(u64 *)(rY + off); rZ += rX
            const s = (w >> 12) & 15;
            const id = H[s] as number;
            const a = ((L[s] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 8 > (LEN[id] as number)) {
              this.faultBase = s;
              this.faultSize = 8;
              break exec;
            }
            const d = (w >> 8) & 15;
            const view = VIEWS[id] as DataView;
            const v = view.getInt32(a, true);
            const vh = view.getInt32(a + 4, true);
            L[d] = v;
            H[d] = vh;
            n++;
            pc++;
            w = INSN[pc] as number;
            w = INSN[pc] as number;
            const d2 = (w >> 8) & 15;
            const x = ((L[d2] as number) + v) | 0;
            H[d2] = ((H[d2] as number) + vh + (x >>> 0 < v >>> 0 ? 1 : 0)) | 0;
            L[d2] = x;
            pc++;
            continue;
          }
          case 1: { // add64Imm
            const d = (w >> 8) & 15;
            const k = IMM[pc] as number;
            const x = ((L[d] as number) + k) | 0;
            const h = ((H[d] as number) + ((IMM[pc] as number) >> 31) + (x >>> 0 < k >>> 0 ? 1 : 0)) | 0;
            L[d] = x;
            H[d] = h;
            pc++;
            continue;
          }
          case 2: { // add64Reg
            const d = (w >> 8) & 15;
            const sr = (w >> 12) & 15;
            const b = L[sr] as number;
            const x = ((L[d] as number) + b) | 0;
            H[d] = ((H[d] as number) + (H[sr] as number) + (x >>> 0 < b >>> 0 ? 1 : 0)) | 0;
            L[d] = x;
            pc++;
            continue;
          }
          case 3: { // sub64Imm
            const d = (w >> 8) & 15;
            const a = L[d] as number;
            const k = IMM[pc] as number;
            L[d] = (a - k) | 0;
            H[d] = ((H[d] as number) - ((IMM[pc] as number) >> 31) - (a >>> 0 < k >>> 0 ? 1 : 0)) | 0;
            pc++;
            continue;
          }
          case 4: { // sub64Reg
            const d = (w >> 8) & 15;
            const sr = (w >> 12) & 15;
            const a = L[d] as number;
            const b = L[sr] as number;
            L[d] = (a - b) | 0;
            H[d] = ((H[d] as number) - (H[sr] as number) - (a >>> 0 < b >>> 0 ? 1 : 0)) | 0;
            pc++;
            continue;
          }
          case 5: { // mul64Imm
            const d = (w >> 8) & 15;
            L[d] = mul64(L[d] as number, H[d] as number, IMM[pc] as number, (IMM[pc] as number) >> 31);
            H[d] = wide[0] as number;
            pc++;
            continue;
          }
          case 6: { // mul64Reg
            const d = (w >> 8) & 15;
            const sr = (w >> 12) & 15;
            L[d] = mul64(L[d] as number, H[d] as number, L[sr] as number, H[sr] as number);
            H[d] = wide[0] as number;
            pc++;
            continue;
          }
          case 11: { // or64Imm
            const d = (w >> 8) & 15;
            L[d] = (L[d] as number) | (IMM[pc] as number);
            H[d] = (H[d] as number) | ((IMM[pc] as number) >> 31);
            pc++;
            continue;
          }
          case 12: { // or64Reg
            const d = (w >> 8) & 15;
            const sr = (w >> 12) & 15;
            L[d] = (L[d] as number) | (L[sr] as number);
            H[d] = (H[d] as number) | (H[sr] as number);
            pc++;
            continue;
          }
          case 13: { // and64Imm
            const d = (w >> 8) & 15;
            L[d] = (L[d] as number) & (IMM[pc] as number);
            H[d] = (H[d] as number) & ((IMM[pc] as number) >> 31);
            pc++;
            continue;
          }
          case 14: { // and64Reg
            const d = (w >> 8) & 15;
            const sr = (w >> 12) & 15;
            L[d] = (L[d] as number) & (L[sr] as number);
            H[d] = (H[d] as number) & (H[sr] as number);
            pc++;
            continue;
          }
          case 20: { // xor64Imm
            const d = (w >> 8) & 15;
            L[d] = (L[d] as number) ^ (IMM[pc] as number);
            H[d] = (H[d] as number) ^ ((IMM[pc] as number) >> 31);
            pc++;
            continue;
          }
          case 21: { // xor64Reg
            const d = (w >> 8) & 15;
            const sr = (w >> 12) & 15;
            L[d] = (L[d] as number) ^ (L[sr] as number);
            H[d] = (H[d] as number) ^ (H[sr] as number);
            pc++;
            continue;
          }
          case 15: { // lsh64Imm
            const d = (w >> 8) & 15;
            const c = (IMM[pc] as number) & 63;
            if (c !== 0) {
              const lo = L[d] as number;
              if (c < 32) {
                H[d] = ((H[d] as number) << c) | (lo >>> (32 - c));
                L[d] = lo << c;
              } else {
                H[d] = lo << (c - 32);
                L[d] = 0;
              }
            }
            pc++;
            continue;
          }
          case 16: { // lsh64Reg
            const d = (w >> 8) & 15;
            const c = (L[(w >> 12) & 15] as number) & 63;
            if (c !== 0) {
              const lo = L[d] as number;
              if (c < 32) {
                H[d] = ((H[d] as number) << c) | (lo >>> (32 - c));
                L[d] = lo << c;
              } else {
                H[d] = lo << (c - 32);
                L[d] = 0;
              }
            }
            pc++;
            continue;
          }
          case 17: { // rsh64Imm
            const d = (w >> 8) & 15;
            const c = (IMM[pc] as number) & 63;
            if (c !== 0) {
              const hi = H[d] as number;
              if (c < 32) {
                L[d] = ((L[d] as number) >>> c) | (hi << (32 - c));
                H[d] = hi >>> c;
              } else {
                L[d] = hi >>> (c - 32);
                H[d] = 0;
              }
            }
            pc++;
            continue;
          }
          case 18: { // rsh64Reg
            const d = (w >> 8) & 15;
            const c = (L[(w >> 12) & 15] as number) & 63;
            if (c !== 0) {
              const hi = H[d] as number;
              if (c < 32) {
                L[d] = ((L[d] as number) >>> c) | (hi << (32 - c));
                H[d] = hi >>> c;
              } else {
                L[d] = hi >>> (c - 32);
                H[d] = 0;
              }
            }
            pc++;
            continue;
          }
          case 24: { // arsh64Imm
            const d = (w >> 8) & 15;
            const c = (IMM[pc] as number) & 63;
            if (c !== 0) {
              const hi = H[d] as number;
              if (c < 32) {
                L[d] = ((L[d] as number) >>> c) | (hi << (32 - c));
                H[d] = hi >> c;
              } else {
                L[d] = hi >> (c - 32);
                H[d] = hi >> 31;
              }
            }
            pc++;
            continue;
          }
          case 25: { // arsh64Reg
            const d = (w >> 8) & 15;
            const c = (L[(w >> 12) & 15] as number) & 63;
            if (c !== 0) {
              const hi = H[d] as number;
              if (c < 32) {
                L[d] = ((L[d] as number) >>> c) | (hi << (32 - c));
                H[d] = hi >> c;
              } else {
                L[d] = hi >> (c - 32);
                H[d] = hi >> 31;
              }
            }
            pc++;
            continue;
          }
          case 19: { // neg64
            const d = (w >> 8) & 15;
            const lo = L[d] as number;
            L[d] = -lo | 0;
            H[d] = (~(H[d] as number) + (lo === 0 ? 1 : 0)) | 0;
            pc++;
            continue;
          }
          case 22: { // mov64Imm
            const d = (w >> 8) & 15;
            L[d] = IMM[pc] as number;
            H[d] = (IMM[pc] as number) >> 31;
            pc++;
            continue;
          }
          case 23: { // mov64Reg
            const d = (w >> 8) & 15;
            const sr = (w >> 12) & 15;
            L[d] = L[sr] as number;
            H[d] = H[sr] as number;
            pc++;
            continue;
          }
          case 30: { // movsx8To64
            const d = (w >> 8) & 15;
            const v = ((L[(w >> 12) & 15] as number) << 24) >> 24;
            L[d] = v;
            H[d] = v >> 31;
            pc++;
            continue;
          }
          case 31: { // movsx16To64
            const d = (w >> 8) & 15;
            const v = ((L[(w >> 12) & 15] as number) << 16) >> 16;
            L[d] = v;
            H[d] = v >> 31;
            pc++;
            continue;
          }
          case 32: { // movsx32To64
            const d = (w >> 8) & 15;
            const v = L[(w >> 12) & 15] as number;
            L[d] = v;
            H[d] = v >> 31;
            pc++;
            continue;
          }
          case 33: { // loadImm64
            const d = (w >> 8) & 15;
            L[d] = IMM[pc] as number;
            H[d] = IMMHI[pc] as number;
            pc += 2;
            continue;
          }
          case 71: { // ldxw
            const s = (w >> 12) & 15;
            const id = H[s] as number;
            const a = ((L[s] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 4 > (LEN[id] as number)) {
              this.faultBase = s;
              this.faultSize = 4;
              break exec;
            }
            const d = (w >> 8) & 15;
            L[d] = (VIEWS[id] as DataView).getInt32(a, true);
            H[d] = 0;
            pc++;
            continue;
          }
          case 72: { // ldxh
            const s = (w >> 12) & 15;
            const id = H[s] as number;
            const a = ((L[s] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 2 > (LEN[id] as number)) {
              this.faultBase = s;
              this.faultSize = 2;
              break exec;
            }
            const d = (w >> 8) & 15;
            L[d] = (VIEWS[id] as DataView).getUint16(a, true);
            H[d] = 0;
            pc++;
            continue;
          }
          case 73: { // ldxb
            const s = (w >> 12) & 15;
            const id = H[s] as number;
            const a = ((L[s] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a >= (LEN[id] as number)) {
              this.faultBase = s;
              this.faultSize = 1;
              break exec;
            }
            const d = (w >> 8) & 15;
            L[d] = (BYTES[id] as Uint8Array)[a] as number;
            H[d] = 0;
            pc++;
            continue;
          }
          case 74: { // ldxdw
            const s = (w >> 12) & 15;
            const id = H[s] as number;
            const a = ((L[s] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 8 > (LEN[id] as number)) {
              this.faultBase = s;
              this.faultSize = 8;
              break exec;
            }
            const d = (w >> 8) & 15;
            const view = VIEWS[id] as DataView;
            L[d] = view.getInt32(a, true);
            H[d] = view.getInt32(a + 4, true);
            pc++;
            continue;
          }
          case 75: { // ldxsw
            const s = (w >> 12) & 15;
            const id = H[s] as number;
            const a = ((L[s] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 4 > (LEN[id] as number)) {
              this.faultBase = s;
              this.faultSize = 4;
              break exec;
            }
            const d = (w >> 8) & 15;
            const v = (VIEWS[id] as DataView).getInt32(a, true);
            L[d] = v;
            H[d] = v >> 31;
            pc++;
            continue;
          }
          case 76: { // ldxsh
            const s = (w >> 12) & 15;
            const id = H[s] as number;
            const a = ((L[s] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 2 > (LEN[id] as number)) {
              this.faultBase = s;
              this.faultSize = 2;
              break exec;
            }
            const d = (w >> 8) & 15;
            const v = (VIEWS[id] as DataView).getInt16(a, true);
            L[d] = v;
            H[d] = v >> 31;
            pc++;
            continue;
          }
          case 77: { // ldxsb
            const s = (w >> 12) & 15;
            const id = H[s] as number;
            const a = ((L[s] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a >= (LEN[id] as number)) {
              this.faultBase = s;
              this.faultSize = 1;
              break exec;
            }
            const d = (w >> 8) & 15;
            const v = (((BYTES[id] as Uint8Array)[a] as number) << 24) >> 24;
            L[d] = v;
            H[d] = v >> 31;
            pc++;
            continue;
          }
          case 78: { // stw
            const b = (w >> 8) & 15;
            const id = H[b] as number;
            const a = ((L[b] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 4 > (LEN[id] as number)) {
              this.faultBase = b;
              this.faultSize = 4;
              break exec;
            }
            (VIEWS[id] as DataView).setInt32(a, IMM[pc] as number, true);
            pc++;
            continue;
          }
          case 79: { // sth
            const b = (w >> 8) & 15;
            const id = H[b] as number;
            const a = ((L[b] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 2 > (LEN[id] as number)) {
              this.faultBase = b;
              this.faultSize = 2;
              break exec;
            }
            (VIEWS[id] as DataView).setInt16(a, IMM[pc] as number, true);
            pc++;
            continue;
          }
          case 80: { // stb
            const b = (w >> 8) & 15;
            const id = H[b] as number;
            const a = ((L[b] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a >= (LEN[id] as number)) {
              this.faultBase = b;
              this.faultSize = 1;
              break exec;
            }
            (BYTES[id] as Uint8Array)[a] = IMM[pc] as number;
            pc++;
            continue;
          }
          case 82: { // stxw
            const b = (w >> 8) & 15;
            const id = H[b] as number;
            const a = ((L[b] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 4 > (LEN[id] as number)) {
              this.faultBase = b;
              this.faultSize = 4;
              break exec;
            }
            (VIEWS[id] as DataView).setInt32(a, L[(w >> 12) & 15] as number, true);
            pc++;
            continue;
          }
          case 83: { // stxh
            const b = (w >> 8) & 15;
            const id = H[b] as number;
            const a = ((L[b] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 2 > (LEN[id] as number)) {
              this.faultBase = b;
              this.faultSize = 2;
              break exec;
            }
            (VIEWS[id] as DataView).setInt16(a, L[(w >> 12) & 15] as number, true);
            pc++;
            continue;
          }
          case 84: { // stxb
            const b = (w >> 8) & 15;
            const id = H[b] as number;
            const a = ((L[b] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a >= (LEN[id] as number)) {
              this.faultBase = b;
              this.faultSize = 1;
              break exec;
            }
            (BYTES[id] as Uint8Array)[a] = L[(w >> 12) & 15] as number;
            pc++;
            continue;
          }
          case 81: { // stdw
            const b = (w >> 8) & 15;
            const id = H[b] as number;
            const a = ((L[b] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 8 > (LEN[id] as number)) {
              this.faultBase = b;
              this.faultSize = 8;
              break exec;
            }
            const view = VIEWS[id] as DataView;
            view.setInt32(a, IMM[pc] as number, true);
            view.setInt32(a + 4, (IMM[pc] as number) >> 31, true);
            pc++;
            continue;
          }
          case 85: { // stxdw
            const b = (w >> 8) & 15;
            const id = H[b] as number;
            const a = ((L[b] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 8 > (LEN[id] as number)) {
              this.faultBase = b;
              this.faultSize = 8;
              break exec;
            }
            const view = VIEWS[id] as DataView;
            const sr = (w >> 12) & 15;
            view.setInt32(a, L[sr] as number, true);
            view.setInt32(a + 4, H[sr] as number, true);
            pc++;
            continue;
          }
          case 145: { // gotol (JMP32 ja: offset in imm)
            pc = pc + 1 + (IMM[pc] as number);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
            continue;
          }
          case 88: { // ja
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
            continue;
          }
          case 89: { // jeqImm
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const bl = IMM[pc] as number;
            const bh = (IMM[pc] as number) >> 31;
            if (al === bl && ah === bh) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 111: { // jeq32Imm
            const a = L[(w >> 8) & 15] as number;
            const b = IMM[pc] as number;
            if (a === b) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 90: { // jeqReg
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const sr = (w >> 12) & 15;
            const bl = L[sr] as number;
            const bh = H[sr] as number;
            if (al === bl && ah === bh) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 112: { // jeq32Reg
            const a = L[(w >> 8) & 15] as number;
            const b = L[(w >> 12) & 15] as number;
            if (a === b) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 91: { // jgtImm
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const bl = IMM[pc] as number;
            const bh = (IMM[pc] as number) >> 31;
            if (ah !== bh ? ah >>> 0 > bh >>> 0 : al >>> 0 > bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 113: { // jgt32Imm
            const a = L[(w >> 8) & 15] as number;
            const b = IMM[pc] as number;
            if (a >>> 0 > b >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 92: { // jgtReg
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const sr = (w >> 12) & 15;
            const bl = L[sr] as number;
            const bh = H[sr] as number;
            if (ah !== bh ? ah >>> 0 > bh >>> 0 : al >>> 0 > bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 114: { // jgt32Reg
            const a = L[(w >> 8) & 15] as number;
            const b = L[(w >> 12) & 15] as number;
            if (a >>> 0 > b >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 93: { // jgeImm
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const bl = IMM[pc] as number;
            const bh = (IMM[pc] as number) >> 31;
            if (ah !== bh ? ah >>> 0 > bh >>> 0 : al >>> 0 >= bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 115: { // jge32Imm
            const a = L[(w >> 8) & 15] as number;
            const b = IMM[pc] as number;
            if (a >>> 0 >= b >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 94: { // jgeReg
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const sr = (w >> 12) & 15;
            const bl = L[sr] as number;
            const bh = H[sr] as number;
            if (ah !== bh ? ah >>> 0 > bh >>> 0 : al >>> 0 >= bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 116: { // jge32Reg
            const a = L[(w >> 8) & 15] as number;
            const b = L[(w >> 12) & 15] as number;
            if (a >>> 0 >= b >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 95: { // jsetImm
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const bl = IMM[pc] as number;
            const bh = (IMM[pc] as number) >> 31;
            if ((al & bl) !== 0 || (ah & bh) !== 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 117: { // jset32Imm
            const a = L[(w >> 8) & 15] as number;
            const b = IMM[pc] as number;
            if ((a & b) !== 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 96: { // jsetReg
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const sr = (w >> 12) & 15;
            const bl = L[sr] as number;
            const bh = H[sr] as number;
            if ((al & bl) !== 0 || (ah & bh) !== 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 118: { // jset32Reg
            const a = L[(w >> 8) & 15] as number;
            const b = L[(w >> 12) & 15] as number;
            if ((a & b) !== 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 97: { // jneImm
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const bl = IMM[pc] as number;
            const bh = (IMM[pc] as number) >> 31;
            if (al !== bl || ah !== bh) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 119: { // jne32Imm
            const a = L[(w >> 8) & 15] as number;
            const b = IMM[pc] as number;
            if (a !== b) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 98: { // jneReg
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const sr = (w >> 12) & 15;
            const bl = L[sr] as number;
            const bh = H[sr] as number;
            if (al !== bl || ah !== bh) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 120: { // jne32Reg
            const a = L[(w >> 8) & 15] as number;
            const b = L[(w >> 12) & 15] as number;
            if (a !== b) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 99: { // jsgtImm
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const bl = IMM[pc] as number;
            const bh = (IMM[pc] as number) >> 31;
            if (ah !== bh ? ah > bh : al >>> 0 > bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 121: { // jsgt32Imm
            const a = L[(w >> 8) & 15] as number;
            const b = IMM[pc] as number;
            if (a > b) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 100: { // jsgtReg
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const sr = (w >> 12) & 15;
            const bl = L[sr] as number;
            const bh = H[sr] as number;
            if (ah !== bh ? ah > bh : al >>> 0 > bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 122: { // jsgt32Reg
            const a = L[(w >> 8) & 15] as number;
            const b = L[(w >> 12) & 15] as number;
            if (a > b) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 101: { // jsgeImm
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const bl = IMM[pc] as number;
            const bh = (IMM[pc] as number) >> 31;
            if (ah !== bh ? ah > bh : al >>> 0 >= bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 123: { // jsge32Imm
            const a = L[(w >> 8) & 15] as number;
            const b = IMM[pc] as number;
            if (a >= b) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 102: { // jsgeReg
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const sr = (w >> 12) & 15;
            const bl = L[sr] as number;
            const bh = H[sr] as number;
            if (ah !== bh ? ah > bh : al >>> 0 >= bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 124: { // jsge32Reg
            const a = L[(w >> 8) & 15] as number;
            const b = L[(w >> 12) & 15] as number;
            if (a >= b) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 103: { // jltImm
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const bl = IMM[pc] as number;
            const bh = (IMM[pc] as number) >> 31;
            if (ah !== bh ? ah >>> 0 < bh >>> 0 : al >>> 0 < bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 125: { // jlt32Imm
            const a = L[(w >> 8) & 15] as number;
            const b = IMM[pc] as number;
            if (a >>> 0 < b >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 104: { // jltReg
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const sr = (w >> 12) & 15;
            const bl = L[sr] as number;
            const bh = H[sr] as number;
            if (ah !== bh ? ah >>> 0 < bh >>> 0 : al >>> 0 < bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 126: { // jlt32Reg
            const a = L[(w >> 8) & 15] as number;
            const b = L[(w >> 12) & 15] as number;
            if (a >>> 0 < b >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 105: { // jleImm
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const bl = IMM[pc] as number;
            const bh = (IMM[pc] as number) >> 31;
            if (ah !== bh ? ah >>> 0 < bh >>> 0 : al >>> 0 <= bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 127: { // jle32Imm
            const a = L[(w >> 8) & 15] as number;
            const b = IMM[pc] as number;
            if (a >>> 0 <= b >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 106: { // jleReg
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const sr = (w >> 12) & 15;
            const bl = L[sr] as number;
            const bh = H[sr] as number;
            if (ah !== bh ? ah >>> 0 < bh >>> 0 : al >>> 0 <= bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 128: { // jle32Reg
            const a = L[(w >> 8) & 15] as number;
            const b = L[(w >> 12) & 15] as number;
            if (a >>> 0 <= b >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 107: { // jsltImm
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const bl = IMM[pc] as number;
            const bh = (IMM[pc] as number) >> 31;
            if (ah !== bh ? ah < bh : al >>> 0 < bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 129: { // jslt32Imm
            const a = L[(w >> 8) & 15] as number;
            const b = IMM[pc] as number;
            if (a < b) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 108: { // jsltReg
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const sr = (w >> 12) & 15;
            const bl = L[sr] as number;
            const bh = H[sr] as number;
            if (ah !== bh ? ah < bh : al >>> 0 < bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 130: { // jslt32Reg
            const a = L[(w >> 8) & 15] as number;
            const b = L[(w >> 12) & 15] as number;
            if (a < b) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 109: { // jsleImm
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const bl = IMM[pc] as number;
            const bh = (IMM[pc] as number) >> 31;
            if (ah !== bh ? ah < bh : al >>> 0 <= bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 131: { // jsle32Imm
            const a = L[(w >> 8) & 15] as number;
            const b = IMM[pc] as number;
            if (a <= b) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 110: { // jsleReg
            const d = (w >> 8) & 15;
            const al = L[d] as number;
            const ah = H[d] as number;
            const sr = (w >> 12) & 15;
            const bl = L[sr] as number;
            const bh = H[sr] as number;
            if (ah !== bh ? ah < bh : al >>> 0 <= bl >>> 0) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 132: { // jsle32Reg
            const a = L[(w >> 8) & 15] as number;
            const b = L[(w >> 12) & 15] as number;
            if (a <= b) {
              pc = pc + 1 + (w >> 16);
              if (n > budget) {
                status = RunStatus.budgetExhausted;
                break exec;
              }
            } else pc++;
            continue;
          }
          case 34: { // add32Imm
            const d = (w >> 8) & 15;
            const b = IMM[pc] as number;
            L[d] = ((L[d] as number) + b) | 0;
            H[d] = 0;
            pc++;
            continue;
          }
          case 35: { // add32Reg
            const d = (w >> 8) & 15;
            const b = L[(w >> 12) & 15] as number;
            L[d] = ((L[d] as number) + b) | 0;
            H[d] = 0;
            pc++;
            continue;
          }
          case 36: { // sub32Imm
            const d = (w >> 8) & 15;
            const b = IMM[pc] as number;
            L[d] = ((L[d] as number) - b) | 0;
            H[d] = 0;
            pc++;
            continue;
          }
          case 37: { // sub32Reg
            const d = (w >> 8) & 15;
            const b = L[(w >> 12) & 15] as number;
            L[d] = ((L[d] as number) - b) | 0;
            H[d] = 0;
            pc++;
            continue;
          }
          case 38: { // mul32Imm
            const d = (w >> 8) & 15;
            const b = IMM[pc] as number;
            L[d] = Math.imul(L[d] as number, b);
            H[d] = 0;
            pc++;
            continue;
          }
          case 39: { // mul32Reg
            const d = (w >> 8) & 15;
            const b = L[(w >> 12) & 15] as number;
            L[d] = Math.imul(L[d] as number, b);
            H[d] = 0;
            pc++;
            continue;
          }
          case 40: { // div32Imm
            const d = (w >> 8) & 15;
            const b = IMM[pc] as number;
            L[d] = b === 0 ? 0 : Math.floor(((L[d] as number) >>> 0) / (b >>> 0)) | 0;
            H[d] = 0;
            pc++;
            continue;
          }
          case 41: { // div32Reg
            const d = (w >> 8) & 15;
            const b = L[(w >> 12) & 15] as number;
            L[d] = b === 0 ? 0 : Math.floor(((L[d] as number) >>> 0) / (b >>> 0)) | 0;
            H[d] = 0;
            pc++;
            continue;
          }
          case 44: { // or32Imm
            const d = (w >> 8) & 15;
            const b = IMM[pc] as number;
            L[d] = (L[d] as number) | b;
            H[d] = 0;
            pc++;
            continue;
          }
          case 45: { // or32Reg
            const d = (w >> 8) & 15;
            const b = L[(w >> 12) & 15] as number;
            L[d] = (L[d] as number) | b;
            H[d] = 0;
            pc++;
            continue;
          }
          case 46: { // and32Imm
            const d = (w >> 8) & 15;
            const b = IMM[pc] as number;
            L[d] = (L[d] as number) & b;
            H[d] = 0;
            pc++;
            continue;
          }
          case 47: { // and32Reg
            const d = (w >> 8) & 15;
            const b = L[(w >> 12) & 15] as number;
            L[d] = (L[d] as number) & b;
            H[d] = 0;
            pc++;
            continue;
          }
          case 48: { // lsh32Imm
            const d = (w >> 8) & 15;
            const b = IMM[pc] as number;
            L[d] = (L[d] as number) << (b & 31);
            H[d] = 0;
            pc++;
            continue;
          }
          case 49: { // lsh32Reg
            const d = (w >> 8) & 15;
            const b = L[(w >> 12) & 15] as number;
            L[d] = (L[d] as number) << (b & 31);
            H[d] = 0;
            pc++;
            continue;
          }
          case 50: { // rsh32Imm
            const d = (w >> 8) & 15;
            const b = IMM[pc] as number;
            L[d] = (L[d] as number) >>> (b & 31);
            H[d] = 0;
            pc++;
            continue;
          }
          case 51: { // rsh32Reg
            const d = (w >> 8) & 15;
            const b = L[(w >> 12) & 15] as number;
            L[d] = (L[d] as number) >>> (b & 31);
            H[d] = 0;
            pc++;
            continue;
          }
          case 53: { // xor32Imm
            const d = (w >> 8) & 15;
            const b = IMM[pc] as number;
            L[d] = (L[d] as number) ^ b;
            H[d] = 0;
            pc++;
            continue;
          }
          case 54: { // xor32Reg
            const d = (w >> 8) & 15;
            const b = L[(w >> 12) & 15] as number;
            L[d] = (L[d] as number) ^ b;
            H[d] = 0;
            pc++;
            continue;
          }
          case 57: { // arsh32Imm
            const d = (w >> 8) & 15;
            const b = IMM[pc] as number;
            L[d] = (L[d] as number) >> (b & 31);
            H[d] = 0;
            pc++;
            continue;
          }
          case 58: { // arsh32Reg
            const d = (w >> 8) & 15;
            const b = L[(w >> 12) & 15] as number;
            L[d] = (L[d] as number) >> (b & 31);
            H[d] = 0;
            pc++;
            continue;
          }
          case 59: { // sdiv32Imm
            const d = (w >> 8) & 15;
            const b = IMM[pc] as number;
            L[d] = b === 0 ? 0 : ((L[d] as number) / b) | 0;
            H[d] = 0;
            pc++;
            continue;
          }
          case 60: { // sdiv32Reg
            const d = (w >> 8) & 15;
            const b = L[(w >> 12) & 15] as number;
            L[d] = b === 0 ? 0 : ((L[d] as number) / b) | 0;
            H[d] = 0;
            pc++;
            continue;
          }
          case 42: { // mod32Imm
            const d = (w >> 8) & 15;
            const b = IMM[pc] as number;
            if (b !== 0) L[d] = ((L[d] as number) >>> 0) % (b >>> 0) | 0;
            H[d] = 0;
            pc++;
            continue;
          }
          case 43: { // mod32Reg
            const d = (w >> 8) & 15;
            const b = L[(w >> 12) & 15] as number;
            if (b !== 0) L[d] = ((L[d] as number) >>> 0) % (b >>> 0) | 0;
            H[d] = 0;
            pc++;
            continue;
          }
          case 61: { // smod32Imm
            const d = (w >> 8) & 15;
            const b = IMM[pc] as number;
            if (b !== 0) L[d] = (L[d] as number) % b | 0;
            H[d] = 0;
            pc++;
            continue;
          }
          case 62: { // smod32Reg
            const d = (w >> 8) & 15;
            const b = L[(w >> 12) & 15] as number;
            if (b !== 0) L[d] = (L[d] as number) % b | 0;
            H[d] = 0;
            pc++;
            continue;
          }
          case 52: { // neg32
            const d = (w >> 8) & 15;
            L[d] = -(L[d] as number) | 0;
            H[d] = 0;
            pc++;
            continue;
          }
          case 55: { // mov32Imm
            const d = (w >> 8) & 15;
            L[d] = IMM[pc] as number;
            H[d] = 0;
            pc++;
            continue;
          }
          case 56: { // mov32Reg
            const d = (w >> 8) & 15;
            L[d] = L[(w >> 12) & 15] as number;
            H[d] = 0;
            pc++;
            continue;
          }
          case 63: { // movsx8To32
            const d = (w >> 8) & 15;
            L[d] = ((L[(w >> 12) & 15] as number) << 24) >> 24;
            H[d] = 0;
            pc++;
            continue;
          }
          case 64: { // movsx16To32
            const d = (w >> 8) & 15;
            L[d] = ((L[(w >> 12) & 15] as number) << 16) >> 16;
            H[d] = 0;
            pc++;
            continue;
          }
          case 65: { // le16
            const d = (w >> 8) & 15;
            L[d] = (L[d] as number) & 0xffff;
            H[d] = 0;
            pc++;
            continue;
          }
          case 66: { // le32
            H[(w >> 8) & 15] = 0;
            pc++;
            continue;
          }
          case 67: { // le64
            pc++;
            continue;
          }
          case 68: { // swap16 (be16, bswap16)
            const d = (w >> 8) & 15;
            const x = L[d] as number;
            L[d] = ((x & 0xff) << 8) | ((x >>> 8) & 0xff);
            H[d] = 0;
            pc++;
            continue;
          }
          case 69: { // swap32 (be32, bswap32)
            const d = (w >> 8) & 15;
            L[d] = bswap32(L[d] as number);
            H[d] = 0;
            pc++;
            continue;
          }
          case 70: { // swap64 (be64, bswap64)
            const d = (w >> 8) & 15;
            const lo = L[d] as number;
            L[d] = bswap32(H[d] as number);
            H[d] = bswap32(lo);
            pc++;
            continue;
          }
          case 86: { // atomic32
            const b = (w >> 8) & 15;
            const id = H[b] as number;
            const a = ((L[b] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 4 > (LEN[id] as number)) {
              this.faultBase = b;
              this.faultSize = 4;
              break exec;
            }
            const view = VIEWS[id] as DataView;
            const sr = (w >> 12) & 15;
            const k = IMM[pc] as number;
            const old = view.getInt32(a, true);
            const v = L[sr] as number;
            switch (k & 0xf0) {
              case 0x00:
                view.setInt32(a, (old + v) | 0, true);
                break;
              case 0x40:
                view.setInt32(a, old | v, true);
                break;
              case 0x50:
                view.setInt32(a, old & v, true);
                break;
              case 0xa0:
                view.setInt32(a, old ^ v, true);
                break;
              case 0xe0:
                view.setInt32(a, v, true);
                break;
              default: // 0xf0 cmpxchg: compare with w0, r0 = old
                if (old === L[0]) view.setInt32(a, v, true);
                L[0] = old;
                H[0] = 0;
                pc++;
                continue;
            }
            if ((k & 1) !== 0) {
              L[sr] = old;
              H[sr] = 0;
            }
            pc++;
            continue;
          }
          case 87: { // atomic64
            const b = (w >> 8) & 15;
            const id = H[b] as number;
            const a = ((L[b] as number) >>> 0) + (w >> 16);
            if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 8 > (LEN[id] as number)) {
              this.faultBase = b;
              this.faultSize = 8;
              break exec;
            }
            const view = VIEWS[id] as DataView;
            const sr = (w >> 12) & 15;
            const k = IMM[pc] as number;
            const oldLo = view.getInt32(a, true);
            const oldHi = view.getInt32(a + 4, true);
            const vl = L[sr] as number;
            const vh = H[sr] as number;
            let nl = vl;
            let nh = vh;
            switch (k & 0xf0) {
              case 0x00: {
                const s = (oldLo >>> 0) + (vl >>> 0);
                nl = s | 0;
                nh = (oldHi + vh + (s > 0xffffffff ? 1 : 0)) | 0;
                break;
              }
              case 0x40:
                nl = oldLo | vl;
                nh = oldHi | vh;
                break;
              case 0x50:
                nl = oldLo & vl;
                nh = oldHi & vh;
                break;
              case 0xa0:
                nl = oldLo ^ vl;
                nh = oldHi ^ vh;
                break;
              case 0xe0:
                break;
              default: // cmpxchg
                if (oldLo === L[0] && oldHi === H[0]) {
                  view.setInt32(a, vl, true);
                  view.setInt32(a + 4, vh, true);
                }
                L[0] = oldLo;
                H[0] = oldHi;
                pc++;
                continue;
            }
            view.setInt32(a, nl, true);
            view.setInt32(a + 4, nh, true);
            if ((k & 1) !== 0) {
              L[sr] = oldLo;
              H[sr] = oldHi;
            }
            pc++;
            continue;
          }

          case 136: { // exit
            if (frame === 0) break exec;
            frame--;
            const saved = this.frameSaved;
            const base = frame * 9;
            L[6] = saved[base] as number;
            H[6] = saved[base + 1] as number;
            L[7] = saved[base + 2] as number;
            H[7] = saved[base + 3] as number;
            L[8] = saved[base + 4] as number;
            H[8] = saved[base + 5] as number;
            L[9] = saved[base + 6] as number;
            H[9] = saved[base + 7] as number;
            L[10] = saved[base + 8] as number;
            H[10] = STACK_REGION;
            LOW[STACK_REGION] = (L[10] as number) - STACK_FRAME_SIZE;
            pc = this.frameReturn[frame] as number;
            if (pc < 0) {
              // a bpf_loop callback returned: the loop's next step, out of the hot loop
              w = 146;
              slow = true;
              break exec;
            }
            continue;
          }
          case 7:
          case 8:
          case 9:
          case 10:
          case 26:
          case 27:
          case 28:
          case 29:
          case 133:
          case 134:
          case 135:
            // calls (helpers kill what V8 knows of the arrays) and 64-bit division: out of the hot loop
            slow = true;
            break exec;
          default:
            this.faultMsg = `invalid opcode 0x${(prog.op[pc] as number).toString(16)}`;
            break exec;
        }
      }
      if (!slow) break;
      slow = false;
      switch (w & 0xff) {
        case 7: { // div64Imm
          const d = (w >> 8) & 15;
          const vl = IMM[pc] as number;
          const vh = (IMM[pc] as number) >> 31;
          if (vl === 0 && vh === 0) {
            L[d] = 0;
            H[d] = 0;
          } else {
            L[d] = udivmod64(L[d] as number, H[d] as number, vl, vh);
            H[d] = wide[0] as number;
          }
          pc++;
          continue run;
        }
        case 8: { // div64Reg
          const d = (w >> 8) & 15;
          const vl = L[(w >> 12) & 15] as number;
          const vh = H[(w >> 12) & 15] as number;
          if (vl === 0 && vh === 0) {
            L[d] = 0;
            H[d] = 0;
          } else {
            L[d] = udivmod64(L[d] as number, H[d] as number, vl, vh);
            H[d] = wide[0] as number;
          }
          pc++;
          continue run;
        }
        case 9: { // mod64Imm
          const d = (w >> 8) & 15;
          const vl = IMM[pc] as number;
          const vh = (IMM[pc] as number) >> 31;
          if (vl !== 0 || vh !== 0) {
            udivmod64(L[d] as number, H[d] as number, vl, vh);
            L[d] = wide[1] as number;
            H[d] = wide[2] as number;
          }
          pc++;
          continue run;
        }
        case 10: { // mod64Reg
          const d = (w >> 8) & 15;
          const vl = L[(w >> 12) & 15] as number;
          const vh = H[(w >> 12) & 15] as number;
          if (vl !== 0 || vh !== 0) {
            udivmod64(L[d] as number, H[d] as number, vl, vh);
            L[d] = wide[1] as number;
            H[d] = wide[2] as number;
          }
          pc++;
          continue run;
        }
        case 26: { // sdiv64Imm
          const d = (w >> 8) & 15;
          const vl = IMM[pc] as number;
          const vh = (IMM[pc] as number) >> 31;
          if (vl === 0 && vh === 0) {
            L[d] = 0;
            H[d] = 0;
          } else {
            L[d] = sdivmod64(L[d] as number, H[d] as number, vl, vh);
            H[d] = wide[0] as number;
          }
          pc++;
          continue run;
        }
        case 27: { // sdiv64Reg
          const d = (w >> 8) & 15;
          const vl = L[(w >> 12) & 15] as number;
          const vh = H[(w >> 12) & 15] as number;
          if (vl === 0 && vh === 0) {
            L[d] = 0;
            H[d] = 0;
          } else {
            L[d] = sdivmod64(L[d] as number, H[d] as number, vl, vh);
            H[d] = wide[0] as number;
          }
          pc++;
          continue run;
        }
        case 28: { // smod64Imm
          const d = (w >> 8) & 15;
          const vl = IMM[pc] as number;
          const vh = (IMM[pc] as number) >> 31;
          if (vl !== 0 || vh !== 0) {
            sdivmod64(L[d] as number, H[d] as number, vl, vh);
            L[d] = wide[1] as number;
            H[d] = wide[2] as number;
          }
          pc++;
          continue run;
        }
        case 29: { // smod64Reg
          const d = (w >> 8) & 15;
          const vl = L[(w >> 12) & 15] as number;
          const vh = H[(w >> 12) & 15] as number;
          if (vl !== 0 || vh !== 0) {
            sdivmod64(L[d] as number, H[d] as number, vl, vh);
            L[d] = wide[1] as number;
            H[d] = wide[2] as number;
          }
          pc++;
          continue run;
        }
        case 133: // callHelper
        case 134: { // callReg
          const id = ((w & 0xff) === 133 ? IMM[pc] : L[(w >> 12) & 15]) as number;
          if (id === HelperId.loop && HELPERS[id] !== undefined) {
            // bpf_loop(nr_loops (u32), callback, callback_ctx, flags): as the kernel, -EINVAL for
            // flags, -E2BIG above 8M iterations; else the callback runs as a BPF-to-BPF call per
            // iteration (r1 = index, r2 = callback_ctx) until it returns non-zero
            const nr = (L[1] as number) >>> 0;
            if (H[2] !== FUNC_REGION || !isCallbackEntry(prog, L[2] as number)) {
              this.faultMsg = 'bpf_loop: r2 is not a callback address';
              break run;
            }
            if (L[4] !== 0 || H[4] !== 0 || nr === 0 || nr > 8 * 1024 * 1024) {
              L[0] = L[4] !== 0 || H[4] !== 0 ? -Errno.EINVAL : nr === 0 ? 0 : -Errno.E2BIG;
              H[0] = L[0] === 0 ? 0 : -1;
              pc++;
              continue run;
            }
            if (frame + 1 >= MAX_FRAMES) {
              this.faultMsg = `call stack deeper than ${MAX_FRAMES} frames`;
              break run;
            }
            const loop = this.frameLoop;
            const at = frame * 6;
            loop[at] = nr;
            loop[at + 2] = L[2] as number;
            loop[at + 3] = L[3] as number;
            loop[at + 4] = H[3] as number;
            loop[at + 5] = pc;
            pc = this.enterLoopCallback(frame, 0);
            frame++;
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break run;
            }
            continue run;
          }
          const fn = id >= 0 ? HELPERS[id] : undefined;
          if (fn === undefined) {
            this.faultMsg = `call to unknown helper ${id}`;
            break run;
          }
          this.lastPc = pc;
          this.lastProgram = prog;
          this.frame = frame;
          const action = fn(this);
          if (action !== HelperAction.next) {
            if (action === HelperAction.exit) break run;
            if (action === HelperAction.fault) {
              this.faultMsg = 'helper';
              break run;
            }
            // tail call: continue in the target program (frame 0, r1 = ctx, same stack)
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break run;
            }
            status = TAIL_CALL;
            break run;
          }
          pc++;
          if (n > budget) {
              status = RunStatus.budgetExhausted;
              break run;
            }
          continue run;
        }
        case 135: { // callLocal
          if (frame + 1 >= MAX_FRAMES) {
            this.faultMsg = `call stack deeper than ${MAX_FRAMES} frames`;
            break run;
          }
          this.pushFrame(frame, pc + 1);
          frame++;
          pc = pc + 1 + (IMM[pc] as number);
          if (n > budget) {
              status = RunStatus.budgetExhausted;
              break run;
            }
          continue run;
        }
        case 146: { // loopNext: a bpf_loop callback of this frame returned (r0: 0 = go on)
          const loop = this.frameLoop;
          const at = frame * 6;
          const i = (loop[at + 1] as number) + 1;
          const nr = loop[at] as number;
          if (L[0] !== 0 || H[0] !== 0 || i >>> 0 >= nr >>> 0) {
            // the number of iterations made: i + 1 after a stop (i counts the finished one)
            L[0] = i;
            H[0] = 0;
            pc = (loop[at + 5] as number) + 1;
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break run;
            }
            continue run;
          }
          pc = this.enterLoopCallback(frame, i);
          frame++;
          if (n > budget) {
            status = RunStatus.budgetExhausted;
            break run;
          }
          continue run;
        }
        default:
          break run;
      }
    }

    return this.conclude(prog, pc, n, frame, status);
  }

  /**
   * Enters iteration `index` of the bpf_loop that `frame` runs: its callback in the next frame
   * (returning into the loop), r1 = the index, r2 = the loop's context, r3-r5 = 0. Returns the
   * callback's pc.
   */
  private enterLoopCallback(frame: number, index: number): number {
    const loop = this.frameLoop;
    const at = frame * 6;
    const L = this.regLo;
    const H = this.regHi;
    loop[at + 1] = index;
    this.pushFrame(frame, -1);
    L[1] = index;
    H[1] = 0;
    L[2] = loop[at + 3] as number;
    H[2] = loop[at + 4] as number;
    L[3] = L[4] = L[5] = 0;
    H[3] = H[4] = H[5] = 0;
    return loop[at + 2] as number;
  }

  /**
   * Saves the callee-saved registers (r6-r9) and r10 of `frame`, records where the frame returns
   * to (-1: into the bpf_loop it runs), and gives the next frame its zeroed 512 bytes and r10.
   */
  private pushFrame(frame: number, returnPc: number): void {
    const L = this.regLo;
    const H = this.regHi;
    const saved = this.frameSaved;
    const base = frame * 9;
    saved[base] = L[6] as number;
    saved[base + 1] = H[6] as number;
    saved[base + 2] = L[7] as number;
    saved[base + 3] = H[7] as number;
    saved[base + 4] = L[8] as number;
    saved[base + 5] = H[8] as number;
    saved[base + 6] = L[9] as number;
    saved[base + 7] = H[9] as number;
    saved[base + 8] = L[10] as number;
    this.frameReturn[frame] = returnPc;
    const top = STACK_TOP - (frame + 1) * STACK_FRAME_SIZE;
    (this.regionBytes[STACK_REGION] as Uint8Array).fill(0, top - STACK_FRAME_SIZE, top);
    this.regionLow[STACK_REGION] = top - STACK_FRAME_SIZE;
    L[10] = top;
    H[10] = STACK_REGION;
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

function bswap32(x: number): number {
  return ((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | ((x >>> 24) & 0xff);
}
