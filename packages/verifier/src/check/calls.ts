// Calls and callbacks (`check_func_call`, `prepare_func_exit`, `bpf_loop`): BPF-to-BPF frames,
// callback frames and their iterations (with widening), and the checks at exit.

import type { Checkpoint, Path } from '../exploration.js';
import { MAX_CALL_FRAMES } from '../limits.js';
import { SCALAR_UNKNOWN, scalarEquals } from '../scalar.js';
import { NOT_INIT, type Reg, RegType, type State, UNKNOWN_SCALAR, UNKNOWN_U32, cloneState, curFrame, isPointer, notInitRegs, pointerReg } from '../state.js';
import type { Verifier } from '../verifier.js';

export function callSubprog(this: Verifier, s: State, i: number): number {
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

/**
 * Runs a `bpf_loop` callback as a frame of its own: r1 the iteration number, r2 the context.
 * When it returns, the loop either calls it again or ends (see `exit`).
 */
export function enterCallback(this: Verifier, s: State, i: number, start: number, ctx: Reg, loopsLeft: bigint): number {
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

export function exit(this: Verifier, s: State, i: number, work: Path[], ckpt: Checkpoint | null): number {
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
  this.checkRefsReleased(s, i);
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
export function widenLoopScalars(this: Verifier, next: State, ckpt: Checkpoint | null): void {
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

/** The widened register when a scalar changed between two loop entries (null: keep it). */
function widened(old: Reg, cur: Reg): Reg | null {
  if (old.type !== RegType.scalar || cur.type !== RegType.scalar) return null;
  if (scalarEquals(old.v, cur.v) || scalarEquals(cur.v, SCALAR_UNKNOWN)) return null;
  return UNKNOWN_SCALAR;
}

/** The calls family's methods, installed on `Verifier`'s prototype (verifier.ts). */
export const callsChecks = { callSubprog, enterCallback, exit, widenLoopScalars };
