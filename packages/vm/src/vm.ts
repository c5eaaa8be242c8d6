import {
  addressToBigInt,
  CONTEXT_REGION,
  MAP_HANDLE_REGION,
  MAX_FRAMES,
  STACK_FRAME_SIZE,
  STACK_REGION,
  STACK_TOP,
} from './address.js';
import { VmError } from './errors.js';
import type { HelperEnvironment, VmOutput } from './helpers/helper-env.js';
import { HelperAction, type HelperFn, standardHelpers } from './helpers/helpers.js';
import { type InterpreterHost, interpreterMethods } from './interpreter/interpret.js';
import type { BpfMap } from './maps/map.js';
import { RingBuffer } from './maps/ring-buffer.js';
import { StartFlags, State } from './memory/layout.js';
import type { LoadedProgram, LoadOptions, MapRef } from './program.js';
import { RunStatus, TAIL_CALL } from './run-status.js';
import { CompiledTier } from './wasm/compiled-tier.js';
import type { PageStage } from './wasm/page-stage.js';
import type { CompiledEntry } from './wasm/wasm-tier.js';

const EMPTY = new Uint8Array(0);

export type { HelperEnvironment, VmOutput } from './helpers/helper-env.js';

export { RunStatus } from './run-status.js';
export type { TierCounters } from './wasm/compiled-tier.js';

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

/** The interpreter's methods (interpreter/interpret.ts), installed on the prototype after the class. */
type InterpreterMethods = typeof interpreterMethods;
export interface Vm extends InterpreterMethods {}

/**
 * An eBPF virtual machine: the memory model (memory/vm-memory.ts: registers, the region table
 * and address resolution, the linear memory, faults) with the compiled tier's glue over it
 * (wasm/compiled-tier.ts: entries, the tier choice and its counters, staged pages), and here
 * what composes them: the options, the helper table and the event the helpers see, the frames of
 * BPF-to-BPF calls and tail calls, and {@link run}. The interpreter's functions
 * (interpreter/interpret.ts) are installed on the prototype. Programs loaded with
 * {@link Vm.loadOptions} run on it with {@link Vm.run}; per-event state (CPU, timestamp, pid)
 * is set before each run.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface above declares the interpreter's methods, installed on the prototype after the class
export class Vm extends CompiledTier implements InterpreterHost {
  readonly environment: HelperEnvironment;
  readonly output: (output: VmOutput) => void;
  /** The tier asked for (a program may still fall back to the interpreter: {@link tierOf}). */
  readonly tier: VmTier;
  /** The program being run. */
  currentProgram: LoadedProgram | undefined;
  private readonly ringBuffers: RingBuffer[];
  /**
   * Whether each program run here can see the stack (see {@link seesStack}); the last one apart
   * (`zeroProgram`, `zeroSees`: in compiled-tier.ts, whose `runOne` fills the fast slots from them).
   */
  private readonly stackUsers = new WeakMap<LoadedProgram, boolean>();
  /** Whether frame 0 may hold bytes a run wrote (a fresh stack is zero). */
  private stackDirty = false;

  readonly helperTable: (HelperFn | undefined)[] = [];
  readonly frameReturn = new Int32Array(MAX_FRAMES);
  readonly frameSaved = new Int32Array(MAX_FRAMES * 9);
  /**
   * Per frame, the `bpf_loop` it is running (its callback runs in the next frame, whose return
   * is marked -1): iterations asked, the current index, the callback's pc, the context (lo, hi),
   * the pc of the `call`.
   */
  readonly frameLoop = new Int32Array(MAX_FRAMES * 6);

  // `cpu`, the current event's CPU, is an accessor of the memory model (memory/vm-memory.ts)
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

  /** Tail calls made by the current run. */
  tailCalls = 0;
  /** Set by the tail-call helper: the program to continue with. */
  tailTarget: LoadedProgram | undefined;

  constructor(options: VmOptions = {}) {
    super(options.maps ?? [], options.budget ?? 1_000_000);
    this.ringBuffers = this.maps.filter((m): m is RingBuffer => m instanceof RingBuffer);
    this.environment = options.environment ?? {};
    this.output = options.output ?? (() => {});
    this.tier = options.tier ?? 'compiled';
    this.randomState = (options.randomSeed ?? 0x2545f491) | 0 || 1;
    if (options.standardHelpers !== false) {
      for (const [id, fn] of standardHelpers) this.helperTable[id] = fn;
    }
    if (options.helpers) for (const [id, fn] of options.helpers) this.helperTable[id] = fn;
    for (const rb of this.ringBuffers) {
      rb.emit = (map, data) =>
        this.output({ kind: 'ringbuf', map: map.name, cpu: this.cpu, timestamp: this.timestamp, data });
    }
    if (this.tier === 'compiled') this.startCompiledTier();
  }

  /**
   * The tier `program` runs on in this VM: compiles it on first use (or takes the cached module
   * of the same bytes), and counts the choice in {@link tierCounters}.
   */
  tierOf(program: LoadedProgram): VmTier {
    return this.entryOf(program) ? 'compiled' : 'interpreter';
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

  /** Sets r0 from a small signed integer (helper return values, errnos). */
  setReturn(value: number): void {
    this.regLo[0] = value | 0;
    this.regHi[0] = value < 0 ? -1 : Math.floor(value / 0x100000000) | 0;
  }

  setReturn64(lo: number, hi: number): void {
    this.regLo[0] = lo | 0;
    this.regHi[0] = hi | 0;
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
