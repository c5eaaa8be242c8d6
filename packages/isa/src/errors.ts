/**
 * Stable codes of {@link IsaError}. Callers branch on these, never on message text.
 *
 * Binary input: `truncated`, `incomplete-lddw`, `unknown-opcode`, `reserved-field`, `invalid-field`,
 * `invalid-register`. Text input: `syntax`, `unknown-mnemonic`, `operand-count`, `invalid-operand`,
 * `out-of-range`, `unknown-label`, `duplicate-label`, `unknown-map`, `duplicate-map`, `unknown-field`,
 * `unknown-helper`, `empty-program`, `unknown-directive`. Both: `unsupported`.
 */
export type IsaErrorCode =
  | 'truncated'
  | 'incomplete-lddw'
  | 'unknown-opcode'
  | 'reserved-field'
  | 'invalid-field'
  | 'invalid-register'
  | 'syntax'
  | 'unknown-mnemonic'
  | 'operand-count'
  | 'invalid-operand'
  | 'out-of-range'
  | 'unknown-label'
  | 'duplicate-label'
  | 'unknown-map'
  | 'duplicate-map'
  | 'unknown-field'
  | 'unknown-helper'
  | 'unknown-directive'
  | 'empty-program'
  | 'unsupported';

/** Where an {@link IsaError} happened: an instruction (binary input) or a line and column (text, 1-based). */
export interface IsaErrorContext {
  insnIndex?: number;
  byteOffset?: number;
  line?: number;
  column?: number;
  cause?: unknown;
}

/**
 * The one error class of `@probeyard/isa`. The message is lowercase "what: detail" with the numbers in
 * it; for text input it starts with "line L, column C: ".
 */
export class IsaError extends Error {
  readonly code: IsaErrorCode;
  readonly insnIndex: number | undefined;
  readonly byteOffset: number | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(code: IsaErrorCode, message: string, context: IsaErrorContext = {}) {
    const where =
      context.line !== undefined
        ? `line ${context.line}, column ${context.column ?? 1}: `
        : context.insnIndex !== undefined
          ? `instruction ${context.insnIndex} (byte ${context.byteOffset ?? context.insnIndex * 8}): `
          : '';
    super(`${where}${message}`, context.cause === undefined ? undefined : { cause: context.cause });
    this.name = 'IsaError';
    this.code = code;
    this.insnIndex = context.insnIndex;
    this.byteOffset = context.byteOffset;
    this.line = context.line;
    this.column = context.column;
  }
}

/** Whether `err` is an {@link IsaError}, optionally with the given code. */
export function isIsaError(err: unknown, code?: IsaErrorCode): err is IsaError {
  return err instanceof IsaError && (code === undefined || err.code === code);
}
