/**
 * Stable error codes of @probeyard/runtime; callers branch on these, never on message text.
 *
 * - `refused`: the spec cannot run on this kernel (its verdict is incompatible or unknown).
 * - `load-fault`: the relocated program does not load (the verifier or the VM refuses an
 *   instruction); the error names the program and the instruction.
 * - `malformed`: a payload, a hint or an argument is not what the contract says.
 * - `not-found`: a named target, map or program does not exist.
 * - `unsupported`: valid input this package does not handle.
 */
export type RuntimeErrorCode = 'refused' | 'load-fault' | 'malformed' | 'not-found' | 'unsupported';

export interface RuntimeErrorContext {
  program?: string;
  map?: string;
  insnIndex?: number;
  insnText?: string;
  /** A payload path (`maps[2].entries[0].key`) for `malformed`. */
  path?: string;
  cause?: unknown;
}

/** The one error class of the package: lowercase "what: detail" messages with a stable `code`. */
export class RuntimeError extends Error {
  readonly code: RuntimeErrorCode;
  readonly program: string | undefined;
  readonly map: string | undefined;
  readonly insnIndex: number | undefined;
  readonly insnText: string | undefined;
  readonly path: string | undefined;

  constructor(code: RuntimeErrorCode, message: string, context: RuntimeErrorContext = {}) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.name = 'RuntimeError';
    this.code = code;
    this.program = context.program;
    this.map = context.map;
    this.insnIndex = context.insnIndex;
    this.insnText = context.insnText;
    this.path = context.path;
  }
}

export function isRuntimeError(e: unknown, code?: RuntimeErrorCode): e is RuntimeError {
  return e instanceof RuntimeError && (code === undefined || e.code === code);
}
