/**
 * Stable codes of {@link VmError}. Callers branch on these, never on message text.
 *
 * - `invalid-program`: bytes that are not a program (length not a multiple of 8, empty, an
 *   instruction with reserved fields set, a jump outside the program, an unknown opcode).
 * - `unsupported`: a valid instruction or feature this VM does not implement (legacy packet
 *   `LD ABS`/`LD IND`, an unknown pseudo source of `lddw`).
 * - `unknown-helper`: a `call` names a helper id the VM does not provide.
 * - `invalid-map`: a map reference that does not exist, or a map spec that cannot be created.
 * - `fault`: a run stopped on a memory violation or another runtime error (see {@link VmFault}).
 * - `budget-exhausted`: a run executed more instructions than its budget.
 * - `invalid-argument`: an API call with an argument that cannot be used.
 */
export type VmErrorCode =
  | 'invalid-program'
  | 'unsupported'
  | 'unknown-helper'
  | 'invalid-map'
  | 'fault'
  | 'budget-exhausted'
  | 'invalid-argument';

/** Where in a program an error was found. */
export interface VmErrorContext {
  /** Index of the instruction (8-byte slot) concerned. */
  insnIndex?: number;
  /** The instruction's text (disassembly, or hex when no disassembler is available). */
  insnText?: string;
  cause?: unknown;
}

/**
 * The error class of packages/vm. Messages are lowercase "what: detail" with the numbers in
 * them; each layer that rethrows adds one prefix.
 */
export class VmError extends Error {
  readonly code: VmErrorCode;
  readonly insnIndex: number | undefined;
  readonly insnText: string | undefined;

  constructor(code: VmErrorCode, message: string, context: VmErrorContext = {}) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.name = 'VmError';
    this.code = code;
    this.insnIndex = context.insnIndex;
    this.insnText = context.insnText;
  }
}

/** The memory regions of a run (the high 32 bits of a VM address name one). */
export type RegionKind = 'none' | 'context' | 'stack' | 'map-value' | 'ringbuf' | 'global' | 'map';

/**
 * A run stopped on a runtime error: an out-of-bounds or unmapped memory access, a call stack
 * deeper than 8 frames, a helper misuse. Never a host crash: the VM checks before it touches
 * host memory.
 */
export class VmFault extends VmError {
  /** Instruction index of the faulting instruction. */
  readonly pc: number;
  /** The VM address accessed (64-bit, as a bigint for display), when the fault is a memory one. */
  readonly address: bigint | undefined;
  /** The region the address named, when it named one. */
  readonly region: RegionKind | undefined;

  constructor(
    message: string,
    pc: number,
    insnText: string,
    address?: bigint,
    region?: RegionKind,
    code: VmErrorCode = 'fault',
  ) {
    super(code, message, { insnIndex: pc, insnText });
    this.name = 'VmFault';
    this.pc = pc;
    this.address = address;
    this.region = region;
  }
}

/** True when `e` is a {@link VmError}, optionally with a given code. */
export function isVmError(e: unknown, code?: VmErrorCode): e is VmError {
  return e instanceof VmError && (code === undefined || e.code === code);
}
