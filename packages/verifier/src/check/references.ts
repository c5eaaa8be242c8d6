// References (`acquire_reference_state`, `release_reference`, `check_reference_leak`): a
// ring-buffer reservation is a reference the program must release (submit or discard) on every
// path before it exits. A null check that finds the pointer null drops it too (`markNull`,
// branches.ts); `BPF_LD_[ABS|IND]` refuses to run while one is held (`ldAbs`, memory.ts); a helper
// takes at most one referenced argument (`callHelper`, helpers.ts).

import { isConst, constValue } from '../scalar.js';
import { NOT_INIT, type Reg, RegType, type State, UNKNOWN_SCALAR, mapAllRegs, pointerReg } from '../state.js';
import type { Verifier } from '../verifier.js';

/** A new reference for the memory a ring-buffer reservation returns (maybe null, `allocSize` bytes). */
export function acquireRingbufRef(this: Verifier, s: State, i: number, allocSize: number): Reg {
  // the kernel spends one id on the reference state and numbers the pointer after it
  this.newId();
  const id = this.newId();
  s.refs = [...s.refs, { id, insnIndex: i }];
  return pointerReg(RegType.ringbufMem, { maybeNull: true, id, refId: id, aux: allocSize });
}

/** Argument r of a release helper (`OBJ_RELEASE`): the unmodified, held reference; returns its id. */
export function releaseArg(this: Verifier, s: State, i: number, r: number, reg: Reg): number {
  if (reg.type !== RegType.ringbufMem || reg.maybeNull) this.typeMismatch(i, r, reg, 'ringbuf_mem');
  if (reg.off !== 0 || !isConst(reg.v) || constValue(reg.v) !== 0n) {
    this.reject(i, `R${r} must have zero offset when passed to release func`);
  }
  if (!s.refs.some((ref) => ref.id === reg.refId)) {
    this.reject(i, `R${r} must be referenced when passed to release function`);
  }
  return reg.refId;
}

/** Releases reference `released`: every register holding it becomes unreadable (a scalar when privileged). */
export function releaseRef(this: Verifier, s: State, released: number): void {
  s.refs = s.refs.filter((ref) => ref.id !== released);
  mapAllRegs(s, (x) => (x.refId === released ? (this.privileged ? UNKNOWN_SCALAR : NOT_INIT) : x));
}

/** At the program's exit no reference may still be held (`check_reference_leak`). */
export function checkRefsReleased(this: Verifier, s: State, i: number): void {
  if (s.refs.length > 0) {
    const ref = s.refs[0]!;
    this.reject(i, `Unreleased reference id=${ref.id} alloc_insn=${ref.insnIndex}`);
  }
}

/** The references family's methods, installed on `Verifier`'s prototype (verifier.ts). */
export const referencesChecks = { acquireRingbufRef, releaseArg, releaseRef, checkRefsReleased };
