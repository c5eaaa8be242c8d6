// The abstract interpreter (`do_check`): explores every path of the program over register and
// stack states, storing states at prune points to cut paths an explored state already covers and
// to detect loops that make no progress.

import { type Cfg, buildCfg } from './cfg.js';
import { VerifierError } from './errors.js';
import { Arg, type HelperProto, Ret, helperName, helperProto, mapTypeAllowsHelper } from './helper-protos.js';
import { ALU_TEXT, formatInsn, insnTextOf } from './insn-text.js';
import { type Precision, computePrecision } from './precision.js';
import { Alu, Atomic, CallKind, Cls, Jmp, Mode, Pseudo, aluOp, cls, isSrcReg, mode, sizeBytes } from './opcodes.js';
import { type Program, decodeProgram } from './program.js';
import {
  SCALAR_UNKNOWN,
  type Scalar,
  aluView,
  constValue,
  fromView,
  isConst,
  normalize,
  refineCompare,
  scalarEquals,
  scalarConst,
  scalarRange,
  signExtend,
  toSigned,
  truncate,
  viewOf,
  withView,
} from './scalar.js';
import {
  Byte,
  EMPTY_SLOT,
  type Frame,
  type LiveRegs,
  NOT_INIT,
  type PreciseSet,
  type Reg,
  RegType,
  type Slot,
  type State,
  UNKNOWN_SCALAR,
  ZERO_OFFSET,
  cloneState,
  constReg,
  curFrame,
  formatState,
  isPacketPointer,
  isPointer,
  mapAllRegs,
  pointerReg,
  regTypeName,
  scalarReg,
  snapshotState,
  stateCovers,
} from './state.js';
import { formatTnum, U32, U64 } from './tnum.js';
import { MapType } from './types.js';
import type {
  ContextSpec,
  Diagnostic,
  FieldAccess,
  InitialReg,
  MapDef,
  VerifyOptions,
  VerifyResult,
} from './types.js';

/** `MAX_BPF_STACK` */
export const MAX_STACK_BYTES = 512;
/** `MAX_CALL_FRAMES` */
export const MAX_CALL_FRAMES = 8;
/** `PERF_MAX_TRACE_SIZE`: the kernel's bound on tracepoint context reads. */
export const PERF_MAX_TRACE_SIZE = 8192;
/** `BPF_COMPLEXITY_LIMIT_INSNS` */
export const DEFAULT_INSN_LIMIT = 1_000_000;
/** `BPF_MAX_VAR_OFF` */
const MAX_VAR_OFF = 1n << 29n;
/** `BPF_MAX_VAR_SIZ` */
const MAX_VAR_SIZE = 1n << 29n;
/** `MAX_PACKET_OFF`: packet ranges are proven only for offsets up to this. */
const MAX_PACKET_OFF = 0xffff;
/** `struct xdp_md`: data, data_end, data_meta, ingress_ifindex, rx_queue_index, egress_ifindex. */
const XDP_MD_SIZE = 24;
/** Explored states kept per instruction for pruning (older ones are dropped; pruning only gets rarer). */
const MAX_STATES_PER_INSN = 64;

/** A rejection raised deep in the interpreter; becomes the one diagnostic of the result. */
class Reject {
  constructor(
    readonly insnIndex: number,
    readonly message: string,
  ) {}
}

interface Checkpoint {
  state: State;
  insnIndex: number;
  /** Paths still being explored below this state (0 = fully explored). */
  branches: number;
  parent: Checkpoint | null;
  /** Hash for exact comparison (infinite-loop detection). */
  key: number | null;
  /** The next in-progress state at this instruction with the same key (`byKey`'s chains). */
  nextSame: Checkpoint | null;
}

interface Path {
  state: State;
  insnIndex: number;
  checkpoint: Checkpoint | null;
}

const NO_CHECKPOINTS: readonly never[] = [];
/** `keyFilter`: 2^17 bits (16 KiB), made for an instruction once 64 different keys are stored there. */
const KEY_FILTER_BITS = 17;
const KEY_FILTER_WORD_MASK = (1 << (KEY_FILTER_BITS - 5)) - 1;
const KEY_FILTER_FROM = 64;
/** Placeholders until run() sizes the per-instruction tables (no typed array per Verifier). */
const NO_INT32 = new Int32Array(0);
const NO_UINT8 = new Uint8Array(0);
const BRANCH_FALL = 2;
const BRANCH_JUMP = 4;

/**
 * Verifies a program as the kernel would load it (`BPF_PROG_TYPE_TRACEPOINT` by default; see
 * `VerifyOptions.context` for XDP and raw contexts). Never throws for
 * a rejected program (that is `ok: false` with a diagnostic); throws {@link VerifierError} only
 * for input that is not a program at all (truncated bytes, no instructions, over 1M instructions).
 */
export function verify(program: Uint8Array | Program, options: VerifyOptions = {}): VerifyResult {
  const p = program instanceof Uint8Array ? decodeProgram(program) : program;
  const started = Date.now();
  const usePrecision = options.precision ?? true;
  // the conditional jumps found decided so far (see `Verifier.decide`): shared by the runs
  const decided = new Uint8Array(p.length);
  let first: Verifier;
  let result: VerifyResult;
  for (let restarts = 0; ; restarts++) {
    // a program that keeps finding new decided branches after pruning on precision: every
    // conditional jump a decision (the static analysis alone, always sound)
    if (restarts === MAX_PRECISION_RESTARTS) decided.fill(1);
    first = new Verifier(p, options, usePrecision, decided, started);
    try {
      result = first.run();
      break;
    } catch (e) {
      if (!(e instanceof Restart)) throw e;
    }
  }
  if (result.ok || first.widenings === 0) return result;
  // widening lost a value the program needs exactly: the exact exploration decides
  const exact = new Verifier(p, options, false, decided, started).run();
  return exact.ok ? exact : result;
}

/** Runs started again because a prune relied on a value a branch found later turned out to decide. */
const MAX_PRECISION_RESTARTS = 32;

/**
 * Thrown out of a run when a conditional jump is found decided (one way only) for the first
 * time after a prune relied on precision: that prune may have merged states the new decision
 * tells apart, so the run starts again with the branch's operands precise.
 */
class Restart {}

class Verifier implements LiveRegs {
  private readonly privileged: boolean;
  readonly allowUninitStack: boolean;
  private readonly context: ContextSpec;
  private readonly insnLimit: number;
  private readonly deadline: number;
  private readonly logLevel: number;
  private readonly logLimit: number;
  private readonly log: string[] = [];
  private readonly coverage: Uint8Array;
  /** Fully explored states per instruction (pruning). */
  private complete: (Checkpoint[] | undefined)[] = [];
  /** Stored states by exact key, per instruction (infinite-loop detection). */
  private byKey: (Map<number, Checkpoint> | undefined)[] = [];
  /**
   * Per instruction with many stored states (a long loop): a bit per key value (its low
   * `KEY_FILTER_BITS` bits) set for every key stored there. A clear bit means no state with that
   * key, which saves looking the key up in a large Map (cache misses on every loop iteration);
   * bits are never cleared, so a set bit only means "look".
   */
  private keyFilter: (Uint32Array | undefined)[] = [];
  /** Stored states still being explored, per instruction. */
  private inProgress = NO_INT32;
  /** 1 at the first instruction of a callback (`cfg.callbackEntries`). */
  private callbackEntry = NO_UINT8;
  private readonly accesses = new Map<string, FieldAccess>();
  /** probe_read* calls with a scalar source address: insn → helper id. */
  private readonly outsideReads = new Map<number, number>();
  private cfg!: Cfg;
  /** Scalars that can still decide something, per instruction (null: all of them). */
  private precision: Precision | null | undefined = undefined;
  private stackDepth: number[] = [];
  private nextId = 0;
  private processed = 0;
  private jumps = 0;
  private lastAddProcessed = 0;
  private lastAddJumps = 0;
  private states = 0;
  private liveStates = 0;
  private peakStates = 0;
  private pruned = 0;
  /** Scalars widened at callback-loop entries (see `widenLoopScalars`). */
  widenings = 0;
  private readonly warnings: Diagnostic[] = [];
  private readonly warnedAt = new Set<number>();
  /** A prune succeeded only because some scalar was compared as imprecise. */
  private reliedOnPrecision = false;

  constructor(
    private readonly p: Program,
    private readonly options: VerifyOptions,
    /** Precision and callback-loop widening (`VerifyOptions.precision`). */
    private readonly usePrecision: boolean,
    /** Conditional jumps known to be decided by a value (1), shared with later runs. */
    private readonly decided: Uint8Array,
    private readonly started: number,
  ) {
    this.privileged = options.privileged ?? true;
    this.allowUninitStack = options.allowUninitStack ?? this.privileged;
    this.context = options.context ?? { kind: 'tracepoint' };
    this.insnLimit = options.insnLimit ?? DEFAULT_INSN_LIMIT;
    this.deadline = this.started + (options.timeLimitMs ?? 60_000);
    this.logLevel = options.logLevel ?? 0;
    this.logLimit = options.logLimit ?? 100_000;
    this.coverage = new Uint8Array(p.length);
  }

  run(): VerifyResult {
    let diagnostic: Diagnostic | null = null;
    const legacy = this.context.kind === 'raw' && this.context.legacyPacketLoads === true;
    const { cfg, problem } = buildCfg(this.p, this.privileged, legacy);
    if (problem) {
      diagnostic = this.diagnostic(problem.insnIndex, problem.message);
    } else {
      this.cfg = cfg!;
      this.inProgress = new Int32Array(this.p.length);
      this.callbackEntry = new Uint8Array(this.p.length);
      for (const k of cfg!.callbackEntries) this.callbackEntry[k] = 1;
      this.complete = new Array(this.p.length);
      this.byKey = new Array(this.p.length);
      this.keyFilter = new Array(this.p.length);
      this.imm64 = new Array(this.p.length);
      this.imm32 = new Array(this.p.length);
      this.stackDepth = cfg!.subprogStarts.map(() => 0);
      try {
        this.explore();
        this.checkStackDepth();
      } catch (e) {
        if (!(e instanceof Reject)) throw e;
        diagnostic = this.diagnostic(e.insnIndex, e.message);
      }
    }
    if (this.logLevel > 0) {
      if (diagnostic) this.emit(`${diagnostic.insnIndex}: ${diagnostic.message}`);
      this.emit(
        `processed ${this.processed} insns (limit ${this.insnLimit}) max_states_per_insn ${MAX_STATES_PER_INSN} total_states ${this.states} peak_states ${this.peakStates}`,
      );
    }
    return {
      ok: diagnostic === null,
      diagnostics: diagnostic ? [diagnostic] : [],
      stats: {
        insnsProcessed: this.processed,
        states: this.states,
        peakStates: this.peakStates,
        prunedStates: this.pruned,
        timeMs: Date.now() - this.started,
      },
      contextAccesses: [...this.accesses.values()].sort(
        (a, b) => a.insnIndex - b.insnIndex || a.offset - b.offset,
      ),
      outsideReads: [...this.outsideReads].sort(([a], [b]) => a - b).map(([insnIndex, helper]) => ({ insnIndex, helper })),
      log: this.log,
      coverage: this.coverage,
      warnings: diagnostic === null ? this.warnings : [],
    };
  }

