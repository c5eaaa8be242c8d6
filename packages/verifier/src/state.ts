// Abstract machine state: registers, stack slots and call frames (`struct bpf_reg_state`,
// `struct bpf_stack_state`, `struct bpf_func_state`, `struct bpf_verifier_state`). Registers
// and slots are immutable values; cloning a state copies arrays of references.

import {
  SCALAR_UNKNOWN,
  type Scalar,
  formatScalar,
  isConst,
  scalarConst,
  scalarCovers,
  scalarEquals,
  scalarRange,
} from './scalar.js';

/** Register types (`enum bpf_reg_type`), with the kernel's names for the log. */
export const RegType = {
  notInit: 0,
  scalar: 1,
  /** PTR_TO_CTX */
  ctx: 2,
  /** PTR_TO_STACK ("fp") */
  stack: 3,
  /** CONST_PTR_TO_MAP */
  mapPtr: 4,
  /** PTR_TO_MAP_VALUE */
  mapValue: 5,
  /** PTR_TO_MEM | MEM_RINGBUF */
  ringbufMem: 6,
  /** PTR_TO_FUNC: a subprogram's address (callbacks); `aux` is its first instruction */
  func: 7,
  /** PTR_TO_PACKET: `aux` is the range (bytes from the packet start checked against pkt_end for this `id`) */
  packet: 8,
  /** PTR_TO_PACKET_END */
  packetEnd: 9,
  /** PTR_TO_PACKET_META: `aux` is the range checked against the packet start */
  packetMeta: 10,
} as const;
export type RegType = (typeof RegType)[keyof typeof RegType];

const TYPE_NAMES = ['?', 'scalar', 'ctx', 'fp', 'map_ptr', 'map_value', 'ringbuf_mem', 'func', 'pkt', 'pkt_end', 'pkt_meta'];

export interface Reg {
  readonly type: RegType;
  /** PTR_MAYBE_NULL */
  readonly maybeNull: boolean;
  /** The value of a scalar, or the variable part of a pointer's offset. */
  readonly v: Scalar;
  /** The fixed part of a pointer's offset. */
  readonly off: number;
  /** Identity shared by copies: null checks and bounds propagate to every register with it. */
  readonly id: number;
  /** The acquired reference this pointer belongs to (ring-buffer reservations). */
  readonly refId: number;
  /** Map index (map_ptr, map_value), size in bytes (ringbuf_mem) or checked range (pkt, pkt_meta). */
  readonly aux: number;
  /** Frame number of a stack pointer. */
  readonly frame: number;
}

export const NOT_INIT: Reg = {
  type: RegType.notInit,
  maybeNull: false,
  v: SCALAR_UNKNOWN,
  off: 0,
  id: 0,
  refId: 0,
  aux: 0,
  frame: 0,
};
export const UNKNOWN_SCALAR: Reg = { ...NOT_INIT, type: RegType.scalar };
export const scalarReg = (v: Scalar): Reg => ({
  type: RegType.scalar,
  maybeNull: false,
  v,
  off: 0,
  id: 0,
  refId: 0,
  aux: 0,
  frame: 0,
});
export const constReg = (n: bigint): Reg => scalarReg(scalarConst(n));
export const ZERO_OFFSET = scalarConst(0n);
export const pointerReg = (type: RegType, fields: Partial<Reg> = {}): Reg => ({
  ...NOT_INIT,
  type,
  v: ZERO_OFFSET,
  ...fields,
});

export const isPointer = (r: Reg): boolean => r.type > RegType.scalar;

/** PTR_TO_PACKET or PTR_TO_PACKET_META: pointers whose `aux` is a range and whose `id` names the variable part. */
export const isPacketPointer = (r: Reg): boolean => r.type === RegType.packet || r.type === RegType.packetMeta;

/** The kernel's name of a register type (`map_value_or_null`, `fp`, `scalar`). */
export function regTypeName(r: Reg): string {
  if (r.type === RegType.notInit) return 'invalid';
  const base = TYPE_NAMES[r.type]!;
  return r.maybeNull ? `${base}_or_null` : base;
}

/** Kinds of a stack byte (`STACK_INVALID`, `STACK_SPILL`, `STACK_MISC`, `STACK_ZERO`). */
export const Byte = { invalid: 0, spill: 1, misc: 2, zero: 3 } as const;
const BYTE_CHARS = '?rm0';

/** One 8-byte stack slot (`struct bpf_stack_state`). */
export interface Slot {
  /** Kind of each byte, lowest address first. */
  readonly bytes: readonly number[];
  /** The spilled register when all 8 bytes are `spill`. */
  readonly spilled: Reg | null;
  /**
   * A narrow constant stored by an immediate at the slot's lowest address (`*(u32 *)(r10 - 8)
   * = 2`): Linux keeps it as a spilled constant of that size, a constant map key.
   */
  readonly narrow?: { readonly size: number; readonly value: bigint };
}

