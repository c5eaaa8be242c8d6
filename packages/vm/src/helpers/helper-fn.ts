// The helper calling convention: what a helper sees of the VM (`HelperHost`: r1..r5 in, r0 out,
// the memory model's address resolution, faults, the event's CPU, time and pid), the shape of a
// helper and the pointer-argument check the helpers share. Helpers import this, never vm.ts:
// `Vm` implements `HelperHost`, so the layers below the VM do not import it back.
import type { RegionKind } from '../errors.js';
import type { HelperEnvironment, VmOutput } from './helper-env.js';
import type { BpfMap } from '../maps/map.js';
import type { LoadedProgram } from '../program.js';

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

/** The part of the VM a helper uses (`Vm` implements it; see vm.ts and memory/vm-memory.ts for each member). */
export interface HelperHost {
  /** Low and high 32-bit halves of r0..r10: the arguments in r1..r5. */
  regLo: Int32Array;
  regHi: Int32Array;
  readonly maps: readonly BpfMap[];
  readonly environment: HelperEnvironment;
  readonly output: (output: VmOutput) => void;
  /** The region table: index = region id (high half of an address). */
  readonly regionBytes: Uint8Array[];
  readonly regionViews: DataView[];
  regionLength: Int32Array;
  /** The current event: CPU, timestamp halves (ns), `common_pid`. */
  cpu: number;
  timeLo: number;
  timeHi: number;
  pid: number;
  /** xorshift32 state of `bpf_get_prandom_u32`. */
  randomState: number;
  kernelReadsFailed: number;
  userReadsFailed: number;
  tailCalls: number;
  tailTarget: LoadedProgram | undefined;
  frame: number;
  readonly timestamp: bigint;
  /** Sets r0 from a small signed integer (helper return values, errnos). */
  setReturn(value: number): void;
  /** Sets r0 from its two 32-bit halves. */
  setReturn64(lo: number, hi: number): void;
  /** The byte offset in its region of `size` bytes at address (lo, hi), or -1. */
  resolve(lo: number, hi: number, size: number): number;
  regionOf(hi: number): RegionKind;
  /** Records a fault for the helper to return (`HelperAction.fault`). */
  helperFault(message: string, address?: [number, number]): HelperAction;
  /** The map pointer argument in r`reg`, or undefined after recording a fault. */
  mapArg(reg: number): BpfMap | undefined;
}

/**
 * A helper: reads its arguments from r1..r5 (`vm.regLo`/`vm.regHi`), writes its result to r0
 * (`vm.setReturn`), and tells the interpreter what to do next.
 */
export type HelperFn = (vm: HelperHost) => HelperAction;

/** Resolves pointer argument r`reg` to `size` bytes, or records a fault; returns the offset or -1. */
export function pointerArg(vm: HelperHost, reg: number, size: number, what: string): number {
  const lo = vm.regLo[reg] as number;
  const hi = vm.regHi[reg] as number;
  const at = vm.resolve(lo, hi, size);
  if (at < 0) vm.helperFault(`${what} (r${reg}): ${size} bytes are not inside one memory region`, [lo, hi]);
  return at;
}
