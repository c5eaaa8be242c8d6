// Text the registry can store. PostgreSQL refuses U+0000 and unpaired UTF-16 surrogates, and the
// registry answers a 400 for them; a status report refused that way would leave the target's
// status unreported. Status text (messages, reasons) keeps its words with U+FFFD in place of each
// such character; output payloads are C strings already (packages/runtime `cString`).

const unstorable = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `s` with every NUL and lone surrogate replaced by U+FFFD. */
export function storableText(s: string): string {
  return s.replace(unstorable, '\ufffd');
}

/** A JSON-like value with every string (and object key) made storable; the value itself when nothing changes. */
export function storableValue<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) return value.map(storableValue) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[storableText(k)] = storableValue(v);
  return out as T;
}
