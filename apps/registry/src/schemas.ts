import { z } from 'zod';
import { roles } from './auth/roles.js';

/** Shared zod pieces of procedure inputs and outputs. Inputs are strict: unknown fields are refused. */

/*
 * What every input must be, whatever its procedure (checked on the raw input before its schema
 * runs, by `checkInput` in trpc.ts): text PostgreSQL can store, and bounded nesting.
 *
 * PostgreSQL's `text` refuses U+0000 (22021) and `jsonb` refuses `\u0000` and unpaired UTF-16
 * surrogates (22P05); a lone surrogate in `text` would silently become U+FFFD. Nothing in the API
 * needs either (agents cut kernel strings at their first NUL, as C reads them), so a string or an
 * object key that holds one is refused with a 400 that names the field.
 */

/** The deepest any input may nest (arrays and objects; an output payload has its own, lower, bound). */
export const maxInputDepth = 40;
/** The deepest an output batch's payload may nest (docs/OUTPUTS.md: real payloads nest 6 or 7 levels). */
export const maxPayloadDepth = 32;

const unstorable = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `s` cannot be stored as text, in words, or undefined when it can. */
export function unstorableText(s: string): string | undefined {
  const m = unstorable.exec(s);
  if (!m) return undefined;
  if (m[0] === '\u0000') return `contains a NUL character (U+0000) at character ${m.index}, which cannot be stored`;
  const unit = m[0].charCodeAt(0).toString(16).toUpperCase();
  return `contains a lone UTF-16 surrogate (U+${unit}) at character ${m.index}, which is not Unicode text and cannot be stored`;
}

/** How deep `value` nests: 0 for a scalar, 1 for `[]` or `{}`, … (iterative: no stack to overflow). */
export function nestingDepth(value: unknown, stopAbove = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    const here = d + 1;
    if (here > deepest) deepest = here;
    if (deepest > stopAbove) return deepest;
    for (const x of Array.isArray(v) ? v : Object.values(v)) if (x !== null && typeof x === 'object') stack.push([x, here]);
  }
  return deepest;
}

interface Frame {
  value: object;
  /** 1 for the input itself, 2 for what it holds, … */
  depth: number;
  parent: Frame | undefined;
  key: string | number;
}

function pathOf(f: Frame | undefined): (string | number)[] {
  const path: (string | number)[] = [];
  for (let x = f; x?.parent !== undefined; x = x.parent) path.push(x.key);
  return path.reverse();
}

const maybeUnstorable = /[\u0000\ud800-\udfff]/;
const problemOf = (s: string) => (maybeUnstorable.test(s) ? unstorableText(s) : undefined);

/**
 * A problem of a raw input (the first one met): where (a path) and what, in words; undefined when
 * there is none. Iterative (no stack to overflow), and it allocates only per array or object, since it runs
 * on every request (4 MiB of output batches included).
 */
