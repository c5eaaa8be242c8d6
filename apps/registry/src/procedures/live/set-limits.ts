import { z } from 'zod';
import { effectiveLiveLimits, setTenantLiveLimits } from '../../data/live-limits.js';
import { userProcedure } from '../../trpc.js';
import { liveLimitsView } from './limits.js';

const limit = (what: string) => z.number().int(`${what}: a whole number`).min(1, `${what}: at least 1`);

/** Any of the three; each at most its instance ceiling (checked against the server's, a 400 naming it). */
export const liveSetLimitsInput = z
  .strictObject({
    maxSessions: limit('maxSessions').optional(),
    maxDurationSeconds: limit('maxDurationSeconds').optional(),
    cpuBudgetPercent: limit('cpuBudgetPercent').max(100, 'cpuBudgetPercent: at most 100').optional(),
  })
  .refine((i) => i.maxSessions !== undefined || i.maxDurationSeconds !== undefined || i.cpuBudgetPercent !== undefined, 'give at least one of maxSessions, maxDurationSeconds, cpuBudgetPercent');

export const liveSetLimitsOutput = z.object({
  limits: liveLimitsView,
  ceilings: liveLimitsView,
  /** False when every value given was already the tenant's (nothing written, nothing audited). */
  changed: z.boolean(),
});

/**
 * `live.setLimits` (admin): changes the tenant's live limits, each at most the instance's ceiling.
 * Sessions running keep the duration and CPU budget they started with; the sessions started after
 * get the new limits (and a lower session count refuses new starts until enough have ended).
 * Audited `live.setLimits` with the values before and after.
 */
export const liveSetLimits = userProcedure('admin')
  .input(liveSetLimitsInput)
  .output(liveSetLimitsOutput)
  .mutation(async ({ ctx, input }) => {
    const ceilings = ctx.deps.liveCeilings;
    const r = await ctx.db.$transaction((tx) => setTenantLiveLimits(tx, ctx.tenantId, ctx.principal.userId, input, ceilings));
    return { limits: effectiveLiveLimits(r.limits, ceilings), ceilings, changed: r.changed };
  });