export const EMPTY_SLOT: Slot = { bytes: [0, 0, 0, 0, 0, 0, 0, 0], spilled: null };

export interface Frame {
  regs: Reg[];
  /** Slot k covers bytes [-8(k+1), -8k) of this frame. */
  stack: Slot[];
  /** Instruction index of the call that created this frame (-1 for the main program). */
  callsite: number;
  /** First instruction of the subprogram. */
  subprogStart: number;
  /** For a callback frame (`bpf_loop`): the context argument to pass again on the next iteration. */
  callbackCtx: Reg | null;
  /**
   * For a callback frame: further iterations Linux would still explore after this one (its
   * `callback_depth < nr_loops` maximum); 0 elsewhere.
   */
  loopsLeft: bigint;
}

export interface Ref {
  readonly id: number;
  readonly insnIndex: number;
}

export interface State {
  frames: Frame[];
  refs: Ref[];
}

export function cloneState(s: State): State {
  return {
    frames: s.frames.map((f) => ({
      regs: f.regs.slice(),
      stack: f.stack.slice(),
      callsite: f.callsite,
      subprogStart: f.subprogStart,
      callbackCtx: f.callbackCtx,
      loopsLeft: f.loopsLeft,
    })),
    refs: s.refs.slice(),
  };
}

const NO_SLOTS: Slot[] = [];
const NO_REFS: Ref[] = [];

/**
 * A copy of `s` that is only read, never run on (a stored checkpoint): empty stacks and
 * reference lists are shared instead of copied. A counted loop stores thousands of these, and
 * every object they keep is copied by each young-generation GC until it is promoted.
 */
export function snapshotState(s: State): State {
  // map sizes the array exactly (one grown by push keeps room for 17 frames)
  const frames = s.frames.map(
    (f): Frame => ({
      regs: f.regs.slice(),
      stack: f.stack.length === 0 ? NO_SLOTS : f.stack.slice(),
      callsite: f.callsite,
      subprogStart: f.subprogStart,
      callbackCtx: f.callbackCtx,
      loopsLeft: f.loopsLeft,
    }),
  );
  return { frames, refs: s.refs.length === 0 ? NO_REFS : s.refs.slice() };
}

export const curFrame = (s: State): Frame => s.frames[s.frames.length - 1]!;

/** Calls `fn` for every register and spilled register of every frame, allowing replacement. */
export function mapAllRegs(s: State, fn: (r: Reg) => Reg): void {
  for (const f of s.frames) {
    for (let i = 0; i < f.regs.length; i++) f.regs[i] = fn(f.regs[i]!);
    for (let k = 0; k < f.stack.length; k++) {
      const slot = f.stack[k]!;
      if (slot.spilled) {
        const r = fn(slot.spilled);
        if (r !== slot.spilled) f.stack[k] = { bytes: slot.bytes, spilled: r };
      }
    }
  }
}

function regEqual(a: Reg, b: Reg): boolean {
  return (
    a.type === b.type &&
    a.maybeNull === b.maybeNull &&
    a.off === b.off &&
    a.aux === b.aux &&
    a.frame === b.frame &&
    (a.id === 0) === (b.id === 0) &&
    (a.refId === 0) === (b.refId === 0) &&
    scalarEquals(a.v, b.v)
  );
}

/** Consistent renaming of ids between an old and a current state (`check_ids`). */
class IdMap {
  private readonly fwd = new Map<number, number>();
  private readonly back = new Map<number, number>();
  check(oldId: number, curId: number): boolean {
    if (oldId === 0 && curId === 0) return true;
    if (oldId === 0 || curId === 0) return false;
    const f = this.fwd.get(oldId);
    const b = this.back.get(curId);
    if (f === undefined && b === undefined) {
      this.fwd.set(oldId, curId);
      this.back.set(curId, oldId);
      return true;
    }
    return f === curId && b === oldId;
  }
}

/**
 * True when every concrete state of `cur` is a state of `old` for what can still be observed
 * (`regsafe`/`stacksafe`): registers in `live` (bit i = ri) compared, scalars by range inclusion
 * when `exact` is false. Scalar ids only matter for pointers (null checks).
 */