  private diagnostic(insnIndex: number, message: string): Diagnostic {
    const insnText = insnIndex >= 0 && insnIndex < this.p.length ? insnTextOf(this.p, insnIndex) : '';
    return { insnIndex, insnText, message };
  }

  private emit(line: string): void {
    if (this.logLevel > 0 && this.log.length < this.logLimit) this.log.push(line);
  }

  private reject(insnIndex: number, message: string): never {
    throw new Reject(insnIndex, message);
  }

  // ---------------------------------------------------------------- exploration

  private initialState(): State {
    const regs: Reg[] = notInitRegs();
    regs[1] = pointerReg(RegType.ctx);
    regs[10] = pointerReg(RegType.stack, { frame: 0 });
    const frame: Frame = { regs, stack: [], callsite: -1, subprogStart: 0, callbackCtx: null, loopsLeft: 0n };
    const state: State = { frames: [frame], refs: [] };
    for (const [k, init] of Object.entries(this.options.initialRegs ?? {})) {
      const r = Number(k);
      if (!Number.isInteger(r) || r < 0 || r > 9) {
        throw new VerifierError('malformed', `initial registers: r${k} cannot be set`);
      }
      regs[r] = this.initialReg(init);
    }
    for (const a of this.options.initialStackBytes ?? []) {
      if (!Number.isInteger(a) || a < -MAX_STACK_BYTES || a >= 0) {
        throw new VerifierError('malformed', `initial stack: byte ${a} is outside the stack`);
      }
      const { k, pos } = slotOf(a);
      setByte(frame, k, pos, Byte.misc);
    }
    return state;
  }

  private initialReg(init: InitialReg): Reg {
    switch (init.type) {
      case 'not_init':
        return NOT_INIT;
      case 'scalar': {
        const s = normalize({
          ...SCALAR_UNKNOWN,
          umin: init.umin ?? 0n,
          umax: init.umax ?? U64,
          smin: init.smin ?? SCALAR_UNKNOWN.smin,
          smax: init.smax ?? SCALAR_UNKNOWN.smax,
        });
        if (!s) throw new VerifierError('malformed', 'initial registers: contradictory scalar bounds');
        return scalarReg(s);
      }
      case 'ctx':
        return pointerReg(RegType.ctx, { off: init.offset ?? 0 });
      case 'stack':
        return pointerReg(RegType.stack, { off: init.offset, frame: 0 });
      case 'map_ptr':
        this.mapDef(init.map, -1);
        return pointerReg(RegType.mapPtr, { aux: init.map });
      case 'map_value':
        this.mapDef(init.map, -1);
        return pointerReg(RegType.mapValue, {
          aux: init.map,
          off: init.offset ?? 0,
          maybeNull: init.maybeNull ?? false,
          id: init.maybeNull ? this.newId() : 0,
        });
      case 'packet':
      case 'packet_meta': {
        const variable = init.varMin !== undefined || init.varMax !== undefined;
        const v = variable
          ? normalize({ ...SCALAR_UNKNOWN, smin: init.varMin ?? SCALAR_UNKNOWN.smin, smax: init.varMax ?? SCALAR_UNKNOWN.smax })
          : ZERO_OFFSET;
        if (!v) throw new VerifierError('malformed', 'initial registers: contradictory packet offset bounds');
        return pointerReg(init.type === 'packet' ? RegType.packet : RegType.packetMeta, {
          off: init.offset ?? 0,
          aux: init.range ?? 0,
          v,
          id: variable ? this.newId() : 0,
        });
      }
      case 'packet_end':
        return pointerReg(RegType.packetEnd);
    }
  }

  private mapDef(index: number, insnIndex: number): MapDef {
    const maps = this.options.maps;
    const def = maps === undefined ? undefined : 'get' in maps ? maps.get(index) : maps[index];
    if (!def) this.reject(insnIndex, `fd ${index} is not pointing to valid bpf_map`);
    return def;
  }

  private explore(): void {
    const work: Path[] = [{ state: this.initialState(), insnIndex: 0, checkpoint: null }];
    const p = this.p;
    const stopAt = new Uint8Array(p.length);
    for (const k of this.options.stopAt ?? []) if (k >= 0 && k < p.length) stopAt[k] = 1;
    const lateProblems = this.cfg.lateProblems;
    while (work.length > 0) {
      const path = work.pop()!;
      const state = path.state;
      let i = path.insnIndex;
      let ckpt = path.checkpoint;
      if (this.logLevel > 0) this.emit(`from ${i}: ${formatState(state)}`);
      for (;;) {
        if (++this.processed > this.insnLimit) {
          this.reject(i, `BPF program is too large. Processed ${this.processed} insn`);
        }
        if ((this.processed & 0xfff) === 0 && Date.now() > this.deadline) {
          this.reject(i, `verification time limit of ${this.options.timeLimitMs ?? 60_000} ms exceeded`);
        }
        if (stopAt[i]) {
          this.coverage[i]! |= 1;
          this.endPath(ckpt);
          break;
        }
        if (this.cfg.prunePoint[i]) {
          const next = this.visit(state, i, ckpt);
          if (next === 'pruned') {
            if (this.logLevel > 0) this.emit(`${i}: safe`);
            this.endPath(ckpt);
            break;
          }
          ckpt = next;
        }
        this.coverage[i]! |= 1;
        if (lateProblems.size !== 0) {
          const late = lateProblems.get(i);
          if (late !== undefined) this.reject(i, late);
        }
        const insnLine = this.logLevel > 0 ? `${i}: (${p.opcode[i]!.toString(16).padStart(2, '0')}) ${formatInsn(p, i)}` : '';
        if (this.logLevel === 1) this.emit(insnLine);
        let next: number;
        if (this.logLevel > 1) {
          try {
            next = this.step(state, i, work, ckpt);
          } catch (e) {
            this.emit(insnLine);
            throw e;
          }
        } else {
          // a rejection is thrown once, straight to run(): no handler in between to rethrow it
          next = this.step(state, i, work, ckpt);
        }
        // level 2: the state after each instruction on its line, as the kernel prints it
        if (this.logLevel > 1) this.emit(`${insnLine.padEnd(37)} ; ${formatState(state)}`);
        if (next < 0) {
          this.endPath(ckpt);
          break;
        }
        i = next;
      }
    }
  }

  /** Prune-point bookkeeping (`is_state_visited`). */
  private visit(state: State, i: number, ckpt: Checkpoint | null): Checkpoint | 'pruned' | null {
    // the verifier itself answers which registers are live (`liveRegs`: no closure per prune point)
    this.liveState = state;
    this.liveInsn = i;
    let looping = false;
    let key: number | null = null;
    if (this.callbackEntry[i]) {
      // bpf_loop ends by itself: a callback entry covered by one on this path is a fixpoint
      for (const old of this.byInsn(i)) {
        if (old.branches > 0 && stateCovers(old.state, state, false, this)) {
          this.pruned++;
          return 'pruned';
        }
      }
    } else if (this.inProgress[i]! > 0) {
      // an ancestor of this path is stored here: the same state again means no progress
      looping = true;
      key = stateKey(state);
      const filter = this.keyFilter[i];
      const maybe = filter === undefined || (filter[(key >>> 5) & KEY_FILTER_WORD_MASK]! & (1 << (key & 31))) !== 0;
      for (let old: Checkpoint | null = maybe ? (this.byKey[i]?.get(key) ?? null) : null; old; old = old.nextSame) {
        if (old.branches > 0 && stateCovers(old.state, state, true, this)) {
          this.reject(i, `infinite loop detected at insn ${i}`);
        }
      }
    }
    const done = this.complete[i];
    if (done) {
      // computed when first needed: many programs never compare with a finished state
      if (this.precision === undefined) {
        this.precision = this.usePrecision ? computePrecision(this.p, this.cfg, this.decided) : null;
      }
      const pr = this.precision;
      const precise = pr && this.preciseFrames(pr, state, i);
      for (const old of done) {
        if (stateCovers(old.state, state, false, this, precise)) {
          if (precise && !this.reliedOnPrecision && !stateCovers(old.state, state, false, this)) {
            this.reliedOnPrecision = true;
          }
          this.pruned++;
          return 'pruned';
        }
      }
    }
    if (looping && this.processed - this.lastAddProcessed < 100 && this.jumps - this.lastAddJumps < 20) {
      return ckpt;
    }
    this.lastAddProcessed = this.processed;
    this.lastAddJumps = this.jumps;
    const k = key ?? stateKey(state);
    let keyed = this.byKey[i];
    if (!keyed) {
      keyed = new Map();
      this.byKey[i] = keyed;
    }
    // states with the same key are chained through the checkpoints (no list object per key)
    const c: Checkpoint = { state: snapshotState(state), insnIndex: i, branches: 1, parent: ckpt, key: k, nextSame: keyed.get(k) ?? null };
    keyed.set(k, c);
    let filter = this.keyFilter[i];
    if (filter === undefined && keyed.size >= KEY_FILTER_FROM) {
      filter = new Uint32Array(1 << (KEY_FILTER_BITS - 5));
      for (const old of keyed.keys()) filter[(old >>> 5) & KEY_FILTER_WORD_MASK]! |= 1 << (old & 31);
      this.keyFilter[i] = filter;
    }
    if (filter !== undefined) filter[(k >>> 5) & KEY_FILTER_WORD_MASK]! |= 1 << (k & 31);
    this.inProgress[i]!++;
    this.states++;
    this.liveStates++;
    if (this.liveStates > this.peakStates) this.peakStates = this.liveStates;
    return c;
  }

  /**
   * Precise locations of each frame of `state` at instruction i: the running frame's at i; a
   * calling frame's at its return point (r0-r5 are not readable there) and, while a callee that
   * may read memory through a pointer runs, every slot of it.
   */
  private preciseFrames(pr: Precision, state: State, i: number): PreciseSet[] {
    const frames = state.frames;
    const top = frames.length - 1;
    const out: PreciseSet[] = new Array(frames.length);
    out[top] = { regs: pr.regs[i]!, slotsLo: pr.slotsLo[i]!, slotsHi: pr.slotsHi[i]! };
    for (let f = 0; f < top; f++) {
      const callsite = frames[f + 1]!.callsite;
      const all = pr.touches[this.cfg.subprogOf[frames[f + 1]!.subprogStart]!] === 1;
      out[f] = {
        regs: (pr.regs[callsite + 1]! & ~0x3f) | (1 << 10),
        slotsLo: all ? 0xffffffff : pr.slotsLo[callsite + 1]!,
        slotsHi: all ? 0xffffffff : pr.slotsHi[callsite + 1]!,
      };
    }
    return out;
  }

  private liveState: State | null = null;
  private liveInsn = 0;
  /** Registers that may still be read in frame f of `liveState` at `liveInsn` (`LiveRegs`). */
  liveRegs(f: number): number {
    const live = this.cfg.liveIn;
    const state = this.liveState!;
    if (f === state.frames.length - 1) return live[this.liveInsn]!;
    const callsite = state.frames[f + 1]!.callsite;
    return (live[callsite + 1]! & ~0x3f) | (1 << 10);
  }

