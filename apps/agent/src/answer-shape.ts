// Checks of the registry's answers, before the agent acts on them: a registry (or something posing
// as one) that answers JSON of another shape gets a retryable `GARBAGE` error, never a crash or a
// half-applied answer. A few small combinators instead of a schema library: the agent's resident
// memory is a budget (zod alone costs it ~10 MiB of heap).

/** A check: undefined when `value` fits, else what is wrong with it (at `path`). */
export type Shape = (value: unknown, path: string) => string | undefined;

const at = (path: string) => path || 'answer';

export const str =
  (max: number, pattern?: RegExp): Shape =>
  (v, path) =>
    typeof v !== 'string' ? `${at(path)}: not a string` : v.length > max ? `${at(path)}: longer than ${max}` : pattern && !pattern.test(v) ? `${at(path)}: not ${pattern}` : undefined;

export const int =
  (min: number, max: number): Shape =>
  (v, path) =>
    typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max ? `${at(path)}: not an integer in [${min}, ${max}]` : undefined;

export const num =
  (min: number, max: number): Shape =>
  (v, path) =>
    typeof v !== 'number' || !(v >= min && v <= max) ? `${at(path)}: not a number in [${min}, ${max}]` : undefined;

export const bool: Shape = (v, path) => (typeof v !== 'boolean' ? `${at(path)}: not a boolean` : undefined);

export const oneOf =
  (...values: readonly unknown[]): Shape =>
  (v, path) =>
    values.includes(v) ? undefined : `${at(path)}: not one of ${values.map(String).join(', ')}`;

export const any: Shape = () => undefined;

export const obj =
  (fields: Record<string, Shape>): Shape =>
  (v, path) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return `${at(path)}: not an object`;
    for (const [k, check] of Object.entries(fields)) {
      const bad = check((v as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
      if (bad) return bad;
    }
    return undefined;
  };

export const arr =
  (item: Shape, max: number): Shape =>
  (v, path) => {
    if (!Array.isArray(v)) return `${at(path)}: not an array`;
    if (v.length > max) return `${at(path)}: more than ${max} items`;
    for (let i = 0; i < v.length; i++) {
      const bad = item(v[i], `${path}.${i}`);
      if (bad) return bad;
    }
    return undefined;
  };

/** An object of any keys (at most `max`) matching `key`, each value of `value`. */
export const rec =
  (key: RegExp, value: Shape, max: number): Shape =>
  (v, path) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return `${at(path)}: not an object`;
    const entries = Object.entries(v);
    if (entries.length > max) return `${at(path)}: more than ${max} keys`;
    for (const [k, x] of entries) {
      if (!key.test(k)) return `${at(path)}: key ${JSON.stringify(k.slice(0, 80))} is not ${key}`;
      const bad = value(x, path ? `${path}.${k}` : k);
      if (bad) return bad;
    }
    return undefined;
  };

/** `shape`, or absent (undefined). */
export const opt =
  (shape: Shape): Shape =>
  (v, path) =>
    v === undefined ? undefined : shape(v, path);

/** The first shape that fits (for a union told apart by a member, check that member first). */
export const either =
  (...shapes: Shape[]): Shape =>
  (v, path) => {
    let first: string | undefined;
    for (const s of shapes) {
      const bad = s(v, path);
      if (!bad) return undefined;
      first ??= bad;
    }
    return first;
  };