function regCovers(old: Reg, cur: Reg, exact: boolean, ids: IdMap, precise = true): boolean {
  if (exact) return regEqual(old, cur) && ids.check(old.id, cur.id) && ids.check(old.refId, cur.refId);
  if (old.type === RegType.notInit) return true;
  if (old.type !== cur.type) return false;
  if (old.type === RegType.scalar) {
    // a value that decides nothing from here on: any scalar will do
    if (!precise) return true;
    // registers linked by a scalar id in `old` were refined together there; `cur` must link them too
    if (old.id !== 0 && !ids.check(old.id, cur.id)) return false;
    return scalarCovers(old.v, cur.v);
  }
  if (isPacketPointer(old)) {
    // regsafe: the current pointer must be checked for at least as many bytes, with the same variable part
    if (old.off !== cur.off || old.aux > cur.aux || !ids.check(old.id, cur.id)) return false;
    return scalarCovers(old.v, cur.v);
  }
  if (old.maybeNull !== cur.maybeNull || old.off !== cur.off || old.aux !== cur.aux || old.frame !== cur.frame) {
    return false;
  }
  if (!scalarCovers(old.v, cur.v)) return false;
  if (old.maybeNull && !ids.check(old.id, cur.id)) return false;
  return ids.check(old.refId, cur.refId);
}

/** Every byte initialized and no pointer spilled: a scalar of some value. */
const isScalarSlot = (slot: Slot): boolean =>
  slot.spilled ? slot.spilled.type === RegType.scalar : slot.bytes.every((b) => b !== Byte.invalid);

/** No pointer spilled (scalar bytes, uninitialized bytes, or a spilled scalar). */
const holdsNoPointer = (slot: Slot): boolean => slot.spilled === null || slot.spilled.type === RegType.scalar;

function slotCovers(old: Slot, cur: Slot, exact: boolean, ids: IdMap, precise: boolean, uninitOk: boolean): boolean {
  if (old === cur) return true;
  // a narrow constant (a possible constant map key) is covered only by the same constant
  if ((exact || precise) && old.narrow && (cur.narrow?.size !== old.narrow.size || cur.narrow.value !== old.narrow.value)) return false;
  if (exact && cur.narrow && !old.narrow) return false;
  if (!exact && !precise) {
    // a slot whose value decides nothing: any scalar will do; where uninitialized stack may be
    // read (root), uninitialized bytes are just another unknown value (the kernel's stacksafe
    // skips slots not read later and lets STACK_MISC cover STACK_INVALID under allow_uninit_stack)
    if (uninitOk ? holdsNoPointer(old) && holdsNoPointer(cur) : isScalarSlot(old) && isScalarSlot(cur)) return true;
  }
  if (old.spilled) {
    if (!cur.spilled) {
      // an unknown spilled scalar covers plain initialized bytes
      if (!exact && old.spilled.type === RegType.scalar && scalarCovers(old.spilled.v, SCALAR_UNKNOWN)) {
        return cur.bytes.every((b) => b !== Byte.invalid);
      }
      return false;
    }
    return regCovers(old.spilled, cur.spilled, exact, ids);
  }
  for (let i = 0; i < 8; i++) {
    const o = old.bytes[i]!;
    const c = cur.bytes[i]!;
    if (o === c) continue;
    if (exact) return false;
    if (o === Byte.invalid) continue;
    if (o === Byte.misc && (c === Byte.zero || (c === Byte.spill && cur.spilled?.type === RegType.scalar))) continue;
    if (o === Byte.misc && c === Byte.invalid && uninitOk) continue;
    return false;
  }
  return true;
}

/** Precise registers and stack slots of one frame at one instruction (see precision.ts). */
export interface PreciseSet {
  regs: number;
  slotsLo: number;
  slotsHi: number;
}

/** The registers that may still be read in each frame (a bit set), for `stateCovers`. */
export interface LiveRegs {
  liveRegs(frameNo: number): number;
  /** Uninitialized stack may be read (root): such bytes are unknown values, not errors. */
  readonly allowUninitStack: boolean;
}

/** State subsumption at one instruction: `old` (fully explored) covers `cur`. */
export function stateCovers(
  old: State,
  cur: State,
  exact: boolean,
  live: LiveRegs,
  /** Per frame (index f), or null: every scalar precise. */
  precise: readonly PreciseSet[] | null = null,
): boolean {
  if (old.frames.length !== cur.frames.length || old.refs.length !== cur.refs.length) return false;
  const ids = new IdMap();
  for (let f = 0; f < old.frames.length; f++) {
    const of = old.frames[f]!;
    const cf = cur.frames[f]!;
    if (of.callsite !== cf.callsite) return false;
    // a callback frame covers only states with no more iterations left to explore
    if (exact ? of.loopsLeft !== cf.loopsLeft : of.loopsLeft < cf.loopsLeft) return false;
    const p = precise === null ? null : (precise[f] ?? null);
    const liveSet = live.liveRegs(f);
    for (let r = 0; r < 11; r++) {
      if (!exact && !(liveSet & (1 << r))) continue;
      if (!regCovers(of.regs[r]!, cf.regs[r]!, exact, ids, p === null || (p.regs & (1 << r)) !== 0)) return false;
    }
    const n = Math.max(of.stack.length, cf.stack.length);
    for (let k = 0; k < n; k++) {
      const precise = p === null || ((k < 32 ? p.slotsLo >>> k : p.slotsHi >>> (k - 32)) & 1) !== 0;
      if (!slotCovers(of.stack[k] ?? EMPTY_SLOT, cf.stack[k] ?? EMPTY_SLOT, exact, ids, precise, live.allowUninitStack)) return false;
    }
  }
  for (let i = 0; i < old.refs.length; i++) {
    if (!ids.check(old.refs[i]!.id, cur.refs[i]!.id)) return false;
  }
  return true;
}