export function checkInput(value: unknown, maxDepth = maxInputDepth): { path: (string | number)[]; message: string } | undefined {
  if (typeof value === 'string') {
    const problem = problemOf(value);
    return problem ? { path: [], message: problem } : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const stack: Frame[] = [{ value, depth: 1, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const f = stack.pop() as Frame;
    if (f.depth > maxDepth) return { path: [...pathOf(f).slice(0, 6), '…'], message: `nested more than ${maxDepth} levels deep (the limit is ${maxDepth})` };
    if (Array.isArray(f.value)) {
      const a = f.value as unknown[];
      for (let i = 0; i < a.length; i++) {
        const x = a[i];
        if (typeof x === 'string') {
          const problem = problemOf(x);
          if (problem) return { path: [...pathOf(f), i], message: problem };
        } else if (x !== null && typeof x === 'object') stack.push({ value: x, depth: f.depth + 1, parent: f, key: i });
      }
      continue;
    }
    const o = f.value as Record<string, unknown>;
    const keys = Object.keys(o);
    for (const k of keys) {
      const keyProblem = problemOf(k);
      if (keyProblem) return { path: pathOf(f), message: `a key ${keyProblem}` };
      const x = o[k];
      if (typeof x === 'string') {
        const problem = problemOf(x);
        if (problem) return { path: [...pathOf(f), k], message: problem };
      } else if (x !== null && typeof x === 'object') stack.push({ value: x, depth: f.depth + 1, parent: f, key: k });
    }
  }
  return undefined;
}

export const idSchema = z.string().uuid();
export const roleSchema = z.enum(roles);
export const emailSchema = z
  .string()
  .trim()
  .max(254)
  .email()
  .transform((s) => s.toLowerCase());
/** Tenant and program names: lowercase slug. */
export const slugSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'lowercase letters, digits, ".", "_" and "-", 1 to 63 characters, starting with a letter or digit');
export const passwordSchema = z.string().min(12, 'at least 12 characters').max(256);
/** A human label (token names, hostnames): printable, no control characters. */
export const labelSchema = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[^\p{Cc}]+$/u, 'no control characters');
/** Free text a person types (descriptions, reasons): up to `max` characters; control characters other than tab and newlines refused. */
export function textSchema(max: number) {
  return z
    .string()
    .max(max)
    .regex(/^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/, 'contains a control character (other than tab and newline)');
}
/**
 * Label keys, as Kubernetes has them: an optional DNS-subdomain prefix and `/`, then a name of 1
 * to 63 letters, digits, `-`, `_` and `.` that starts and ends with a letter or digit
 * (`env`, `kernel.release`, `probeyard.dev/zone`). Nothing path-like (`../x`, `/x`, `a//b`).
 */
export const maxLabelNameChars = 63;
export const maxLabelPrefixChars = 253;
const labelName = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const dnsSubdomain = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;
export const labelKeyRule =
  'an optional DNS prefix (lowercase, up to 253 characters) and "/", then a name of 1 to 63 letters, digits, "-", "_" and "." that starts and ends with a letter or digit';

/** Why `key` is not a label key, or undefined when it is one. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  const shown = JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > maxLabelPrefixChars || !dnsSubdomain.test(prefix))) {
    return `label key ${shown}: the prefix before "/" is not a DNS subdomain (lowercase letters, digits, "-" and ".", up to ${maxLabelPrefixChars} characters)`;
  }
  if (name.length === 0 || name.length > maxLabelNameChars || !labelName.test(name)) return `label key ${shown} is not ${labelKeyRule}`;
  return undefined;
}

/** Label values: up to 63 characters, no control characters, no "," or "=" (a selector could not match them), no space at either end. */
export const maxLabelValueChars = 63;
export function labelValueProblem(value: string): string | undefined {
  if (value.length > maxLabelValueChars) return `has ${value.length} characters, the limit is ${maxLabelValueChars}`;
  if (/[\p{Cc},=]/u.test(value)) return 'contains a control character, "," or "=" (a selector could not match it)';
  if (value.trim() !== value) return 'begins or ends with white space (a selector could not match it)';
  return unstorableText(value);
}

export const labelValueSchema = z.string().superRefine((v, ctx) => {
  const problem = labelValueProblem(v);
  if (problem) ctx.addIssue({ code: 'custom', message: `the value ${problem}` });
});
/** Agent labels: `{ "env": "prod" }` (at most 64). The same rules as selectors. */
export const maxLabels = 64;
export const labelsSchema = z.record(z.string(), labelValueSchema).superRefine((labels, ctx) => {
  const keys = Object.keys(labels);
  if (keys.length > maxLabels) ctx.addIssue({ code: 'custom', message: `${keys.length} labels, the limit is ${maxLabels}` });
  for (const k of keys) {
    const problem = labelKeyProblem(k);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }
});
export const isoDate = z.string().datetime();
export const listInput = z.strictObject({
  limit: z.number().int().min(1).max(500).default(100),
  /** The `nextCursor` of the previous page. */
  cursor: idSchema.optional(),
});

export function iso(d: Date): string;
export function iso(d: Date | null): string | null;
export function iso(d: Date | null): string | null {
  return d ? d.toISOString() : null;
}
