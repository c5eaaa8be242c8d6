// The agent's log: one JSON object per line on stderr. Secrets never reach it: every string that
// looks like a Probeyard credential or token (`pya_…`, `pye_…`, `pyt_…`) is masked, whatever the
// caller passed.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type Logger = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;

const secretPattern = /\bpy[a-z]_[A-Za-z0-9_-]{16,}/g;

/** `pya_abc…` → `pya_…` (the kind stays, so a log still says which secret was meant). */
export function redact(text: string): string {
  return text.replace(secretPattern, (s) => `${s.slice(0, 4)}…`);
}

function clean(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redact(value);
  if (value instanceof Error) return redact(value.message);
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object' || depth > 4) return value;
  if (Array.isArray(value)) return value.map((v) => clean(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clean(v, depth + 1)]));
}

const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** A JSON-lines logger writing to `write` (stderr by default) from `minLevel` up. */
export function jsonLogger(options: { minLevel?: LogLevel; write?: (line: string) => void } = {}): Logger {
  const min = order[options.minLevel ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  return (level, msg, fields = {}) => {
    if (order[level] < min) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level, msg: redact(msg), ...(clean(fields) as object) })}\n`);
  };
}

export const silentLogger: Logger = () => {};
