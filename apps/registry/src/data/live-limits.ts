// A tenant's live-session limits (issue 18: sessions running at once, seconds each, the CPU budget
// each agent gives one) and the instance's ceilings over them, which the operator sets by
// environment. `live.start` reads the tenant's row (src/data/live.ts), so a change applies to the
// sessions started after it; a running session keeps the duration and budget it started with. A
// ceiling lowered below a tenant's stored limit holds that tenant to the ceiling (`effectiveLiveLimits`).
import type { Db } from '../db/open.js';
import { RegistryError } from '../errors.js';
import { writeAudit } from './audit.js';
import type { Tx } from './tx.js';

/** A tenant's live limits (`Tenant.liveMaxSessions`, `liveMaxDurationSeconds`, `liveCpuBudgetPercent`). */
export interface LiveLimits {
  maxSessions: number;
  maxDurationSeconds: number;
  cpuBudgetPercent: number;
}

/** The most an admin may set each limit of their tenant to: the instance's, set by its operator. */
export type LiveCeilings = LiveLimits;

export const defaultLiveCeilings: LiveCeilings = { maxSessions: 16, maxDurationSeconds: 3600, cpuBudgetPercent: 50 };

/** The environment variable of each ceiling, and the words a refusal names a value by. */
export const liveCeilingEnv = {
  maxSessions: { name: 'PROBEYARD_LIVE_MAX_SESSIONS_CEILING', words: (n: number) => `${n} live sessions at once`, unit: '' },
  maxDurationSeconds: { name: 'PROBEYARD_LIVE_DURATION_CEILING_SECONDS', words: (n: number) => `a duration of ${n} s`, unit: ' s' },
  cpuBudgetPercent: { name: 'PROBEYARD_LIVE_CPU_CEILING_PERCENT', words: (n: number) => `a CPU budget of ${n}%`, unit: '%' },
} as const satisfies Record<keyof LiveCeilings, { name: string; words: (n: number) => string; unit: string }>;

/** Hard bounds of a ceiling itself (a percentage is at most 100). */
const ceilingMax: LiveCeilings = { maxSessions: 1000, maxDurationSeconds: 86_400, cpuBudgetPercent: 100 };

/** The ceilings from the environment, each unset one its default; a value that is not a whole number in range fails the start. */
export function envLiveCeilings(env: NodeJS.ProcessEnv = process.env): LiveCeilings {
  const out = { ...defaultLiveCeilings };
  for (const key of Object.keys(liveCeilingEnv) as (keyof LiveCeilings)[]) {
    const { name } = liveCeilingEnv[key];
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const n = Number(raw);
    if (!(Number.isInteger(n) && n >= 1 && n <= ceilingMax[key])) {
      throw new RegistryError('bad_request', `${name}: a whole number from 1 to ${ceilingMax[key]}, not ${raw}`);
    }
    out[key] = n;
  }
  return out;
}

/** The limits a start uses: each the tenant's, or the ceiling when the operator lowered it below the tenant's. */
export function effectiveLiveLimits(limits: LiveLimits, ceilings: LiveCeilings | undefined): LiveLimits {
  if (!ceilings) return limits;
  return {
    maxSessions: Math.min(limits.maxSessions, ceilings.maxSessions),
    maxDurationSeconds: Math.min(limits.maxDurationSeconds, ceilings.maxDurationSeconds),
    cpuBudgetPercent: Math.min(limits.cpuBudgetPercent, ceilings.cpuBudgetPercent),
  };
}

/** The tenant's limits as stored (`setTenantLiveLimits` compares against these). */
export async function tenantLiveLimits(db: Db | Tx, tenantId: string): Promise<LiveLimits> {
  const t = await db.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { liveMaxSessions: true, liveMaxDurationSeconds: true, liveCpuBudgetPercent: true } });
  return { maxSessions: t.liveMaxSessions, maxDurationSeconds: t.liveMaxDurationSeconds, cpuBudgetPercent: t.liveCpuBudgetPercent };
}

/**
 * Sets some of a tenant's live limits, each at most its ceiling (else `bad_request` naming the
 * ceiling, and nothing written). Audited `live.setLimits` when something changed. Returns the
 * limits after, and whether they changed.
 */
export async function setTenantLiveLimits(
  tx: Tx,
  tenantId: string,
  userId: string,
  change: Partial<LiveLimits>,
  ceilings: LiveCeilings,
): Promise<{ limits: LiveLimits; changed: boolean }> {
  for (const key of Object.keys(liveCeilingEnv) as (keyof LiveCeilings)[]) {
    const v = change[key];
    if (v === undefined || v <= ceilings[key]) continue;
    const { name, words, unit } = liveCeilingEnv[key];
    throw new RegistryError('bad_request', `live limits: ${words(v)} is over the instance's ceiling of ${ceilings[key]}${unit} (${name})`, {
      limit: ceilings[key],
    });
  }
  // the row locked, so two admins' changes are each audited against what the other left
  await tx.$queryRaw`SELECT id FROM "Tenant" WHERE id = ${tenantId} FOR UPDATE`;
  const before = await tenantLiveLimits(tx, tenantId);
  const after: LiveLimits = { ...before, ...Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)) };
  const diff = (Object.keys(before) as (keyof LiveLimits)[]).filter((k) => before[k] !== after[k]);
  if (diff.length === 0) return { limits: before, changed: false };
  await tx.tenant.update({
    where: { id: tenantId },
    data: { liveMaxSessions: after.maxSessions, liveMaxDurationSeconds: after.maxDurationSeconds, liveCpuBudgetPercent: after.cpuBudgetPercent },
    select: { id: true },
  });
  await writeAudit(tx, {
    tenantId,
    actor: { kind: 'user', id: userId },
    action: 'live.setLimits',
    targetType: 'tenant',
    targetId: tenantId,
    detail: { before: Object.fromEntries(diff.map((k) => [k, before[k]])), after: Object.fromEntries(diff.map((k) => [k, after[k]])) },
  });
  return { limits: after, changed: true };
}
