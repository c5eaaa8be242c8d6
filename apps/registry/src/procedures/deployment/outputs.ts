import { z } from 'zod';
import { getDeployment } from '../../data/deployments.js';
import { listOutputs, outputKinds } from '../../data/output-store.js';
import { idSchema, iso, isoDate } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';

const cursorSchema = z.strictObject({ sequence: z.number().int().min(0), targetId: idSchema });

export const deploymentOutputsInput = z.strictObject({
  id: idSchema,
  /** Only this target's batches. */
  targetId: idSchema.optional(),
  /** The `nextCursor` of the previous page. */
  after: cursorSchema.optional(),
  limit: z.number().int().min(1).max(500).default(100),
});
export const outputBatchView = z.object({
  id: idSchema,
  targetId: idSchema,
  sequence: z.number().int(),
  kind: z.enum(outputKinds),
  payload: z.unknown(),
  eventsSeen: z.number().int(),
  eventsLost: z.number().int(),
  receivedAt: isoDate,
});
export const deploymentOutputsOutput = z.object({ batches: z.array(outputBatchView), nextCursor: cursorSchema.nullable() });

/** `deployment.outputs` (viewer): the output batches of a deployment's targets, by sequence. */
export const deploymentOutputs = userProcedure('viewer')
  .input(deploymentOutputsInput)
  .output(deploymentOutputsOutput)
  .query(async ({ ctx, input }) => {
    const d = await getDeployment(ctx.db, ctx.tenantId, input.id);
    const rows = await listOutputs(ctx.db, ctx.tenantId, { deploymentId: d.id, targetId: input.targetId, after: input.after, limit: input.limit });
    const last = rows.at(-1);
    return {
      batches: rows.map((r) => ({ ...r, kind: r.kind as (typeof outputKinds)[number], receivedAt: iso(r.receivedAt) })),
      nextCursor: rows.length === input.limit && last ? { sequence: last.sequence, targetId: last.targetId } : null,
    };
  });
