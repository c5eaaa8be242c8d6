import { z } from 'zod';
import { effectiveLiveLimits, tenantLiveLimits } from '../../data/live-limits.js';
import { userProcedure } from '../../trpc.js';

/** A tenant's live limits, or the instance's ceilings over them (same fields). */
export const liveLimitsView = z.object({
  /** Live sessions running at once. */
  maxSessions: z.number().int(),
  /** Seconds a live session runs at most (and the longest `durationSeconds` of `live.start`). */
  maxDurationSeconds: z.number().int(),
  /** CPU budget of one session on each of its agents, in percent of one CPU. */
  cpuBudgetPercent: z.number().int(),
});

export const liveLimitsOutput = z.object({
  /** What `live.start` holds the tenant to: each its own limit, or the ceiling where that is lower. */
  limits: liveLimitsView,
  /** The most an admin may set each limit to (the operator's environment). */
  ceilings: liveLimitsView,
});

/** `live.limits` (viewer): the tenant's live limits and the instance's ceilings over them. */
export const liveLimits = userProcedure('viewer')
  .output(liveLimitsOutput)
  .query(async ({ ctx }) => ({ limits: effectiveLiveLimits(await tenantLiveLimits(ctx.db, ctx.tenantId), ctx.deps.liveCeilings), ceilings: ctx.deps.liveCeilings }));
