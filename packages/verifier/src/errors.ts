/**
 * Stable codes of {@link VerifierError}. Callers branch on these, never on message text.
 * A program the verifier rejects is a result, not an error: these codes are for input that
 * cannot be verified at all.
 *
 * - `truncated`: the instruction bytes are not a whole number of 8-byte instructions, or an
 *   `lddw` is missing its second half at the end.
 * - `malformed`: an input structure that does not follow the format (a map definition with a
 *   negative size, an empty program).
 * - `out-of-range`: a program or option beyond a hard limit (more than 1,000,000 instructions).
 * - `unsupported`: a valid input using a feature this verifier does not implement.
 */
export type VerifierErrorCode = 'truncated' | 'malformed' | 'out-of-range' | 'unsupported';

/** Where in the input an error was found. */
export interface VerifierErrorContext {
  insnIndex?: number;
  byteOffset?: number;
  cause?: unknown;
}

/** The one error class of packages/verifier. Messages are lowercase "what: detail". */
export class VerifierError extends Error {
  readonly code: VerifierErrorCode;
  readonly insnIndex: number | undefined;
  readonly byteOffset: number | undefined;

  constructor(code: VerifierErrorCode, message: string, context: VerifierErrorContext = {}) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.name = 'VerifierError';
    this.code = code;
    this.insnIndex = context.insnIndex;
    this.byteOffset = context.byteOffset;
  }
}

/** True when `e` is a {@link VerifierError}, optionally with a given code. */
export function isVerifierError(e: unknown, code?: VerifierErrorCode): e is VerifierError {
  return e instanceof VerifierError && (code === undefined || e.code === code);
}
