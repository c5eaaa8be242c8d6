/**
 * Stable codes of {@link FormatError}. Callers branch on these, never on message text.
 *
 * - `truncated`: the input ends before a structure it announces.
 * - `malformed`: bytes or text that do not follow the format.
 * - `out-of-range`: an offset, size or count points outside the input or past a limit.
 * - `unsupported`: a valid input using a feature this reader does not implement.
 * - `not-found`: a named thing (event, section, field, CPU) is absent.
 */
export type FormatErrorCode = 'truncated' | 'malformed' | 'out-of-range' | 'unsupported' | 'not-found';

/** Where in the input an error was found. */
export interface FormatErrorContext {
  /** Byte offset into the input being read. */
  byteOffset?: number;
  /** 1-based line of a text input. */
  line?: number;
  /** The file, section or structure being read ("trace.dat options", "section .BTF"). */
  section?: string;
  /** The event (system/name) concerned. */
  event?: string;
  cause?: unknown;
}

/**
 * The one error class of packages/formats. Messages are lowercase "what: detail" with the
 * numbers in them; each layer that rethrows adds one prefix.
 */
export class FormatError extends Error {
  readonly code: FormatErrorCode;
  readonly byteOffset: number | undefined;
  readonly line: number | undefined;
  readonly section: string | undefined;
  readonly event: string | undefined;

  constructor(code: FormatErrorCode, message: string, context: FormatErrorContext = {}) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.name = 'FormatError';
    this.code = code;
    this.byteOffset = context.byteOffset;
    this.line = context.line;
    this.section = context.section;
    this.event = context.event;
  }

  /** The same error with `prefix: ` in front of its message (one prefix per layer). */
  withPrefix(prefix: string): FormatError {
    const e = new FormatError(this.code, `${prefix}: ${this.message}`, {
      byteOffset: this.byteOffset,
      line: this.line,
      section: this.section,
      event: this.event,
      cause: this.cause,
    });
    e.stack = this.stack;
    return e;
  }
}

/** True when `e` is a {@link FormatError}, optionally with a given code. */
export function isFormatError(e: unknown, code?: FormatErrorCode): e is FormatError {
  return e instanceof FormatError && (code === undefined || e.code === code);
}