  private endPath(ckpt: Checkpoint | null): void {
    let c = ckpt;
    while (c) {
      c.branches--;
      if (c.branches > 0) break;
      this.completed(c);
      c = c.parent;
    }
  }

  /** Paths a helper call forks off (pushed to the work list with the current checkpoint). */
  private readonly pendingPaths: Path[] = [];

  /** Every in-progress state stored at instruction i. */
  private *byInsn(i: number): Iterable<Checkpoint> {
    for (const head of this.byKey[i]?.values() ?? NO_CHECKPOINTS) {
      for (let c: Checkpoint | null = head; c; c = c.nextSame) yield c;
    }
  }

  /** A stored state whose every path has been explored: usable for pruning from now on. */
  private completed(c: Checkpoint): void {
    const i = c.insnIndex;
    this.inProgress[i]!--;
    const keyed = this.byKey[i];
    const head = c.key === null ? undefined : keyed?.get(c.key);
    if (head === c) {
      if (c.nextSame) keyed!.set(c.key!, c.nextSame);
      else keyed!.delete(c.key!);
    } else {
      for (let prev: Checkpoint | null = head ?? null; prev; prev = prev.nextSame) {
        if (prev.nextSame === c) {
          prev.nextSame = c.nextSame;
          break;
        }
      }
    }
    c.nextSame = null;
    let list = this.complete[i];
    if (!list) {
      list = [];
      this.complete[i] = list;
    }
    if (list.length >= MAX_STATES_PER_INSN) {
      list.shift();
      this.liveStates--;
    }
    list.push(c);
  }

  private newId(): number {
    return ++this.nextId;
  }

  // ---------------------------------------------------------------- one instruction

  /** Executes instruction i on `s` in place; returns the next instruction or -1 at the end of a path. */
  private step(s: State, i: number, work: Path[], ckpt: Checkpoint | null): number {
    const p = this.p;
    const op = p.opcode[i]!;
    switch (cls(op)) {
      case Cls.ALU:
      case Cls.ALU64:
        this.alu(s, i);
        return i + 1;
      case Cls.LDX:
        this.load(s, i);
        return i + 1;
      case Cls.ST:
      case Cls.STX:
        if (mode(op) === Mode.ATOMIC) this.atomic(s, i);
        else this.store(s, i);
        return i + 1;
      case Cls.LD:
        if (op !== 0x18) {
          this.ldAbs(s, i);
          return i + 1;
        }
        this.ldImm64(s, i);
        return i + 2;
      default:
        return this.jump(s, i, work, ckpt);
    }
  }

  /** Immediates as scalars, by instruction: built once, since registers are immutable. */
  private imm64: (Reg | undefined)[] = [];
  private imm32: (Reg | undefined)[] = [];

  /** The immediate of instruction i: sign-extended (64-bit operations) or zero-extended (32-bit). */
  private immReg(i: number, is32: boolean): Reg {
    const cache = is32 ? this.imm32 : this.imm64;
    let r = cache[i];
    if (r === undefined) {
      r = constReg(is32 ? BigInt(this.p.imm[i]! >>> 0) : BigInt(this.p.imm[i]!));
      cache[i] = r;
    }
    return r;
  }

  private regs(s: State): Reg[] {
    return curFrame(s).regs;
  }

  private readReg(s: State, i: number, r: number): Reg {
    const reg = this.regs(s)[r]!;
    if (reg.type === RegType.notInit) this.reject(i, `R${r} !read_ok`);
    return reg;
  }

  private writeReg(s: State, i: number, r: number, value: Reg): void {
    if (r === 10) this.reject(i, 'frame pointer is read only');
    this.regs(s)[r] = value;
  }

  // ---------------------------------------------------------------- ALU

  private alu(s: State, i: number): void {
    const p = this.p;
    const op = p.opcode[i]!;
    const o = aluOp(op);
    const is64 = cls(op) === Cls.ALU64;
    const w: 32 | 64 = is64 ? 64 : 32;
    const dst = p.dst[i]!;
    const srcNo = p.src[i]!;
    const imm = p.imm[i]!;
    const fromReg = isSrcReg(op);
    const regs = this.regs(s);

    if (o === Alu.MOV) {
      if (!fromReg) {
        this.writeReg(s, i, dst, this.immReg(i, !is64));
        return;
      }
      const src = this.readReg(s, i, srcNo);
      const off = p.off[i]!;
      if (dst === 10) this.reject(i, 'frame pointer is read only');
      if (isPointer(src)) {
        if (is64 && off === 0) {
          regs[dst] = src;
          return;
        }
        if (!this.privileged) this.reject(i, `R${srcNo} partial copy of pointer`);
        regs[dst] = is64 ? UNKNOWN_SCALAR : UNKNOWN_U32;
        return;
      }
      let v = src.v;
      if (off !== 0) {
        v = signExtend(v, off as 8 | 16 | 32);
        if (!is64) v = truncate(v, 4);
        regs[dst] = scalarReg(v);
        return;
      }
      if (!is64) {
        regs[dst] = scalarReg(truncate(v, 4));
        return;
      }
      // a copy shares the source's id so that a bounds check on one narrows both
      if (isConst(v)) {
        regs[dst] = src;
        return;
      }
      let linked = src;
      if (src.id === 0) {
        linked = { ...src, id: this.newId() };
        regs[srcNo] = linked;
      }
      regs[dst] = linked;
      return;
    }

    const d = this.readReg(s, i, dst);
    if (dst === 10) this.reject(i, 'frame pointer is read only');

    if (o === Alu.NEG || o === Alu.END) {
      if (isPointer(d)) {
        if (!this.privileged) this.reject(i, `R${dst} pointer arithmetic prohibited`);
        regs[dst] = UNKNOWN_SCALAR;
        return;
      }
      if (o === Alu.NEG) {
        regs[dst] = scalarReg(fromView(aluView(Alu.SUB, viewOf(scalarConst(0n), w), viewOf(d.v, w))));
        return;
      }
      const bits = imm;
      const swap = is64 || fromReg; // bswap, or to_be on a little-endian machine
      if (!swap) {
        regs[dst] = scalarReg(truncate(d.v, bits / 8));
      } else if (isConst(d.v)) {
        let x = constValue(d.v);
        let y = 0n;
        for (let b = 0; b < bits / 8; b++) {
          y = (y << 8n) | (x & 0xffn);
          x >>= 8n;
        }
        regs[dst] = constReg(y);
      } else {
        regs[dst] = bits === 64 ? UNKNOWN_SCALAR : UNKNOWN_SCALAR_SIZED(bits / 8, 'read');
      }
      return;
    }

    let src: Reg;
    if (fromReg) src = this.readReg(s, i, srcNo);
    else {
      if ((o === Alu.DIV || o === Alu.MOD) && imm === 0) this.reject(i, 'div by zero');
      src = this.immReg(i, !is64);
    }
    if ((o === Alu.LSH || o === Alu.RSH || o === Alu.ARSH) && !fromReg && (imm < 0 || imm >= w)) {
      this.reject(i, `invalid shift ${imm}`);
    }

    if (isPointer(d) || isPointer(src)) {
      regs[dst] = this.pointerAlu(i, o, is64, d, src);
      return;
    }
    if ((o === Alu.DIV || o === Alu.MOD) && fromReg && this.options.rejectDivisionByZero) {
      const sv = viewOf(src.v, w);
      if (sv.umin === 0n) this.reject(i, `possible division by zero (R${srcNo} may be 0)`);
    }
    if (isConst(d.v) && isConst(src.v)) {
      const c = constAlu(o, constValue(d.v), constValue(src.v), w, p.off[i]! === 1);
      if (c !== null) {
        regs[dst] = constReg(c);
        return;
      }
    }
    const result = fromView(aluView(o, viewOf(d.v, w), viewOf(src.v, w)));
    regs[dst] = scalarReg(result);
  }

  private pointerAlu(i: number, o: number, is64: boolean, d: Reg, src: Reg): Reg {
    const dst = this.p.dst[i]!;
    if (isPointer(d) && isPointer(src)) {
      if (o === Alu.SUB && this.privileged) return UNKNOWN_SCALAR;
      this.reject(i, `R${dst} pointer ${ALU_TEXT[o]} pointer prohibited`);
    }
    if (!is64) {
      if (o === Alu.SUB && this.privileged) return UNKNOWN_U32;
      this.reject(i, `R${dst} 32-bit pointer arithmetic prohibited`);
    }
    const ptr = isPointer(d) ? d : src;
    const scalar = isPointer(d) ? src : d;
    if (ptr.maybeNull) {
      this.reject(i, `R${dst} pointer arithmetic on ${regTypeName(ptr)} prohibited, null-check it first`);
    }
    if (ptr.type === RegType.packetEnd) this.reject(i, `R${dst} pointer arithmetic on pkt_end prohibited`);
    if (ptr.type === RegType.mapPtr || ptr.type === RegType.func) {
      if (o === Alu.ADD && isConst(scalar.v) && constValue(scalar.v) === 0n) return ptr;
      this.reject(i, `R${dst} pointer arithmetic on ${regTypeName(ptr)} prohibited`);
    }
    if (o === Alu.AND || o === Alu.OR || o === Alu.XOR) {
      this.reject(i, `R${dst} bitwise operator ${ALU_TEXT[o]} on pointer prohibited`);
    }
    if (o !== Alu.ADD && o !== Alu.SUB) {
      this.reject(i, `R${dst} pointer arithmetic with ${ALU_TEXT[o]} operator prohibited`);
    }
    if (o === Alu.SUB && !isPointer(d)) this.reject(i, `R${dst} tried to subtract pointer from scalar`);
    const sv = scalar.v;
    const typeName = regTypeName(ptr);
    // check_reg_sane_offset: the scalar, then the resulting pointer
    if (isConst(sv)) {
      const c = toSigned(constValue(sv), 64);
      if (c >= MAX_VAR_OFF || c <= -MAX_VAR_OFF) this.reject(i, `math between ${typeName} pointer and ${c} is not allowed`);
      const off = BigInt(ptr.off) + (o === Alu.ADD ? c : -c);
      if (off >= MAX_VAR_OFF || off <= -MAX_VAR_OFF) this.reject(i, `${typeName} pointer offset ${off} is not allowed`);
      return { ...ptr, off: Number(off) };
    }
    if (sv.smin <= -(1n << 63n)) {
      this.reject(i, `math between ${typeName} pointer and register with unbounded min value is not allowed`);
    }
    if (sv.smin >= MAX_VAR_OFF || sv.smin <= -MAX_VAR_OFF) {
      this.reject(i, `value ${sv.smin} makes ${typeName} pointer be out of bounds`);
    }
    const v = fromView(aluView(o, viewOf(ptr.v, 64), viewOf(sv, 64)));
    if (v.smin <= -(1n << 63n)) {
      this.reject(i, `math between ${typeName} pointer and register with unbounded min value is not allowed`);
    }
    if (v.smin >= MAX_VAR_OFF || v.smin <= -MAX_VAR_OFF) {
      this.reject(i, `value ${v.smin} makes ${typeName} pointer be out of bounds`);
    }
    // a new variable part: a new identity, and no range proven for it yet
    if (isPacketPointer(ptr)) return { ...ptr, v, id: this.newId(), aux: 0 };
    return { ...ptr, v };
  }

