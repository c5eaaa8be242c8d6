// Branches and pruning, the branch half (`check_cond_jmp_op`): a conditional jump goes one way
// or both, each side with its registers refined (`reg_set_min_max`), null checks of maybe-null
// pointers (`mark_ptr_or_null_regs`) and packet ranges proven against pkt_end.

import { type Checkpoint, type Path, Restart } from '../exploration.js';
import { MAX_PACKET_OFF } from '../limits.js';
import { CallKind, Cls, Jmp, aluOp, cls, isSrcReg } from '../opcodes.js';
import { constValue, isConst, refineCompare, toSigned, viewOf, withView } from '../scalar.js';
import { type Reg, RegType, type State, cloneState, constReg, curFrame, formatState, isPointer, mapAllRegs, replaceState, setScalar } from '../state.js';
import { U32, U64 } from '../tnum.js';
import type { Verifier } from '../verifier.js';

/** `coverage` bits of a conditional jump: its fall-through and its jump were explored. */
const BRANCH_FALL = 2;
const BRANCH_JUMP = 4;

export function jump(this: Verifier, s: State, i: number, work: Path[], ckpt: Checkpoint | null): number {
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
export function decide(this: Verifier, i: number): void {
  if (this.decided[i] || !this.usePrecision) return;
  this.decided[i] = 1;
  if (this.precision === null) return; // not analysed: every scalar is precise anyway
  this.precision = undefined;
  if (this.reliedOnPrecision) throw new Restart();
}

/** The state after `dst op src` is `outcome`, or null when that cannot happen. */
export function refineBranch(this: Verifier, s: State, i: number, o: number, is32: boolean, outcome: boolean): State | null {
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
export function pointerBranch(this: Verifier, s: State, i: number, o: number, is32: boolean, d: Reg, src: Reg): [State | null, State | null] {
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
export function packetBranch(this: Verifier, s: State, o: number, d: Reg, src: Reg): [State | null, State | null] | null {
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
export function markPacketRange(this: Verifier, s: State, ptr: Reg, open: boolean): void {
  if (ptr.off < 0 || (ptr.off === 0 && open)) return;
  if (ptr.v.umax > BigInt(MAX_PACKET_OFF) || ptr.v.umax + BigInt(ptr.off) > BigInt(MAX_PACKET_OFF)) return;
  const range = open ? ptr.off + 1 : ptr.off;
  mapAllRegs(s, (r) => (r.type === ptr.type && r.id === ptr.id && r.aux < range ? { ...r, aux: range } : r));
}

/** Marks every copy of a maybe-null pointer null (becomes scalar 0) or non-null. */
export function markNull(this: Verifier, s: State, ptr: Reg, isNull: boolean): State {
  const id = ptr.id;
  mapAllRegs(s, (r) => {
    if (!r.maybeNull || r.id !== id) return r;
    return isNull ? constReg(0n) : { ...r, maybeNull: false };
  });
  if (isNull && ptr.refId) s.refs = s.refs.filter((ref) => ref.id !== ptr.refId);
  return s;
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

/** The branches family's methods, installed on `Verifier`'s prototype (verifier.ts). */
export const branchesChecks = { jump, decide, refineBranch, pointerBranch, packetBranch, markPacketRange, markNull };
