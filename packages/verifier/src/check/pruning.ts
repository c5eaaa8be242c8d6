// Branches and pruning, the pruning half (`is_state_visited`): states stored at prune points, a
// path cut when an explored state covers it, a loop that makes no progress refused, and the exact
// hashes that find equal states.

import type { Checkpoint } from '../exploration.js';
import { MAX_STATES_PER_INSN } from '../limits.js';
import { type Precision, computePrecision } from '../precision.js';
import type { Scalar } from '../scalar.js';
import { EMPTY_SLOT, type PreciseSet, type Reg, RegType, type Slot, type State, ZERO_OFFSET, snapshotState, stateCovers } from '../state.js';
import type { Verifier } from '../verifier.js';

/** Prune-point bookkeeping (`is_state_visited`). */
const NO_CHECKPOINTS: readonly never[] = [];
/** `keyFilter`: 2^17 bits (16 KiB), made for an instruction once 64 different keys are stored there. */
const KEY_FILTER_BITS = 17;
const KEY_FILTER_WORD_MASK = (1 << (KEY_FILTER_BITS - 5)) - 1;
const KEY_FILTER_FROM = 64;
/** Placeholders until run() sizes the per-instruction tables (no typed array per Verifier). */

export function visit(this: Verifier, state: State, i: number, ckpt: Checkpoint | null): Checkpoint | 'pruned' | null {
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
export function preciseFrames(this: Verifier, pr: Precision, state: State, i: number): PreciseSet[] {
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

export function endPath(this: Verifier, ckpt: Checkpoint | null): void {
  let c = ckpt;
  while (c) {
    c.branches--;
    if (c.branches > 0) break;
    this.completed(c);
    c = c.parent;
  }
}

/** Every in-progress state stored at instruction i. */
export function* byInsn(this: Verifier, i: number): Iterable<Checkpoint> {
  for (const head of this.byKey[i]?.values() ?? NO_CHECKPOINTS) {
    for (let c: Checkpoint | null = head; c; c = c.nextSame) yield c;
  }
}

/** A stored state whose every path has been explored: usable for pruning from now on. */
export function completed(this: Verifier, c: Checkpoint): void {
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

/** The pruning family's methods, installed on `Verifier`'s prototype (verifier.ts). */
export const pruningChecks = { visit, preciseFrames, endPath, byInsn, completed };