  // ---------------------------------------------------------------- memory

  private load(s: State, i: number): void {
    const p = this.p;
    const op = p.opcode[i]!;
    const size = sizeBytes(op);
    const base = this.readReg(s, i, p.src[i]!);
    const value = this.access(s, i, p.src[i]!, base, p.off[i]!, size, 'read', null);
    let v = value;
    if (mode(op) === Mode.MEMSX && v.type === RegType.scalar) v = scalarReg(signExtend(v.v, (size * 8) as 8 | 16 | 32));
    this.writeReg(s, i, p.dst[i]!, v);
  }

  private store(s: State, i: number): void {
    const p = this.p;
    const op = p.opcode[i]!;
    const size = sizeBytes(op);
    const base = this.readReg(s, i, p.dst[i]!);
    let value: Reg;
    if (cls(op) === Cls.STX) value = this.readReg(s, i, p.src[i]!);
    else value = this.immReg(i, false);
    if (!this.privileged && isPointer(value) && base.type !== RegType.stack) {
      this.reject(i, `R${p.src[i]} leaks addr into mem`);
    }
    this.access(s, i, p.dst[i]!, base, p.off[i]!, size, 'write', value);
  }

  private atomic(s: State, i: number): void {
    const p = this.p;
    const op = p.opcode[i]!;
    const size = sizeBytes(op);
    const imm = p.imm[i]!;
    const base = this.readReg(s, i, p.dst[i]!);
    const value = this.readReg(s, i, p.src[i]!);
    if (imm === Atomic.CMPXCHG) this.readReg(s, i, 0);
    if (isPointer(value)) this.reject(i, `R${p.src[i]} leaks addr into mem`);
    if (base.type === RegType.ctx || isPacketPointer(base)) {
      this.reject(i, `BPF_ATOMIC stores into R${p.dst[i]} ${regTypeName(base)} is not allowed`);
    }
    const old = this.access(s, i, p.dst[i]!, base, p.off[i]!, size, 'read', null);
    this.access(s, i, p.dst[i]!, base, p.off[i]!, size, 'write', UNKNOWN_SCALAR);
    const fetched = old.type === RegType.scalar ? scalarReg(truncate(old.v, size)) : UNKNOWN_SCALAR;
    if (imm === Atomic.CMPXCHG) this.regs(s)[0] = fetched;
    else if (imm & Atomic.FETCH) this.writeReg(s, i, p.src[i]!, fetched);
  }

  /**
   * Checks one memory access through register `regNo` (`check_mem_access`) and performs it on the
   * state. Returns the loaded value for reads.
   */
  private access(
    s: State,
    i: number,
    regNo: number,
    base: Reg,
    insnOff: number,
    size: number,
    kind: 'read' | 'write',
    value: Reg | null,
  ): Reg {
    if (base.type === RegType.scalar || base.type === RegType.mapPtr || base.type === RegType.func || base.maybeNull) {
      this.reject(i, `R${regNo} invalid mem access '${regTypeName(base)}'`);
    }
    switch (base.type) {
      case RegType.ctx:
        return this.ctxAccess(i, regNo, base, insnOff, size, kind);
      case RegType.stack:
        return this.stackAccess(s, i, regNo, base, insnOff, size, kind, value);
      case RegType.mapValue: {
        const def = this.mapDef(base.aux, i);
        if (kind === 'write' && def.readonly) {
          this.reject(i, `write into map forbidden, value_size=${def.valueSize} off=${base.off + insnOff} size=${size}`);
        }
        this.regionAccess(i, regNo, base, insnOff, size, def.valueSize, 'map value, value_size');
        // a frozen read-only map (libbpf's .rodata): a load at a known offset is a known
        // constant (check_mem_access → bpf_map_direct_read), so disabled options prune
        if (kind === 'read' && def.frozen !== undefined && isConst(base.v) && size <= 8) {
          const at = base.off + insnOff + Number(constValue(base.v));
          if (at >= 0 && at + size <= def.frozen.length) {
            let v = 0n;
            for (let b = size - 1; b >= 0; b--) v = (v << 8n) | BigInt(def.frozen[at + b]!);
            return constReg(v);
          }
        }
        return UNKNOWN_SCALAR_SIZED(size, kind);
      }
      case RegType.ringbufMem:
        this.regionAccess(i, regNo, base, insnOff, size, base.aux, 'memory, mem_size');
        return UNKNOWN_SCALAR_SIZED(size, kind);
      case RegType.packet:
      case RegType.packetMeta:
        this.packetAccess(i, regNo, base, insnOff, size);
        return UNKNOWN_SCALAR_SIZED(size, kind);
    }
    this.reject(i, `R${regNo} invalid mem access '${regTypeName(base)}'`);
  }

  /**
   * An access through a packet pointer (`check_packet_access`): only the fixed offset is checked,
   * against the range proven for this pointer's variable part by a comparison with pkt_end.
   */
  private packetAccess(i: number, regNo: number, base: Reg, insnOff: number, size: number): void {
    if (base.v.smin < 0n) {
      this.reject(i, `R${regNo} min value is negative, either use unsigned index or do a if (index >=0) check.`);
    }
    const off = base.off + insnOff;
    if (off < 0 || off + size > base.aux) this.reject(i, `R${regNo} offset is outside of the packet`);
  }

  /** Bounds of an access to a region of `limit` bytes (`check_mem_region_access`). */
  private regionAccess(i: number, regNo: number, base: Reg, insnOff: number, size: number, limit: number, what: string): void {
    const off = BigInt(base.off + insnOff);
    const v = base.v;
    if (v.smin < 0n && (v.smin + off < 0n || v.smin <= -(1n << 62n))) {
      this.reject(i, `R${regNo} min value is negative, either use unsigned index or do a if (index >=0) check.`);
    }
    const lo = v.smin + off;
    if (lo < 0n || lo + BigInt(size) > BigInt(limit)) {
      this.reject(i, `invalid access to ${what}=${limit} off=${lo} size=${size}`);
    }
    if (v.umax >= MAX_VAR_OFF) {
      this.reject(i, `R${regNo} unbounded memory access, make sure to bounds check any such access`);
    }
    const hi = v.umax + off;
    if (hi + BigInt(size) > BigInt(limit)) {
      this.reject(i, `invalid access to ${what}=${limit} off=${hi} size=${size}`);
    }
  }

  private ctxAccess(i: number, regNo: number, base: Reg, insnOff: number, size: number, kind: 'read' | 'write'): Reg {
    if (!isConst(base.v)) {
      this.reject(i, `variable ctx access var_off=${formatTnum(base.v.t)} disallowed`);
    }
    const varOff = Number(toSigned(constValue(base.v), 64));
    if (base.off !== 0 || varOff !== 0) {
      this.reject(i, `dereference of modified ctx ptr R${regNo} off=${base.off + varOff} disallowed`);
    }
    const off = insnOff;
    const ctx = this.context;
    if (ctx.kind === 'xdp') {
      // xdp_is_valid_access: read-only, every field is a __u32; egress_ifindex (20) only for devmap programs
      if (kind === 'write' || off < 0 || off >= XDP_MD_SIZE || size !== 4 || off % size !== 0 || off === 20) this.invalidCtx(i, off, size);
      return this.packetSlotRead(off, { data: 0, dataEnd: 4, meta: 8 }) ?? UNKNOWN_SCALAR_SIZED(size, kind);
    }
    if (ctx.kind === 'raw') {
      if (off < 0 || off + size > ctx.size || (kind === 'write' && !ctx.writable)) this.invalidCtx(i, off, size);
      const slots = ctx.packet;
      if (slots) {
        const touches = [slots.data, slots.dataEnd, slots.meta].some((at) => at !== undefined && off < at + 4 && at < off + size);
        if (touches) {
          // the pointer fields are read whole and never written (the kernel converts the load)
          const ptr = kind === 'read' && size === 4 ? this.packetSlotRead(off, slots) : null;
          return ptr ?? this.invalidCtx(i, off, size);
        }
      }
      return UNKNOWN_SCALAR_SIZED(size, kind);
    }
    // tp_prog_is_valid_access: `off < sizeof(void *)` compares unsigned, so a negative offset
    // passes it (and `off >= PERF_MAX_TRACE_SIZE` signed); `off % size` is C's (truncating, as
    // JavaScript's): Linux 6.18 accepts `*(u32 *)(r1 - 16)`, so do we (it reads the bytes before
    // the record; packages/vm faults such a read)
    if (kind === 'write' || (off >= 0 && off < 8) || off >= PERF_MAX_TRACE_SIZE || off % size !== 0) {
      this.reject(i, `invalid bpf_context access off=${off} size=${size}`);
    }
    if (off < 0 && !ctx.event && !this.warnedAt.has(i)) {
      this.warnedAt.add(i);
      this.warnings.push(this.diagnostic(i, `ctx read at negative offset off=${off} size=${size}: Linux accepts it (before the record); packages/vm faults it`));
    }
    const event = ctx.event;
    if (event) {
      const name = `${event.system}/${event.name}`;
      if (off + size > event.fixedSize) {
        this.reject(i, `invalid bpf_context access off=${off} size=${size}: past the ${event.fixedSize}-byte record of ${name}`);
      }
      const fields = event.fields;
      const field = fields.find((f) => off >= f.byteOffset && off + size <= f.byteOffset + f.size);
      if (!field) {
        const touched = fields.filter((f) => off < f.byteOffset + f.size && f.byteOffset < off + size).map((f) => f.name);
        const where = touched.length === 0 ? 'padding, no field' : `spans fields ${touched.join(', ')}`;
        this.reject(i, `invalid bpf_context access off=${off} size=${size}: ${where} of ${name}`);
      }
      const key = `${i}:${off}:${size}`;
      if (!this.accesses.has(key)) {
        this.accesses.set(key, {
          insnIndex: i,
          event: name,
          field: field.name,
          offset: off,
          size,
          fieldOffset: off - field.byteOffset,
        });
      }
    }
    return UNKNOWN_SCALAR_SIZED(size, kind);
  }

  private invalidCtx(i: number, off: number, size: number): never {
    this.reject(i, `invalid bpf_context access off=${off} size=${size}`);
  }

  /** The packet pointer a 4-byte context read at `off` gives, or null for another field. */
  private packetSlotRead(off: number, slots: { data: number; dataEnd: number; meta?: number }): Reg | null {
    if (off === slots.data) return pointerReg(RegType.packet);
    if (off === slots.dataEnd) return pointerReg(RegType.packetEnd);
    if (off === slots.meta) return pointerReg(RegType.packetMeta);
    return null;
  }

