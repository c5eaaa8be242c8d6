import { z } from 'zod';
import { eventTail } from '../../data/output-store.js';
import { idSchema, iso, isoDate } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';

const cursorSchema = z.strictObject({ receivedAt: isoDate, id: idSchema });

export const outputEventsInput = z.strictObject({
  deploymentId: idSchema,
  targetId: idSchema.optional(),
  /** Only events whose text, map name or data contains this (case-insensitive). */
  filter: z.string().trim().max(200).regex(/^[^\p{Cc}]*$/u, 'no control characters').optional(),
  /** The `nextCursor` of the previous page (older events). */
  before: cursorSchema.optional(),
  limit: z.number().int().min(1).max(500).default(100),
});
export const outputEventsOutput = z.object({
  events: z.array(
    z.object({
      targetId: idSchema,
      sequence: z.number().int(),
      timeNs: z.string(),
      cpu: z.number().int(),
      source: z.string(),
      map: z.string().optional(),
      data: z.unknown().optional(),
      text: z.string().optional(),
    }),
  ),
  /** Events the agents dropped (over their bounds) in the batches read. */
  dropped: z.number().int(),
  nextCursor: cursorSchema.nullable(),
});

/** `output.events` (viewer): a deployment's newest output events, filtered, a page at a time. */
export const outputEvents = userProcedure('viewer')
  .input(outputEventsInput)
  .output(outputEventsOutput)
  .query(async ({ ctx, input }) => {
    const r = await eventTail(ctx.db, ctx.tenantId, {
      deploymentId: input.deploymentId,
      targetId: input.targetId,
      filter: input.filter || undefined,
      limit: input.limit,
      before: input.before ? { receivedAt: new Date(input.before.receivedAt), id: input.before.id } : undefined,
    });
    return { events: r.events, dropped: r.dropped, nextCursor: r.nextCursor ? { receivedAt: iso(r.nextCursor.receivedAt), id: r.nextCursor.id } : null };
  });
