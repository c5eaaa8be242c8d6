import { z } from 'zod';
import { type DeploymentRow, desiredStateOf, type TargetRow } from '../../data/deployments.js';
import { idSchema, iso, isoDate, labelKeyProblem, labelValueProblem } from '../../schemas.js';

export const targetStatuses = ['pending', 'running', 'refused', 'failed', 'stopped'] as const;
export const desiredStates = ['running', 'stopped'] as const;

/**
 * A label selector as text: `k=v,k2=v2` (exact match of every pair against agent labels). Keys and
 * values follow the rules of agent labels (schemas.ts), so every selector can match some labels.
 */
export const selectorSchema = z
  .string()
  .trim()
  .min(1, 'a selector needs at least one k=v pair')
  .max(1000)
  .transform((text, ctx) => {
    const out: Record<string, string> = {};
    for (const part of text.split(',')) {
      const eq = part.indexOf('=');
      if (eq < 0) {
        ctx.addIssue({ code: 'custom', message: `selector: '${part}' is not k=v` });
        return z.NEVER;
      }
      const key = part.slice(0, eq).trim();
      const value = part.slice(eq + 1).trim();
      const keyProblem = labelKeyProblem(key);
      const valueProblem = labelValueProblem(value);
      if (keyProblem || valueProblem) {
        ctx.addIssue({ code: 'custom', message: `selector: ${keyProblem ?? `label ${key}: the value ${valueProblem}`}` });
        return z.NEVER;
      }
      if (key in out) {
        ctx.addIssue({ code: 'custom', message: `selector: key '${key}' given twice` });
        return z.NEVER;
      }
      out[key] = value;
    }
    return out;
  });

/** The most `.rodata` options one deployment may set. */
export const maxDeploymentOptions = 64;
const optionName = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const optionText = /^-?(0x[0-9a-fA-F]+|\d+)$/;

/**
 * A deployment's `.rodata` options: `{ filter_pid: "42", filter_failed: "true" }` (or JSON numbers
 * and booleans), by C variable name. Values are integers (decimal, `0x` hex, negative) or
 * `true`/`false`, stored as decimal text; whether each names a read-only variable of the version
 * and fits its size is checked against the version's spec when the deployment is made.
 */
export const deploymentOptionsSchema = z
  .record(z.string(), z.union([z.string().max(40), z.number(), z.boolean()]))
  .transform((raw, ctx) => {
    const entries = Object.entries(raw);
    if (entries.length > maxDeploymentOptions) {
      ctx.addIssue({ code: 'custom', message: `${entries.length} options, the limit is ${maxDeploymentOptions}` });
      return z.NEVER;
    }
    const out: Record<string, string> = {};
    for (const [name, value] of entries) {
      if (!optionName.test(name)) {
        ctx.addIssue({ code: 'custom', message: `option '${name.slice(0, 80)}' is not a C variable name (a letter or "_", then letters, digits and "_", up to 128)` });
        return z.NEVER;
      }
      if (typeof value === 'boolean') out[name] = String(value);
      else if (typeof value === 'number') {
        if (!Number.isSafeInteger(value)) {
          ctx.addIssue({ code: 'custom', message: `option ${name}: ${value} is not an integer that JSON carries exactly (give larger values as text)` });
          return z.NEVER;
        }
        out[name] = String(value);
      } else {
        const text = value.trim();
        if (text === 'true' || text === 'false') out[name] = text;
        else if (optionText.test(text)) out[name] = (text.startsWith('-') ? -BigInt(text.slice(1)) : BigInt(text)).toString();
        else {
          ctx.addIssue({ code: 'custom', message: `option ${name}: '${text}' is not an integer (decimal, 0x hex) or true/false` });
          return z.NEVER;
        }
      }
    }
    return out;
  });

/** `{filter_pid: "42", filter_failed: "true"}` → `filter_pid=42 filter_failed=true`. */
export function formatOptions(options: Record<string, string>): string {
  return Object.entries(options)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}

/** `{env: "prod", zone: "a"}` → `env=prod,zone=a`. */
export function formatSelector(selector: Record<string, string>): string {
  return Object.entries(selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

export const targetCountsView = z.object({
  total: z.number().int(),
  pending: z.number().int(),
  running: z.number().int(),
  refused: z.number().int(),
  failed: z.number().int(),
  stopped: z.number().int(),
});

export const deploymentView = z.object({
  id: idSchema,
  program: z.object({ name: z.string(), version: z.string() }),
  versionId: idSchema,
  digest: z.string(),
  selector: z.record(z.string(), z.string()),
  /** `env=prod,zone=a`. */
  selectorText: z.string(),
  /** `.rodata` options set before load, by variable name (decimal text or `true`/`false`; `{}` when none). */
  options: z.record(z.string(), z.string()),
  desiredState: z.enum(desiredStates),
  createdById: idSchema.nullable(),
  createdAt: isoDate,
  updatedAt: isoDate,
  targets: targetCountsView,
});
export type DeploymentView = z.infer<typeof deploymentView>;

export const targetView = z.object({
  id: idSchema,
  agentId: idSchema,
  hostname: z.string(),
  status: z.enum(targetStatuses),
  /** Running while the deployment runs and the agent still matches the selector. */
  desiredState: z.enum(desiredStates),
  reason: z.string().nullable(),
  /** The agent's last counters (`eventsSeen`, `eventsLost`, `runtimeNs`, `kernelReadsFailed`). */
  counters: z.record(z.string(), z.number()).nullable(),
  /** The agent's reason as data (`agent.reportStatus`'s `detail`: verdict, field moves, refusal, fault, limit). */
  statusDetail: z.record(z.string(), z.unknown()).nullable(),
  /** For a program pinning providers: which implementation the agent runs for each provider probe (its last report). */
  via: z.array(z.string()),
  createdAt: isoDate,
  updatedAt: isoDate,
});
export type TargetView = z.infer<typeof targetView>;

export function toDeploymentView(d: DeploymentRow, counts: Record<string, number> | undefined): DeploymentView {
  const c = counts ?? {};
  const selector = d.selector as Record<string, string>;
  return {
    id: d.id,
    program: { name: d.version.program.name, version: d.version.version },
    versionId: d.versionId,
    digest: d.version.digest,
    selector,
    selectorText: formatSelector(selector),
    // by name (jsonb keeps its own key order)
    options: Object.fromEntries(Object.entries((d.options ?? {}) as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    desiredState: d.desiredState,
    createdById: d.createdById,
    createdAt: iso(d.createdAt),
    updatedAt: iso(d.updatedAt),
    targets: {
      total: Object.values(c).reduce((a, b) => a + b, 0),
      pending: c.pending ?? 0,
      running: c.running ?? 0,
      refused: c.refused ?? 0,
      failed: c.failed ?? 0,
      stopped: c.stopped ?? 0,
    },
  };
}

export function toTargetView(t: TargetRow, d: DeploymentRow): TargetView {
  const detail = (t.detail ?? null) as { counters?: Record<string, number>; status?: Record<string, unknown> } | null;
  return {
    id: t.id,
    agentId: t.agentId,
    hostname: t.agent.hostname,
    status: t.status,
    desiredState: desiredStateOf(d, t.agent),
    reason: t.reason,
    counters: detail?.counters ?? null,
    statusDetail: detail?.status ?? null,
    via: Array.isArray(detail?.status?.via) ? (detail.status.via as unknown[]).filter((x): x is string => typeof x === 'string') : [],
    createdAt: iso(t.createdAt),
    updatedAt: iso(t.updatedAt),
  };
}