  private stackAccess(
    s: State,
    i: number,
    regNo: number,
    base: Reg,
    insnOff: number,
    size: number,
    kind: 'read' | 'write',
    value: Reg | null,
  ): Reg {
    const frame = s.frames[base.frame]!;
    const fixed = base.off + insnOff;
    const dir = kind === 'read' ? ' read from' : ' write to';
    if (!isConst(base.v)) {
      // variable offset: every byte it may touch must be inside the stack
      const lo = base.v.smin + BigInt(fixed);
      const hi = base.v.smax + BigInt(fixed);
      if (lo < -MAX_STACK_BYTES || hi + BigInt(size) > 0n) {
        this.reject(i, `invalid variable-offset${dir} stack R${regNo} var_off=${formatTnum(base.v.t)} off=${fixed} size=${size}`);
      }
      if (!this.privileged) this.reject(i, `R${regNo} variable stack access prohibited for !root, var_off=${formatTnum(base.v.t)} off=${fixed}`);
      this.noteStackDepth(s, base.frame, Number(lo));
      for (let a = Number(lo); a < Number(hi) + size; a++) {
        const { k, pos } = slotOf(a);
        const slot = frame.stack[k] ?? EMPTY_SLOT;
        if (kind === 'read') {
          const b = slot.bytes[pos]!;
          if (b === Byte.invalid && !this.allowUninitStack) {
            this.reject(i, `invalid variable-offset read from stack R${regNo} var_off=${formatTnum(base.v.t)} off=${fixed} size=${size}`);
          }
        } else {
          setByte(frame, k, pos, Byte.misc);
        }
      }
      return UNKNOWN_SCALAR_SIZED(size, kind);
    }
    const off = fixed + Number(toSigned(constValue(base.v), 64));
    if (off < -MAX_STACK_BYTES || off + size > 0) {
      this.reject(i, `invalid${dir} stack R${regNo} off=${off} size=${size}`);
    }
    if (off % size !== 0) {
      // the offset is constant here; Linux 6.18 prints a constant var_off as its value
      this.reject(i, `misaligned stack access off ${toSigned(constValue(base.v), 64)}+${base.off}+${insnOff} size ${size}`);
    }
    this.noteStackDepth(s, base.frame, off);
    const { k, pos } = slotOf(off);
    const slot = frame.stack[k] ?? EMPTY_SLOT;
    if (kind === 'write') {
      const v = value!;
      if (size === 8) {
        padStack(frame, k);
        frame.stack[k] = { bytes: SPILL_BYTES, spilled: v };
        return v;
      }
      if (isPointer(v)) this.reject(i, 'invalid size of register spill');
      const zero = v.type === RegType.scalar && isConst(v.v) && (constValue(v.v) & ((1n << BigInt(size * 8)) - 1n)) === 0n;
      const bytes = slot.spilled ? slot.bytes.map(() => Byte.misc as number) : slot.bytes.slice();
      for (let b = 0; b < size; b++) bytes[pos + b] = zero ? Byte.zero : Byte.misc;
      padStack(frame, k);
      // a constant (immediate or register) stored at the slot's lowest address: Linux spills it
      // as a narrow scalar (check_stack_write_fixed_off with bpf_capable), which a map lookup
      // takes as a constant key
      const op = this.p.opcode[i]!;
      const plain = cls(op) === Cls.ST || (cls(op) === Cls.STX && mode(op) === Mode.MEM);
      const narrow =
        this.privileged && pos === 0 && !zero && plain && v.type === RegType.scalar && isConst(v.v)
          ? { size, value: constValue(v.v) & ((1n << BigInt(size * 8)) - 1n) }
          : undefined;
      frame.stack[k] = narrow ? { bytes, spilled: null, narrow } : { bytes, spilled: null };
      return v;
    }
    if (slot.spilled) {
      if (size === 8) return slot.spilled;
      if (isPointer(slot.spilled)) this.reject(i, 'invalid size of register fill');
      if (pos === 0) return scalarReg(truncate(slot.spilled.v, size));
      return UNKNOWN_SCALAR_SIZED(size, kind);
    }
    let allZero = true;
    for (let b = 0; b < size; b++) {
      const t = slot.bytes[pos + b]!;
      if (t === Byte.invalid) {
        if (!this.allowUninitStack) this.reject(i, `invalid read from stack off ${off}+${b} size ${size}`);
        allZero = false;
      } else if (t !== Byte.zero) allZero = false;
    }
    return allZero ? constReg(0n) : UNKNOWN_SCALAR_SIZED(size, kind);
  }

  private noteStackDepth(s: State, frameNo: number, off: number): void {
    const f = s.frames[frameNo]!;
    const sub = this.cfg.subprogOf[f.subprogStart]!;
    if (-off > this.stackDepth[sub]!) this.stackDepth[sub] = -off;
  }

  /**
   * The combined stack of every call chain (`check_max_stack_depth`), each frame rounded up to 16
   * bytes as for a JIT-compiled program. Linux 6.13+ on x86-64 gives tracing programs a private
   * stack and skips this limit; `privateStack: true` does the same.
   */
  private checkStackDepth(): void {
    if (this.options.privateStack) return;
    const round = (d: number) => Math.ceil(d / 16) * 16;
    const walk = (sub: number, depth: number, total: number, callInsn: number): void => {
      const t = total + round(this.stackDepth[sub]!);
      if (t > MAX_STACK_BYTES) {
        this.reject(callInsn, `combined stack size of ${depth} calls is ${t}. Too large`);
      }
      for (const c of this.cfg.calls[sub]!) walk(c.callee, depth + 1, t, c.insnIndex);
    };
    walk(0, 1, 0, 0);
  }

  /**
   * `BPF_LD_[ABS|IND]` (`check_ld_abs`): a load from the socket buffer in r6 that ends the
   * program when out of range; r0 gets the value, r1-r5 are clobbered as by a call.
   */
  private ldAbs(s: State, i: number): void {
    const p = this.p;
    const ctx = this.readReg(s, i, 6);
    if (s.refs.length > 0) this.reject(i, 'BPF_LD_[ABS|IND] cannot be mixed with socket references');
    if (ctx.type !== RegType.ctx) this.reject(i, 'at the time of BPF_LD_ABS|IND R6 != pointer to skb');
    if (mode(p.opcode[i]!) === Mode.IND) this.readReg(s, i, p.src[i]!);
    if (ctx.off !== 0 || !isConst(ctx.v) || constValue(ctx.v) !== 0n) {
      this.reject(i, `dereference of modified ctx ptr R6 off=${ctx.off} disallowed`);
    }
    const regs = this.regs(s);
    for (let r = 1; r <= 5; r++) regs[r] = NOT_INIT;
    regs[0] = UNKNOWN_SCALAR; // the kernel does not narrow it to the load size
  }

  // ---------------------------------------------------------------- lddw

  private ldImm64(s: State, i: number): void {
    const p = this.p;
    const dst = p.dst[i]!;
    const src = p.src[i]!;
    const lo = p.imm[i]!;
    const hi = p.imm[i + 1]!;
    switch (src) {
      case Pseudo.NONE:
        this.writeReg(s, i, dst, constReg((BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0)));
        return;
      case Pseudo.MAP_FD:
      case Pseudo.MAP_IDX:
        this.mapDef(lo, i);
        this.writeReg(s, i, dst, pointerReg(RegType.mapPtr, { aux: lo }));
        return;
      case Pseudo.MAP_VALUE:
      case Pseudo.MAP_IDX_VALUE: {
        const def = this.mapDef(lo, i);
        if (def.type !== 2) this.reject(i, `map type ${def.type} does not support direct value access`);
        if (hi < 0 || hi >= def.valueSize) {
          this.reject(i, `invalid access to map value pointer, value_size=${def.valueSize} off=${hi}`);
        }
        this.writeReg(s, i, dst, pointerReg(RegType.mapValue, { aux: lo, off: hi }));
        return;
      }
      case Pseudo.FUNC:
        this.writeReg(s, i, dst, pointerReg(RegType.func, { aux: i + lo + 1 }));
        return;
      default:
        this.reject(i, `unsupported bpf_ld_imm64 source ${src}`);
    }
  }

  // ---------------------------------------------------------------- jumps, calls, exit

  private jump(s: State, i: number, work: Path[], ckpt: Checkpoint | null): number {
    const p = this.p;
    const op = p.opcode[i]!;
    const o = aluOp(op);
    const is32 = cls(op) === Cls.JMP32;
    if (o === Jmp.JA) return i + 1 + (is32 ? p.imm[i]! : p.off[i]!);
    if (o === Jmp.EXIT) return this.exit(s, i, work, ckpt);
    if (o === Jmp.CALL) {
      if (p.src[i] === CallKind.PSEUDO_CALL) return this.callSubprog(s, i);
      if (p.src[i] === CallKind.KFUNC) this.reject(i, 'calling kernel functions is not supported');
      const next = this.callHelper(s, i);
      for (const path of this.pendingPaths.splice(0)) {
        if (ckpt) ckpt.branches++;
        work.push({ ...path, checkpoint: ckpt });
      }
      return next;
    }
    this.jumps++;
    const target = i + 1 + p.off[i]!;
    const dstNo = p.dst[i]!;
    const d = this.readReg(s, i, dstNo);
    const fromReg = isSrcReg(op);
    if (!fromReg && d.type === RegType.scalar && isConst(d.v)) {
      // a known value against the immediate (counted loops): one way only, no scalar built
      const goes = constCompare(o, constValue(d.v), constValue(this.immReg(i, is32).v), is32 ? 32 : 64);
      this.coverage[i]! |= goes ? BRANCH_JUMP : BRANCH_FALL;
      this.decide(i);
      return goes ? target : i + 1;
    }
    const src = fromReg ? this.readReg(s, i, p.src[i]!) : this.immReg(i, is32);

    let fall: State | null;
    let taken: State | null;
    if (d.type === RegType.scalar && src.type === RegType.scalar && isConst(d.v) && isConst(src.v)) {
      // both known: one way only, nothing to refine
      const goes = constCompare(o, constValue(d.v), constValue(src.v), is32 ? 32 : 64);
      this.coverage[i]! |= goes ? BRANCH_JUMP : BRANCH_FALL;
      this.decide(i);
      return goes ? target : i + 1;
    }
    if (isPointer(d) || isPointer(src)) {
      [fall, taken] = this.pointerBranch(s, i, o, is32, d, src);
    } else {
      fall = this.refineBranch(s, i, o, is32, false);
      taken = this.refineBranch(s, i, o, is32, true);
    }
    if (fall) this.coverage[i]! |= BRANCH_FALL;
    if (taken) this.coverage[i]! |= BRANCH_JUMP;
    if (!fall || !taken) this.decide(i);
    if (this.logLevel > 0 && fall && taken) this.emit(`${i}: branch to ${target}: ${formatState(taken)}`);
    if (fall && taken) {
      if (ckpt) ckpt.branches++;
      work.push({ state: taken, insnIndex: target, checkpoint: ckpt });
      replaceState(s, fall);
      return i + 1;
    }
    if (fall) {
      replaceState(s, fall);
      return i + 1;
    }
    if (taken) {
      replaceState(s, taken);
      return target;
    }
    // neither way is possible: the state itself was contradictory; the path ends
    return -1;
  }

