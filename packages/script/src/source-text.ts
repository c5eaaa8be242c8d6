import type { ScriptDiagnostic, ScriptErrorCode, SourceSpan } from './errors.js';

/** A script's text with its line starts, to turn offsets into lines and columns. */
export class SourceText {
  private readonly lineStarts: number[] = [0];

  constructor(
    readonly text: string,
    /** Shown before `:line:column` in formatted diagnostics (`prog.bt`, `-e`). */
    readonly name = 'script',
  ) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
  }

  /** 1-based line and column of an offset (clamped to the text). */
  position(offset: number): { line: number; column: number } {
    const at = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: at - this.lineStarts[lo]! + 1 };
  }

  /** The text of a 1-based line, without its newline. */
  lineText(line: number): string {
    const start = this.lineStarts[line - 1] ?? this.text.length;
    const next = this.lineStarts[line];
    return this.text.slice(start, next === undefined ? this.text.length : next - 1).replace(/\r$/, '');
  }

  diagnostic(code: ScriptErrorCode, span: SourceSpan, message: string, hint?: string, severity: 'error' | 'warning' = 'error'): ScriptDiagnostic {
    const { line, column } = this.position(span.start);
    const d: ScriptDiagnostic = { code, severity, message, start: span.start, end: Math.max(span.end, span.start), line, column };
    if (hint !== undefined) d.hint = hint;
    return d;
  }
}

/**
 * A diagnostic as a compiler prints it: `name:line:column: error: message`, the line, a caret under
 * the place (with `~` along the rest of it on that line), and the hint.
 *
 * ```
 * prog.bt:1:43: error: unknown field 'ids' of raw_syscalls/sys_enter
 * tracepoint:raw_syscalls:sys_enter { @[args.ids] = count(); }
 *                                           ^~~
 * hint: raw_syscalls/sys_enter has the fields id, args (and common_type, common_flags, …)
 * ```
 */
export function formatDiagnostic(source: SourceText, d: ScriptDiagnostic): string {
  const lineText = source.lineText(d.line);
  const end = source.position(d.end);
  const width = Math.max(1, (end.line === d.line ? end.column : lineText.length + 1) - d.column);
  // keep tabs so the caret lines up under the same characters
  const lead = lineText.slice(0, d.column - 1).replace(/[^\t]/g, ' ');
  const caret = `${lead}^${'~'.repeat(Math.max(0, Math.min(width, lineText.length - d.column + 1) - 1))}`;
  const lines = [`${source.name}:${d.line}:${d.column}: ${d.severity}: ${d.message}`, lineText, caret];
  if (d.hint !== undefined) lines.push(`hint: ${d.hint}`);
  return `${lines.join('\n')}\n`;
}

/** All diagnostics, errors first in source order. */
export function formatDiagnostics(source: SourceText, diagnostics: readonly ScriptDiagnostic[]): string {
  return diagnostics.map((d) => formatDiagnostic(source, d)).join('');
}
