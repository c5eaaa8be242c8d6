/** Stable error codes of @probeyard/script; callers branch on these, never on message text. */
export type ScriptErrorCode =
  /** The text is not the language: a bad token, a missing `}`, an unexpected word. */
  | 'syntax'
  /** A probe, event, field, map, variable or function the program names does not exist. */
  | 'not-found'
  /** Operands or arguments of the wrong type (a string where an integer is needed, …). */
  | 'type'
  /** Valid bpftrace that cannot exist without kernel BPF or is not in this language (kprobes, `kstack`). */
  | 'unsupported'
  /** Over a limit of the target: the 512-byte stack, a map key, a jump distance, the number of probes. */
  | 'limit'
  /** A script artifact (what `probeyard publish` stores) cannot be read. */
  | 'malformed'
  /** The compiler produced code the verifier refuses: a bug of this package, reported as such. */
  | 'internal';

/** Where a diagnostic points: offsets into the source (UTF-16 units), and 1-based line and column. */
export interface SourceSpan {
  start: number;
  end: number;
}

/** One problem found in a script, with its place, as a compiler reports it. */
export interface ScriptDiagnostic {
  code: ScriptErrorCode;
  severity: 'error' | 'warning';
  /** Lowercase "what: detail". */
  message: string;
  /** What to do about it, when there is something to say (the fields an event has, the supported form). */
  hint?: string;
  /** Offsets into the source; `end` > `start` except at the end of the text. */
  start: number;
  end: number;
  /** 1-based. */
  line: number;
  /** 1-based, in characters of the line. */
  column: number;
}

export interface ScriptErrorContext {
  diagnostics?: ScriptDiagnostic[];
  cause?: unknown;
}

/** The one error class of the package: lowercase "what: detail" messages with a stable `code`. */
export class ScriptError extends Error {
  readonly code: ScriptErrorCode;
  /** The diagnostics of a failed compile (`compileScriptOrThrow`, artifacts). */
  readonly diagnostics: ScriptDiagnostic[];

  constructor(code: ScriptErrorCode, message: string, context: ScriptErrorContext = {}) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.name = 'ScriptError';
    this.code = code;
    this.diagnostics = context.diagnostics ?? [];
  }
}

export function isScriptError(e: unknown): e is ScriptError {
  return e instanceof ScriptError;
}

/**
 * A compile error raised inside the compiler and turned into a {@link ScriptDiagnostic} at the
 * boundary (one per probe: the rest of the probe is not checked further).
 */
export class CompileAbort extends Error {
  constructor(
    readonly code: ScriptErrorCode,
    message: string,
    readonly span: SourceSpan,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'CompileAbort';
  }
}

/** Throws a {@link CompileAbort}: `fail('type', span, 'printf: …', 'hint')`. */
export function fail(code: ScriptErrorCode, span: SourceSpan, message: string, hint?: string): never {
  throw new CompileAbort(code, message, span, hint);
}
