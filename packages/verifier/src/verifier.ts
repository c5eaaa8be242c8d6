// The driver loop (`do_check`): explores every path of the program over register and stack
// states from the initial state, one instruction at a time (`step` dispatches it to its check
// family under check/), and owns what a run keeps: per-instruction tables, counters, the log.
// The families are functions over `this: Verifier` installed on the prototype below, so a
// check reads like a method and one family's file holds all of its code.

import { type Cfg, buildCfg } from './cfg.js';
import { aluChecks } from './check/alu.js';
import { branchesChecks } from './check/branches.js';
import { callsChecks } from './check/calls.js';
import { helpersChecks } from './check/helpers.js';
import { memoryChecks } from './check/memory.js';
import { pruningChecks } from './check/pruning.js';
import { referencesChecks } from './check/references.js';
import { setByte, slotOf, stackChecks } from './check/stack.js';
import { VerifierError } from './errors.js';
import { type Checkpoint, type Path, Reject } from './exploration.js';
import { formatInsn, insnTextOf } from './insn-text.js';
import { DEFAULT_INSN_LIMIT, MAX_STACK_BYTES, MAX_STATES_PER_INSN } from './limits.js';
import { Cls, Mode, cls, mode } from './opcodes.js';
import type { Precision } from './precision.js';
import type { Program } from './program.js';
import { SCALAR_UNKNOWN, normalize } from './scalar.js';
import { Byte, type Frame, type LiveRegs, NOT_INIT, type Reg, RegType, type State, ZERO_OFFSET, constReg, curFrame, formatState, notInitRegs, pointerReg, scalarReg } from './state.js';
import { U64 } from './tnum.js';
import type { ContextSpec, Diagnostic, FieldAccess, InitialReg, MapDef, VerifyOptions, VerifyResult } from './types.js';

/** Placeholders until run() sizes the per-instruction tables (no typed array per Verifier). */
const NO_INT32 = new Int32Array(0);
const NO_UINT8 = new Uint8Array(0);

/** Every check family's methods (each family's file holds their code). */
type Checks = typeof pruningChecks &
  typeof branchesChecks &
  typeof aluChecks &
  typeof memoryChecks &
  typeof stackChecks &
  typeof helpersChecks &
  typeof callsChecks &
  typeof referencesChecks;

// Declares the installed methods on Verifier (interface and class merge into one type).
export interface Verifier extends Checks {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface above declares the check families' methods, installed on the prototype after the class
export class Verifier implements LiveRegs {
  readonly privileged: boolean;
  readonly allowUninitStack: boolean;
  readonly context: ContextSpec;
  readonly insnLimit: number;
  readonly deadline: number;
  readonly logLevel: number;
  readonly logLimit: number;
  readonly log: string[] = [];
  readonly coverage: Uint8Array;
  /** Fully explored states per instruction (pruning). */
  complete: (Checkpoint[] | undefined)[] = [];
  /** Stored states by exact key, per instruction (infinite-loop detection). */
  byKey: (Map<number, Checkpoint> | undefined)[] = [];
  /**
   * Per instruction with many stored states (a long loop): a bit per key value (its low
   * `KEY_FILTER_BITS` bits) set for every key stored there. A clear bit means no state with that
   * key, which saves looking the key up in a large Map (cache misses on every loop iteration);
   * bits are never cleared, so a set bit only means "look".
   */
  keyFilter: (Uint32Array | undefined)[] = [];
  /** Stored states still being explored, per instruction. */
  inProgress = NO_INT32;
  /** 1 at the first instruction of a callback (`cfg.callbackEntries`). */
  callbackEntry = NO_UINT8;
  readonly accesses = new Map<string, FieldAccess>();
  /** probe_read* calls with a scalar source address: insn → helper id. */
  readonly outsideReads = new Map<number, number>();
  cfg!: Cfg;
  /** Scalars that can still decide something, per instruction (null: all of them). */
  precision: Precision | null | undefined = undefined;
  stackDepth: number[] = [];
  nextId = 0;
  processed = 0;
  jumps = 0;
  lastAddProcessed = 0;
  lastAddJumps = 0;
  states = 0;
  liveStates = 0;
  peakStates = 0;
  pruned = 0;
  /** Scalars widened at callback-loop entries (see `widenLoopScalars`). */
  widenings = 0;
  readonly warnings: Diagnostic[] = [];
  readonly warnedAt = new Set<number>();
  /** A prune succeeded only because some scalar was compared as imprecise. */
  reliedOnPrecision = false;

