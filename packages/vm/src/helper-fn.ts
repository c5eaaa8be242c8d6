// The shape of a helper and the pointer-argument check the helpers share.
import type { Vm } from './vm.js';

/** What the interpreter does after a helper returns. */
export const HelperAction = {
  /** Continue with the next instruction (r0 holds the helper's result). */
  next: 0,
  /** End the whole run now with the current r0 (uBPF's "unwind" helpers). */
  exit: 1,
  /** Continue in `vm.tailTarget` (bpf_tail_call succeeded). */
  tailCall: 2,
  /** Stop the run with the fault the helper recorded (`vm.helperFault`). */
  fault: 3,
} as const;
export type HelperAction = (typeof HelperAction)[keyof typeof HelperAction];

/**
 * A helper: reads its arguments from r1..r5 (`vm.regLo`/`vm.regHi`), writes its result to r0
 * (`vm.setReturn`), and tells the interpreter what to do next.
 */
export type HelperFn = (vm: Vm) => HelperAction;

/** Resolves pointer argument r`reg` to `size` bytes, or records a fault; returns the offset or -1. */
export function pointerArg(vm: Vm, reg: number, size: number, what: string): number {
  const lo = vm.regLo[reg] as number;
  const hi = vm.regHi[reg] as number;
  const at = vm.resolve(lo, hi, size);
  if (at < 0) vm.helperFault(`${what} (r${reg}): ${size} bytes are not inside one memory region`, [lo, hi]);
  return at;
}