  /**
   * Conditional jump i went one way only (the kernel's `is_branch_taken` >= 0, after which
   * `mark_chain_precision` makes its scalar operands precise back to where they were set), or
   * helper call i found a constant array-map key (its slot made precise the same way).
   * Precision here is static (precision.ts), over the branches known to be decided: a branch
   * seen decided for the first time makes the analysis again with its operands as decisions.
   * Prunes made before then compared those operands as "any scalar"; if one relied on that,
   * the run starts again (`Restart`), with the branch known from the start.
   */
  private decide(i: number): void {
    if (this.decided[i] || !this.usePrecision) return;
    this.decided[i] = 1;
    if (this.precision === null) return; // not analysed: every scalar is precise anyway
    this.precision = undefined;
    if (this.reliedOnPrecision) throw new Restart();
  }

  /** The state after `dst op src` is `outcome`, or null when that cannot happen. */
  private refineBranch(s: State, i: number, o: number, is32: boolean, outcome: boolean): State | null {
    const p = this.p;
    const w: 32 | 64 = is32 ? 32 : 64;
    const dstNo = p.dst[i]!;
    const fromReg = isSrcReg(p.opcode[i]!);
    const regs = this.regs(s);
    const d = regs[dstNo]!;
    const src = fromReg ? regs[p.src[i]!]! : this.immReg(i, is32);
    const r = refineCompare(o, viewOf(d.v, w), viewOf(src.v, w), outcome);
    if (!r) return null;
    const nd = withView(d.v, r[0]);
    if (!nd) return null;
    // an immediate's refined view is the constant itself whenever refineCompare found the
    // outcome possible (its tnum is exact, so its bounds are pinned to it): nothing to refine
    const ns = fromReg ? withView(src.v, r[1]) : src.v;
    if (!ns) return null;
    const out = cloneState(s);
    const fr = curFrame(out).regs;
    fr[dstNo] = setScalar(out, d, nd);
    if (fromReg) fr[p.src[i]!] = setScalar(out, fr[p.src[i]!]!, ns);
    return out;
  }

  /**
   * Branches on a comparison involving a pointer, as Linux 6.18 decides them:
   * - `is_branch_taken`: a pointer that `reg_not_null` says cannot be null (map value, map
   *   pointer, ring-buffer memory; not ctx, stack, packet or function pointers, which the
   *   kernel does not assume non-null) compared `==`/`!=` with a constant 0 (either side, 64-bit
   *   only: a 32-bit comparison goes both ways, as measured on 6.18) goes one way only; every
   *   other comparison involving a pointer goes both ways,
   *   with neither side refined (`reg_set_min_max` learns nothing when a side is a pointer);
   * - `mark_ptr_or_null_regs`: only `if rX ==/!= 0` (immediate 0, 64-bit, the maybe-null
   *   pointer as the destination) makes the pointer null on one side and non-null on the other;
   *   a comparison with a register holding 0, or a 32-bit one, leaves it maybe-null on both;
   * - packet pointers against pkt_end (`try_match_pkt_pointers`, 64-bit only) prove ranges.
   */
  private pointerBranch(s: State, i: number, o: number, is32: boolean, d: Reg, src: Reg): [State | null, State | null] {
    const p = this.p;
    if (o === Jmp.JEQ || o === Jmp.JNE) {
      const ptr = isPointer(d) ? d : src;
      const other = isPointer(d) ? src : d;
      if (!is32 && regNotNull(ptr) && isZeroAt(other, 64)) {
        return o === Jmp.JEQ ? [cloneState(s), null] : [null, cloneState(s)];
      }
      if (!is32 && !isSrcReg(p.opcode[i]!) && p.imm[i] === 0 && d.maybeNull) {
        const isNull = this.markNull(cloneState(s), d, true);
        const notNull = this.markNull(cloneState(s), d, false);
        return o === Jmp.JEQ ? [notNull, isNull] : [isNull, notNull];
      }
    }
    if (!is32) {
      const outcome = this.packetBranch(s, o, d, src);
      if (outcome) return outcome;
    }
    if (!this.privileged) this.reject(i, `R${p.dst[i]} pointer comparison prohibited`);
    return [cloneState(s), cloneState(s)];
  }

  /**
   * A comparison of a packet pointer with pkt_end (or of a meta pointer with the packet start)
   * proves a range on one side (`try_match_pkt_pointers`): `pkt + n <= end` makes n bytes
   * readable through every pointer with the same variable part.
   */
  private packetBranch(s: State, o: number, d: Reg, src: Reg): [State | null, State | null] | null {
    // normalise to `ptr <op> limit`, with the comparison seen from the bounded pointer
    let ptr: Reg;
    let op: number;
    if (boundsPacket(d, src)) {
      ptr = d;
      op = o;
    } else if (boundsPacket(src, d)) {
      ptr = src;
      const flip: Record<number, number> = { [Jmp.JGT]: Jmp.JLT, [Jmp.JLT]: Jmp.JGT, [Jmp.JGE]: Jmp.JLE, [Jmp.JLE]: Jmp.JGE };
      const f = flip[o];
      if (f === undefined) return null;
      op = f;
    } else {
      return null;
    }
    // which edge has ptr <= limit (closed) or ptr < limit (right-open)
    let good: 'fall' | 'taken';
    let open: boolean;
    switch (op) {
      case Jmp.JGT: // fall: ptr <= limit
        good = 'fall';
        open = false;
        break;
      case Jmp.JGE: // fall: ptr < limit
        good = 'fall';
        open = true;
        break;
      case Jmp.JLT: // taken: ptr < limit
        good = 'taken';
        open = true;
        break;
      case Jmp.JLE: // taken: ptr <= limit
        good = 'taken';
        open = false;
        break;
      default:
        return null;
    }
    const fall = cloneState(s);
    const taken = cloneState(s);
    this.markPacketRange(good === 'fall' ? fall : taken, ptr, open);
    return [fall, taken];
  }

  /**
   * `find_good_pkt_pointers`: every pointer sharing `ptr`'s variable part gets the range `ptr.off`
   * (`ptr.off + 1` after a strict `ptr < limit`; the kernel proves nothing from `pkt < end` itself).
   */
  private markPacketRange(s: State, ptr: Reg, open: boolean): void {
    if (ptr.off < 0 || (ptr.off === 0 && open)) return;
    if (ptr.v.umax > BigInt(MAX_PACKET_OFF) || ptr.v.umax + BigInt(ptr.off) > BigInt(MAX_PACKET_OFF)) return;
    const range = open ? ptr.off + 1 : ptr.off;
    mapAllRegs(s, (r) => (r.type === ptr.type && r.id === ptr.id && r.aux < range ? { ...r, aux: range } : r));
  }

  /** Marks every copy of a maybe-null pointer null (becomes scalar 0) or non-null. */
  private markNull(s: State, ptr: Reg, isNull: boolean): State {
    const id = ptr.id;
    mapAllRegs(s, (r) => {
      if (!r.maybeNull || r.id !== id) return r;
      return isNull ? constReg(0n) : { ...r, maybeNull: false };
    });
    if (isNull && ptr.refId) s.refs = s.refs.filter((ref) => ref.id !== ptr.refId);
    return s;
  }

  private exit(s: State, i: number, work: Path[], ckpt: Checkpoint | null): number {
    const top = curFrame(s);
    if (top.callbackCtx !== null) {
      const r0 = this.readReg(s, i, 0);
      if (r0.type !== RegType.scalar) this.reject(i, 'R0 not a scalar value');
      if (r0.v.smin < 0n || r0.v.smax > 1n) {
        // verbose_invalid_scalar
        const { smin, smax } = r0.v;
        let shown = '';
        if (smin > -(1n << 63n)) shown += ` smin=${smin}`;
        if (smax < (1n << 63n) - 1n) shown += ` smax=${smax}`;
        this.reject(i, `At callback return the register R0 has${shown || ' unknown scalar value'} should have been in [0, 1]`);
      }
      s.frames.pop();
      const caller = curFrame(s).regs;
      caller[0] = UNKNOWN_SCALAR;
      for (let r = 1; r <= 5; r++) caller[r] = NOT_INIT;
      // the next iteration, explored as another path while Linux would explore it
      // (`callback_depth < nr_loops` maximum)
      if (top.loopsLeft > 0n) {
        const again = cloneState(s);
        const start = this.enterCallback(again, top.callsite, top.subprogStart, top.callbackCtx, top.loopsLeft - 1n);
        if (this.usePrecision) this.widenLoopScalars(again, ckpt);
        if (ckpt) ckpt.branches++;
        work.push({ state: again, insnIndex: start, checkpoint: ckpt });
      }
      return top.callsite + 1;
    }
    if (s.frames.length > 1) {
      // a subprogram may return without setting r0; the caller cannot read it then
      const r0 = this.regs(s)[0]!;
      const callee = s.frames.pop()!;
      // prepare_func_exit: any stack pointer, even one into a caller's frame (still valid
      // there), is refused, as Linux does ("let's be conservative")
      if (r0.type === RegType.stack) this.reject(i, 'cannot return stack pointer to the caller');
      const regs = curFrame(s).regs;
      regs[0] = r0;
      for (let r = 1; r <= 5; r++) regs[r] = NOT_INIT;
      return callee.callsite + 1;
    }
    const r0 = this.readReg(s, i, 0);
    if (s.refs.length > 0) {
      const ref = s.refs[0]!;
      this.reject(i, `Unreleased reference id=${ref.id} alloc_insn=${ref.insnIndex}`);
    }
    if (!this.privileged && isPointer(r0)) this.reject(i, 'R0 leaks addr as return value');
    return -1;
  }

  /**
   * Widening at the next iteration of a callback loop (the kernel's `widen_imprecise_scalars`):
   * a scalar of a caller frame that differs from its value at the previous entry of this
   * callback on the current path becomes unknown, so the entries reach a fixpoint (a counter in
   * the caller's stack no longer makes every iteration a new state). Always sound: the state
   * only grows. A value the program needs exactly is lost this way; `verify` then runs again
   * without widening (see `widenedRun`).
   */
  private widenLoopScalars(next: State, ckpt: Checkpoint | null): void {
    const top = curFrame(next);
    const depth = next.frames.length;
    let prev = ckpt;
    while (prev) {
      const ps = prev.state;
      if (
        prev.insnIndex === top.subprogStart &&
        ps.frames.length === depth &&
        ps.frames[depth - 1]!.callsite === top.callsite
      ) {
        break;
      }
      prev = prev.parent;
    }
    if (!prev) return;
    for (let f = 0; f < depth - 1; f++) {
      const old = prev.state.frames[f]!;
      const cur = next.frames[f]!;
      for (let r = 0; r < 11; r++) {
        const w = widened(old.regs[r]!, cur.regs[r]!);
        if (w) {
          cur.regs[r] = w;
          this.widenings++;
        }
      }
      for (let k = 0; k < cur.stack.length; k++) {
        const slot = cur.stack[k]!;
        const o = old.stack[k]?.spilled;
        if (!slot.spilled || !o) continue;
        const w = widened(o, slot.spilled);
        if (w) {
          cur.stack[k] = { bytes: slot.bytes, spilled: w };
          this.widenings++;
        }
      }
    }
  }