  constructor(
    readonly p: Program,
    readonly options: VerifyOptions,
    /** Precision and callback-loop widening (`VerifyOptions.precision`). */
    readonly usePrecision: boolean,
    /** Conditional jumps known to be decided by a value (1), shared with later runs. */
    readonly decided: Uint8Array,
    readonly started: number,
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

  diagnostic(insnIndex: number, message: string): Diagnostic {
    const insnText = insnIndex >= 0 && insnIndex < this.p.length ? insnTextOf(this.p, insnIndex) : '';
    return { insnIndex, insnText, message };
  }

  emit(line: string): void {
    if (this.logLevel > 0 && this.log.length < this.logLimit) this.log.push(line);
  }

  reject(insnIndex: number, message: string): never {
    throw new Reject(insnIndex, message);
  }

  initialState(): State {
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

  initialReg(init: InitialReg): Reg {
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

  mapDef(index: number, insnIndex: number): MapDef {
    const maps = this.options.maps;
    const def = maps === undefined ? undefined : 'get' in maps ? maps.get(index) : maps[index];
    if (!def) this.reject(insnIndex, `fd ${index} is not pointing to valid bpf_map`);
    return def;
  }

  explore(): void {
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

  liveState: State | null = null;
  liveInsn = 0;
  /** Registers that may still be read in frame f of `liveState` at `liveInsn` (`LiveRegs`). */
  liveRegs(f: number): number {
    const live = this.cfg.liveIn;
    const state = this.liveState!;
    if (f === state.frames.length - 1) return live[this.liveInsn]!;
    const callsite = state.frames[f + 1]!.callsite;
    return (live[callsite + 1]! & ~0x3f) | (1 << 10);
  }

  /** Paths a helper call forks off (pushed to the work list with the current checkpoint). */
  readonly pendingPaths: Path[] = [];

  newId(): number {
    return ++this.nextId;
  }

  /** Executes instruction i on `s` in place; returns the next instruction or -1 at the end of a path. */
  step(s: State, i: number, work: Path[], ckpt: Checkpoint | null): number {
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
  imm64: (Reg | undefined)[] = [];
  imm32: (Reg | undefined)[] = [];

  /** The immediate of instruction i: sign-extended (64-bit operations) or zero-extended (32-bit). */
  immReg(i: number, is32: boolean): Reg {
    const cache = is32 ? this.imm32 : this.imm64;
    let r = cache[i];
    if (r === undefined) {
      r = constReg(is32 ? BigInt(this.p.imm[i]! >>> 0) : BigInt(this.p.imm[i]!));
      cache[i] = r;
    }
    return r;
  }

  regs(s: State): Reg[] {
    return curFrame(s).regs;
  }

  readReg(s: State, i: number, r: number): Reg {
    const reg = this.regs(s)[r]!;
    if (reg.type === RegType.notInit) this.reject(i, `R${r} !read_ok`);
    return reg;
  }

  writeReg(s: State, i: number, r: number, value: Reg): void {
    if (r === 10) this.reject(i, 'frame pointer is read only');
    this.regs(s)[r] = value;
  }
}

Object.assign(Verifier.prototype, pruningChecks, branchesChecks, aluChecks, memoryChecks, stackChecks, helpersChecks, callsChecks, referencesChecks);
