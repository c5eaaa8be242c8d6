import { z } from 'zod';
import { outputSeries } from '../../data/output-store.js';
import { RegistryError } from '../../errors.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { displayView } from './output-view.js';

export const outputSeriesInput = z.strictObject({
  deploymentId: idSchema,
  targetId: idSchema.optional(),
  /** Range start and end, ISO 8601; the end defaults to now, the start to 15 minutes before the end. */
  from: z.string().datetime().optional(),
  to: z.string().datetime().optional(),
  buckets: z.number().int().min(1).max(1000).default(120),
});
export const outputSeriesOutput = z.object({
  from: z.number(),
  stepMs: z.number(),
  times: z.array(z.number()),
  eventsPerSecond: z.array(z.number()),
  eventsLost: z.array(z.number()),
  resets: z.number().int(),
  maps: z.array(
    z.object({
      name: z.string(),
      display: displayView,
      ratePerSecond: z.array(z.number().nullable()),
      heat: z.object({ labels: z.array(z.string()), counts: z.array(z.array(z.number())) }).optional(),
    }),
  ),
  truncated: z.boolean(),
  snapshots: z.number().int(),
});

/** The longest range one series covers. */
const maxRangeMs = 31 * 24 * 3600 * 1000;

/** `output.series` (viewer): rates per time bucket from a deployment's successive snapshots (run-id resets handled), with histogram heatmaps. */
export const outputSeriesProcedure = userProcedure('viewer')
  .input(outputSeriesInput)
  .output(outputSeriesOutput)
  .query(async ({ ctx, input }) => {
    const to = input.to ? new Date(input.to) : ctx.deps.now();
    const from = input.from ? new Date(input.from) : new Date(to.getTime() - 15 * 60_000);
    if (!(from < to)) throw new RegistryError('bad_request', `output series: from (${from.toISOString()}) must be before to (${to.toISOString()})`);
    if (to.getTime() - from.getTime() > maxRangeMs) throw new RegistryError('bad_request', `output series: a range of at most 31 days, not ${Math.round((to.getTime() - from.getTime()) / 86_400_000)}`);
    return outputSeries(ctx.db, ctx.tenantId, { deploymentId: input.deploymentId, targetId: input.targetId, from, to, buckets: input.buckets });
  });