  private callSubprog(s: State, i: number): number {
    const target = i + this.p.imm[i]! + 1;
    if (s.frames.length >= MAX_CALL_FRAMES) {
      this.reject(i, `the call stack of ${s.frames.length + 1} frames is too deep`);
    }
    const caller = curFrame(s);
    const regs: Reg[] = notInitRegs();
    for (let r = 1; r <= 5; r++) regs[r] = caller.regs[r]!;
    regs[10] = pointerReg(RegType.stack, { frame: s.frames.length });
    s.frames.push({ regs, stack: [], callsite: i, subprogStart: target, callbackCtx: null, loopsLeft: 0n });
    return target;
  }

  // ---------------------------------------------------------------- helpers

  private callHelper(s: State, i: number): number {
    const id = this.p.imm[i]!;
    const proto = helperProto(id);
    if (!proto) this.reject(i, `invalid func unknown#${id}`);
    const regs = this.regs(s);
    // a probe read from a plain number: kernel or user memory, not the record, stack or a map value
    if (PROBE_READS.has(id) && regs[3]?.type === RegType.scalar) this.outsideReads.set(i, id);
    let map: MapDef | null = null;
    let mapIndex = -1;
    let allocSize = 0;
    let released = 0;
    let refArg = 0;
    let constKey: bigint | null = null;
    let callback = -1;
    let callbackCtx: Reg | null = null;
    for (let a = 0; a < proto.args.length; a++) {
      const r = a + 1;
      const kind = proto.args[a]!;
      if (kind === Arg.size || kind === Arg.sizeOrZero) continue; // checked with the memory before it
      const reg = this.readReg(s, i, r);
      if (reg.refId) {
        if (refArg) this.reject(i, `more than one arg with ref_obj_id R${r} ${reg.refId} ${refArg}`);
        refArg = reg.refId;
      }
      switch (kind) {
        case Arg.anything:
          break;
        case Arg.mapPtr: {
          if (reg.type !== RegType.mapPtr) this.typeMismatch(i, r, reg, 'map_ptr');
          map = this.mapDef(reg.aux, i);
          mapIndex = reg.aux;
          break;
        }
        case Arg.mapKey:
        case Arg.mapValue:
        case Arg.uninitMapValue: {
          if (!map) this.reject(i, `invalid map_ptr to access map->${kind === Arg.mapKey ? 'key' : 'value'}`);
          const size = kind === Arg.mapKey ? map.keySize : map.valueSize;
          if (size === 0) this.reject(i, 'invalid zero-sized read');
          if (kind === Arg.mapKey) constKey = this.constantStackKey(s, reg, size);
          this.helperMem(s, i, r, reg, BigInt(size), BigInt(size), kind === Arg.uninitMapValue ? 'write' : 'read', proto);
          break;
        }
        case Arg.mem:
        case Arg.uninitMem: {
          const sizeKind = proto.args[a + 1]!;
          const sizeReg = this.readReg(s, i, r + 1);
          if (sizeReg.type !== RegType.scalar) this.typeMismatch(i, r + 1, sizeReg, 'scalar');
          const sv = sizeReg.v;
          if (sv.smin < 0n) {
            this.reject(i, `R${r + 1} min value is negative, either use unsigned or 'var &= const'`);
          }
          if (sv.umax === 0n && sizeKind === Arg.size) this.reject(i, `invalid zero-sized read`);
          if (sv.umax >= MAX_VAR_SIZE) {
            this.reject(i, `R${r + 1} unbounded memory access, use 'var &= const' or 'if (var < const)'`);
          }
          this.helperMem(s, i, r, reg, sv.umin, sv.umax, kind === Arg.uninitMem ? 'write' : 'read', proto);
          break;
        }
        case Arg.allocSize: {
          if (reg.type !== RegType.scalar) this.typeMismatch(i, r, reg, 'scalar');
          if (!isConst(reg.v)) this.reject(i, `R${r} is not a known constant'`);
          allocSize = Number(constValue(reg.v) & 0xffffffffn);
          break;
        }
        case Arg.ctx: {
          if (reg.type !== RegType.ctx) this.typeMismatch(i, r, reg, 'ctx');
          if (reg.off !== 0 || !isConst(reg.v) || constValue(reg.v) !== 0n) {
            this.reject(i, `dereference of modified ctx ptr R${r} off=${reg.off} disallowed`);
          }
          break;
        }
        case Arg.func: {
          if (reg.type !== RegType.func) this.typeMismatch(i, r, reg, 'func');
          callback = reg.aux;
          break;
        }
        case Arg.stackOrNull: {
          const isNull = reg.type === RegType.scalar && isConst(reg.v) && constValue(reg.v) === 0n;
          if (!isNull && reg.type !== RegType.stack) this.typeMismatch(i, r, reg, 'fp');
          callbackCtx = reg;
          break;
        }
        case Arg.releaseRingbuf: {
          if (reg.type !== RegType.ringbufMem || reg.maybeNull) this.typeMismatch(i, r, reg, 'ringbuf_mem');
          if (reg.off !== 0 || !isConst(reg.v) || constValue(reg.v) !== 0n) {
            this.reject(i, `R${r} must have zero offset when passed to release func`);
          }
          if (!s.refs.some((ref) => ref.id === reg.refId)) {
            this.reject(i, `R${r} must be referenced when passed to release function`);
          }
          released = reg.refId;
          break;
        }
      }
    }
    if (map && ((proto.mapTypes && !proto.mapTypes.includes(map.type)) || !mapTypeAllowsHelper(map.type, id))) {
      this.reject(i, `cannot pass map_type ${map.type} into func ${helperName(id)}#${id}`);
    }
    if (released) {
      s.refs = s.refs.filter((ref) => ref.id !== released);
      mapAllRegs(s, (x) => (x.refId === released ? (this.privileged ? UNKNOWN_SCALAR : NOT_INIT) : x));
    }
    const nrLoops = regs[1]!;
    for (let r = 1; r <= 5; r++) regs[r] = NOT_INIT;
    regs[0] = this.helperResult(s, i, proto, mapIndex, allocSize, constKey);
    if (callback < 0) return i + 1;
    // Linux explores the callback only while its depth is below nr_loops' maximum
    // (`callback_depth < umax_value`): never when nr_loops is 0
    if (nrLoops.type === RegType.scalar && nrLoops.v.umax === 0n) return i + 1;
    // nr_loops may be 0: the path where the callback never runs
    this.pendingPaths.push({ state: cloneState(s), insnIndex: i + 1, checkpoint: null });
    const maxLoops = nrLoops.type === RegType.scalar ? nrLoops.v.umax : U64;
    return this.enterCallback(s, i, callback, callbackCtx ?? constReg(0n), maxLoops - 1n);
  }

  /**
   * Runs a `bpf_loop` callback as a frame of its own: r1 the iteration number, r2 the context.
   * When it returns, the loop either calls it again or ends (see `exit`).
   */
  private enterCallback(s: State, i: number, start: number, ctx: Reg, loopsLeft: bigint): number {
    if (s.frames.length >= MAX_CALL_FRAMES) {
      this.reject(i, `the call stack of ${s.frames.length + 1} frames is too deep`);
    }
    const regs: Reg[] = notInitRegs();
    regs[1] = UNKNOWN_U32;
    regs[2] = ctx;
    regs[10] = pointerReg(RegType.stack, { frame: s.frames.length });
    s.frames.push({ regs, stack: [], callsite: i, subprogStart: start, callbackCtx: ctx, loopsLeft });
    return start;
  }

  private helperResult(
    s: State,
    i: number,
    proto: HelperProto,
    mapIndex: number,
    allocSize: number,
    constKey: bigint | null,
  ): Reg {
    switch (proto.ret) {
      case Ret.integer:
        return UNKNOWN_SCALAR;
      case Ret.void:
        return NOT_INIT;
      case Ret.mapValueOrNull: {
        // an array lookup with a constant key below max_entries cannot fail
        if (proto.id === 1 && constKey !== null) {
          const def = this.mapDef(mapIndex, i);
          if (def.type === MapType.array || def.type === MapType.percpuArray) {
            // the key's value decided the result: it is precise (`get_constant_map_key`)
            this.decide(i);
            if (constKey < BigInt(def.maxEntries)) return pointerReg(RegType.mapValue, { aux: mapIndex, v: ZERO_OFFSET });
          }
        }
        return pointerReg(RegType.mapValue, { maybeNull: true, id: this.newId(), aux: mapIndex, v: ZERO_OFFSET });
      }
      case Ret.ringbufMemOrNull: {
        // the kernel spends one id on the reference state and numbers the pointer after it
        this.newId();
        const id = this.newId();
        s.refs = [...s.refs, { id, insnIndex: i }];
        return pointerReg(RegType.ringbufMem, { maybeNull: true, id, refId: id, aux: allocSize });
      }
    }
  }

  /** The key a stack pointer points to when its bytes are a known constant (`get_constant_map_key`). */
  private constantStackKey(s: State, reg: Reg, size: number): bigint | null {
    if (reg.type !== RegType.stack || !isConst(reg.v) || (size !== 4 && size !== 8)) return null;
    const off = reg.off + Number(toSigned(constValue(reg.v), 64));
    if (off < -MAX_STACK_BYTES || off + size > 0 || off % size !== 0) return null;
    const { k, pos } = slotOf(off);
    const slot = s.frames[reg.frame]!.stack[k];
    if (!slot) return null;
    if (slot.spilled) {
      const v = slot.spilled;
      if (pos !== 0 || v.type !== RegType.scalar || !isConst(v.v)) return null;
      return size === 8 ? constValue(v.v) : constValue(v.v) & 0xffffffffn;
    }
    if (slot.narrow && pos === 0 && slot.narrow.size === size) return slot.narrow.value;
    for (let b = 0; b < size; b++) if (slot.bytes[pos + b] !== Byte.zero) return null;
    return 0n;
  }

  private typeMismatch(i: number, r: number, reg: Reg, expected: string): never {
    this.reject(i, `R${r} type=${regTypeName(reg)} expected=${expected}`);
  }

