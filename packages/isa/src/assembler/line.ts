import { IsaError, type IsaErrorCode } from '../errors.js';
import type { InstructionFields } from '../instruction.js';

/** One source line being assembled: its number, text, and an error factory that names line and column. */
export class SourceLine {
  constructor(
    /** 1-based line number. */
    readonly line: number,
    /** The text with the comment removed (columns still match the original line). */
    readonly text: string,
  ) {}

  /** An {@link IsaError} at a 1-based column of this line. */
  error(code: IsaErrorCode, message: string, column = this.firstColumn()): IsaError {
    return new IsaError(code, message, { line: this.line, column });
  }

  /** Column (1-based) of the first non-blank character. */
  firstColumn(): number {
    const m = /\S/.exec(this.text);
    return m ? m.index + 1 : 1;
  }

  /** Column (1-based) where `needle` first occurs at or after `from` (0-based), else the first column. */
  columnOf(needle: string, from = 0): number {
    const i = this.text.indexOf(needle, from);
    return i < 0 ? this.firstColumn() : i + 1;
  }
}

/** A symbolic tracepoint field operand in a memory reference (`[r1 + sched_switch.next_pid]`). */
export interface FieldOperand {
  event: string;
  field: string;
  /** A constant added to the field's offset (`[r1 + sched_switch.prev_comm + 4]`). */
  addend: number;
  column: number;
}

/** What a syntax parser makes of one instruction line; labels, maps and fields are resolved later. */
export interface ParsedInsn {
  fields: InstructionFields;
  /** A jump or call to a label, patched into `offset` or `imm` once every label is known. */
  target?: {
    label: string;
    into: 'offset' | 'imm';
    column: number;
    /** For `call NAME`: the helper id to use when NAME is not a label. */
    helperFallback?: number;
  };
  /** A symbolic field operand whose offset goes into `offset`. */
  field?: FieldOperand;
  /** An `lddw` of a map by name. */
  map?: { name: string; column: number };
}
