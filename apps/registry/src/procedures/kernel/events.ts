import { z } from 'zod';
import { profileEvents } from '../../data/kernel-format.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';

export const kernelEventsInput = z.strictObject({
  profile: slugSchema,
  /** System or event name contains this. */
  q: z.string().trim().max(100).regex(/^[^\p{Cc}]*$/u, 'no control characters').optional(),
  offset: z.number().int().min(0).max(1_000_000).default(0),
  limit: z.number().int().min(1).max(500).default(200),
});
export const kernelEventsOutput = z.object({
  events: z.array(z.object({ system: z.string(), event: z.string(), formatHash: z.string() })),
  total: z.number().int(),
});

/** `kernel.events` (viewer): a page of a profile's events, by system and name. */
export const kernelEvents = userProcedure('viewer')
  .input(kernelEventsInput)
  .output(kernelEventsOutput)
  .query(({ ctx, input }) => profileEvents(ctx.db, ctx.tenantId, input.profile, { search: input.q || undefined, offset: input.offset, limit: input.limit }));