  /**
   * Memory passed to a helper (`check_helper_mem_access`): `[minSize, maxSize]` bytes read or
   * written through register r.
   */
  private helperMem(
    s: State,
    i: number,
    r: number,
    reg: Reg,
    minSize: bigint,
    maxSize: bigint,
    kind: 'read' | 'write',
    proto: HelperProto,
  ): void {
    void minSize;
    const size = Number(maxSize);
    switch (reg.type) {
      case RegType.packet:
      case RegType.packetMeta:
        if (!proto.pktAccess) this.reject(i, 'helper access to the packet is not allowed');
        this.packetAccess(i, r, reg, 0, size);
        return;
      case RegType.stack: {
        if (reg.maybeNull) break;
        const frame = s.frames[reg.frame]!;
        const lo = reg.v.smin + BigInt(reg.off);
        const hi = reg.v.smax + BigInt(reg.off);
        if (lo < -MAX_STACK_BYTES || hi + BigInt(size) > 0n || (size === 0 && hi > 0n)) {
          const shown = isConst(reg.v) ? `off=${Number(lo)}` : `var_off=${formatTnum(reg.v.t)} off=${reg.off}`;
          this.reject(i, `invalid ${kind === 'write' ? 'write to' : 'read from'} stack R${r} ${shown} size=${size}`);
        }
        if (size === 0) return;
        this.noteStackDepth(s, reg.frame, Number(lo));
        for (let a = Number(lo); a < Number(hi) + size; a++) {
          const { k, pos } = slotOf(a);
          const slot = frame.stack[k] ?? EMPTY_SLOT;
          if (kind === 'read') {
            if (slot.bytes[pos] === Byte.invalid && !this.allowUninitStack) {
              this.reject(i, `invalid read from stack R${r} off ${Number(lo)}+${a - Number(lo)} size ${size}`);
            }
          } else if (isConst(reg.v)) {
            setByte(frame, k, pos, Byte.misc);
          } else if (slot.spilled || slot.bytes[pos] === Byte.invalid) {
            setByte(frame, k, pos, Byte.misc);
          }
        }
        return;
      }
      case RegType.mapValue:
        if (reg.maybeNull) break;
        if (size === 0) return;
        this.regionAccess(i, r, reg, 0, size, this.mapDef(reg.aux, i).valueSize, 'map value, value_size');
        return;
      case RegType.ringbufMem:
        if (reg.maybeNull) break;
        if (size === 0) return;
        this.regionAccess(i, r, reg, 0, size, reg.aux, 'memory, mem_size');
        return;
    }
    this.typeMismatch(i, r, reg, 'fp, map_value, ringbuf_mem');
  }
}

/** r0-r10 of a new frame, none written yet. */
function notInitRegs(): Reg[] {
  return [NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT];
}

/** `reg` with value `v`; every other register linked to it by id gets `v` too. */
function setScalar(out: State, reg: Reg, v: Scalar): Reg {
  const updated = { ...reg, v };
  if (reg.id === 0) return updated;
  mapAllRegs(out, (x) => (x.type === RegType.scalar && x.id === reg.id ? { ...x, v } : x));
  return updated;
}

/** A scalar known to be 0 in its low `w` bits (`is_reg_const` and `reg_const_value` at that width). */
const isZeroAt = (r: Reg, w: 32 | 64): boolean => {
  if (r.type !== RegType.scalar) return false;
  const t = viewOf(r.v, w).t;
  return t.mask === 0n && t.value === 0n;
};

/** `reg_not_null`: pointer types the kernel knows are never null (for `is_branch_taken`). */
const regNotNull = (r: Reg): boolean =>
  !r.maybeNull && (r.type === RegType.mapValue || r.type === RegType.mapPtr || r.type === RegType.ringbufMem);
const isPacketStart = (r: Reg): boolean => r.type === RegType.packet && r.off === 0 && isConst(r.v) && constValue(r.v) === 0n;
/** `lo` is a pointer that `hi` bounds: a packet pointer and pkt_end, or a meta pointer and the packet start. */
const boundsPacket = (lo: Reg, hi: Reg): boolean =>
  (lo.type === RegType.packet && hi.type === RegType.packetEnd) || (lo.type === RegType.packetMeta && isPacketStart(hi));

/** `a op b` on known values (BPF semantics, `w`-bit), or null for ops left to the bounds logic. */
function constAlu(o: number, a: bigint, b: bigint, w: 32 | 64, signedDivMod: boolean): bigint | null {
  const m = w === 64 ? U64 : U32;
  // masking allocates a BigInt: only when the value is outside [0, m]
  if (a < 0n || a > m) a &= m;
  if (b < 0n || b > m) b &= m;
  switch (o) {
    case Alu.ADD: {
      const r = a + b;
      return r > m ? r & m : r;
    }
    case Alu.SUB: {
      const r = a - b;
      return r < 0n ? r & m : r;
    }
    case Alu.MUL:
      return (a * b) & m;
    case Alu.AND:
      return a & b;
    case Alu.OR:
      return a | b;
    case Alu.XOR:
      return a ^ b;
    case Alu.LSH:
      return b < BigInt(w) ? (a << b) & m : null;
    case Alu.RSH:
      return b < BigInt(w) ? a >> b : null;
    case Alu.ARSH:
      return b < BigInt(w) ? (toSigned(a, w) >> b) & m : null;
    case Alu.DIV:
    case Alu.MOD:
      // the kernel keeps no bounds for division: neither do we (same verdicts)
      void signedDivMod;
      return null;
  }
  return null;
}

/** Outcome of a conditional jump on known values. */
function constCompare(o: number, a: bigint, b: bigint, w: 32 | 64): boolean {
  const m = w === 64 ? U64 : U32;
  if (a < 0n || a > m) a &= m;
  if (b < 0n || b > m) b &= m;
  switch (o) {
    case Jmp.JEQ:
      return a === b;
    case Jmp.JNE:
      return a !== b;
    case Jmp.JGT:
      return a > b;
    case Jmp.JGE:
      return a >= b;
    case Jmp.JLT:
      return a < b;
    case Jmp.JLE:
      return a <= b;
    case Jmp.JSGT:
      return toSigned(a, w) > toSigned(b, w);
    case Jmp.JSGE:
      return toSigned(a, w) >= toSigned(b, w);
    case Jmp.JSLT:
      return toSigned(a, w) < toSigned(b, w);
    case Jmp.JSLE:
      return toSigned(a, w) <= toSigned(b, w);
    default:
      return (a & b) !== 0n;
  }
}

/**
 * Unknown values of 1, 2 and 4 bytes (zero-extended): registers are immutable, so the loads and
 * 32-bit results that produce them share one each instead of normalizing a new range every time.
 */
/** probe_read, probe_read_str, probe_read_user(_str), probe_read_kernel(_str). */
const PROBE_READS = new Set([4, 45, 112, 113, 114, 115]);

const UNKNOWN_BY_SIZE: readonly Reg[] = [1, 2, 4].map((size) => scalarReg(scalarRange(0n, (1n << BigInt(size * 8)) - 1n)));
const UNKNOWN_U8 = UNKNOWN_BY_SIZE[0]!;
const UNKNOWN_U16 = UNKNOWN_BY_SIZE[1]!;
const UNKNOWN_U32 = UNKNOWN_BY_SIZE[2]!;

/** Fresh scalar of a load of `size` bytes (zero-extended). */
function UNKNOWN_SCALAR_SIZED(size: number, kind: 'read' | 'write'): Reg {
  if (kind === 'write' || size >= 8) return UNKNOWN_SCALAR;
  return size === 1 ? UNKNOWN_U8 : size === 2 ? UNKNOWN_U16 : size === 4 ? UNKNOWN_U32 : scalarReg(scalarRange(0n, (1n << BigInt(size * 8)) - 1n));
}

/** Slot and byte position (lowest address first) of stack byte `a` (negative). */
function slotOf(a: number): { k: number; pos: number } {
  const k = Math.floor((-a - 1) / 8);
  return { k, pos: a + 8 * (k + 1) };
}

function setByte(frame: Frame, k: number, pos: number, kind: number): void {
  const slot: Slot = frame.stack[k] ?? EMPTY_SLOT;
  const bytes = slot.spilled ? slot.bytes.map(() => Byte.misc as number) : slot.bytes.slice();
  bytes[pos] = kind;
  padStack(frame, k);
  frame.stack[k] = { bytes, spilled: null };
}

const SPILL_BYTES: readonly number[] = [1, 1, 1, 1, 1, 1, 1, 1];

function padStack(frame: Frame, k: number): void {
  while (frame.stack.length < k) frame.stack.push(EMPTY_SLOT);
}

function replaceState(target: State, from: State): void {
  target.frames = from.frames;
  target.refs = from.refs;
}

/**
 * A hash equal for exactly equal states (ids by presence only), for loop detection. Registers
 * and slots are immutable and shared between states, so their hashes are computed once.
 */
function stateKey(s: State): number {
  let h = 0x811c9dc5 ^ s.refs.length;
  const frames = s.frames;
  for (let fi = 0; fi < frames.length; fi++) {
    const f = frames[fi]!;
    h = mix(h, f.callsite);
    const regs = f.regs;
    for (let r = 0; r < regs.length; r++) h = mix(h, regHash(regs[r]!));
    const stack = f.stack;
    for (let k = 0; k < stack.length; k++) {
      const slot = stack[k]!;
      if (slot !== EMPTY_SLOT) h = mix(h ^ k, slotHash(slot));
    }
  }
  return h;
}

// Hashes stay below 2^30 (the high, best-mixed bits of the product): small integers, which V8
// keeps unboxed, so hashing and the Map of keys allocate nothing
const mix = (h: number, x: number): number => Math.imul(h ^ x, 0x01000193) >>> 2;

function stringHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 2;
}

// Number(x) of a BigInt allocates nothing (unlike asUintN or >>): the low and high words of
// the double are enough for a hash, since equal values give equal doubles
const wordLo = (x: bigint): number => Number(x) | 0;
const slotHashes = new WeakMap<Slot, number>();

/** A hash of everything exact comparison looks at (a collision only costs a comparison). */
function regHash(r: Reg): number {
  if (r.type === RegType.notInit) return 1;
  // the small fields packed into two words first: two multiplications instead of five
  const kind = r.type | (r.frame << 4) | (r.maybeNull ? 0x100 : 0) | (r.id ? 0x200 : 0) | (r.refId ? 0x400 : 0);
  const h = mix(kind ^ Math.imul(r.aux, 0x9e3779b1), r.off);
  // most pointers share the zero offset object: nothing to add for it
  return r.v === ZERO_OFFSET ? h : mix(h, scalarHash(r.v));
}

function scalarHash(v: Scalar): number {
  const x = Number(v.t.value);
  const h = mix(x | 0, (x / 4294967296) | 0);
  if (v.t.mask === 0n) return h;
  // the bounds follow from these in most states; a collision only costs a comparison
  const m = Number(v.t.mask);
  return mix(mix(mix(h ^ (m | 0), (m / 4294967296) | 0), wordLo(v.umax)), wordLo(v.smin));
}

function slotHash(slot: Slot): number {
  let h = slotHashes.get(slot);
  if (h === undefined) {
    h = stringHash(slot.bytes.join(''));
    if (slot.spilled) h = mix(h, regHash(slot.spilled));
    if (slot.narrow) h = mix(h, Number(slot.narrow.value & 0xffffn) + slot.narrow.size);
    slotHashes.set(slot, h);
  }
  return h;
}


/** The widened register when a scalar changed between two loop entries (null: keep it). */
function widened(old: Reg, cur: Reg): Reg | null {
  if (old.type !== RegType.scalar || cur.type !== RegType.scalar) return null;
  if (scalarEquals(old.v, cur.v) || scalarEquals(cur.v, SCALAR_UNKNOWN)) return null;
  return UNKNOWN_SCALAR;
}