/** One register as the kernel's log prints it (`R1=ctx()`, `R0=map_value_or_null(id=1,...)`). */
export function formatReg(r: Reg): string {
  if (r.type === RegType.scalar) {
    const s = formatScalar(r.v);
    return r.id && !isConst(r.v) ? s.replace('scalar(', `scalar(id=${r.id}${s.endsWith('()') ? '' : ','}`) : s;
  }
  const parts: string[] = [];
  if (r.id) parts.push(`id=${r.id}`);
  if (r.refId) parts.push(`ref_obj_id=${r.refId}`);
  if (r.type === RegType.mapPtr || r.type === RegType.mapValue) parts.push(`map=${r.aux}`);
  if (r.type === RegType.ringbufMem) parts.push(`sz=${r.aux}`);
  if (r.off) parts.push(`off=${r.off}`);
  if (isPacketPointer(r)) parts.push(`r=${r.aux}`);
  if (!isConst(r.v) || r.v.t.value !== 0n) parts.push(`var=${formatScalar(r.v)}`);
  return `${regTypeName(r)}(${parts.join(',')})`;
}

/** A frame as one log line (`R1=ctx() R10=fp0 fp-8=mmmmmmmm`). */
export function formatFrame(f: Frame): string {
  const out: string[] = [];
  f.regs.forEach((r, i) => {
    if (r.type === RegType.notInit) return;
    out.push(i === 10 && r.type === RegType.stack && r.off === 0 ? 'R10=fp0' : `R${i}=${formatReg(r)}`);
  });
  f.stack.forEach((slot, k) => {
    if (slot === EMPTY_SLOT || slot.bytes.every((b) => b === Byte.invalid)) return;
    const text = slot.spilled ? formatReg(slot.spilled) : slot.bytes.map((b) => BYTE_CHARS[b]).reverse().join('');
    out.push(`fp${-8 * (k + 1)}=${text}`);
  });
  return out.join(' ');
}

export function formatState(s: State): string {
  return s.frames.map((f, i) => (s.frames.length > 1 ? `frame${i}: ${formatFrame(f)}` : formatFrame(f))).join(' ');
}

// ---------------------------------------------------------------- shared by the check families

/** r0-r10 of a new frame, none written yet. */
export function notInitRegs(): Reg[] {
  return [NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT, NOT_INIT];
}

/** `reg` with value `v`; every other register linked to it by id gets `v` too. */
export function setScalar(out: State, reg: Reg, v: Scalar): Reg {
  const updated = { ...reg, v };
  if (reg.id === 0) return updated;
  mapAllRegs(out, (x) => (x.type === RegType.scalar && x.id === reg.id ? { ...x, v } : x));
  return updated;
}

export function replaceState(target: State, from: State): void {
  target.frames = from.frames;
  target.refs = from.refs;
}

/**
 * Unknown values of 1, 2 and 4 bytes (zero-extended): registers are immutable, so the loads and
 * 32-bit results that produce them share one each instead of normalizing a new range every time.
 */
export const UNKNOWN_BY_SIZE: readonly Reg[] = [1, 2, 4].map((size) => scalarReg(scalarRange(0n, (1n << BigInt(size * 8)) - 1n)));

export const UNKNOWN_U8 = UNKNOWN_BY_SIZE[0]!;

export const UNKNOWN_U16 = UNKNOWN_BY_SIZE[1]!;

export const UNKNOWN_U32 = UNKNOWN_BY_SIZE[2]!;

/** Fresh scalar of a load of `size` bytes (zero-extended). */
export function UNKNOWN_SCALAR_SIZED(size: number, kind: 'read' | 'write'): Reg {
  if (kind === 'write' || size >= 8) return UNKNOWN_SCALAR;
  return size === 1 ? UNKNOWN_U8 : size === 2 ? UNKNOWN_U16 : size === 4 ? UNKNOWN_U32 : scalarReg(scalarRange(0n, (1n << BigInt(size * 8)) - 1n));
}
