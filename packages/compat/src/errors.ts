/** Stable error codes of @probeyard/compat; callers branch on these, never on message text. */
export type CompatErrorCode =
  /** The input (an object, an assembly file, a spec's JSON, a profile) cannot be read. */
  | 'malformed'
  /** A named program, event or file does not exist. */
  | 'not-found'
  /** Valid input this package does not handle (big-endian objects, callbacks, externs). */
  | 'unsupported'
  /** A fixup does not fit the instruction it targets (the spec and the fixups disagree). */
  | 'invalid-fixup';

export interface CompatErrorContext {
  program?: string;
  insnIndex?: number;
  event?: string;
  field?: string;
  cause?: unknown;
}

/** The one error class of the package: lowercase "what: detail" messages with a stable `code`. */
export class CompatError extends Error {
  readonly code: CompatErrorCode;
  readonly program: string | undefined;
  readonly insnIndex: number | undefined;
  readonly event: string | undefined;
  readonly field: string | undefined;

  constructor(code: CompatErrorCode, message: string, context: CompatErrorContext = {}) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.name = 'CompatError';
    this.code = code;
    this.program = context.program;
    this.insnIndex = context.insnIndex;
    this.event = context.event;
    this.field = context.field;
  }

  /** The same error with `prefix: ` in front of the message (one prefix per layer). */
  withPrefix(prefix: string): CompatError {
    return new CompatError(this.code, `${prefix}: ${this.message}`, {
      program: this.program,
      insnIndex: this.insnIndex,
      event: this.event,
      field: this.field,
      cause: this.cause,
    });
  }
}

export function isCompatError(e: unknown): e is CompatError {
  return e instanceof CompatError;
}
