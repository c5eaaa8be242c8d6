import { z } from 'zod';
import { FORMATS_FOR_LIMIT, formatsFor } from '../../data/kernel-formats-for.js';
import { idSchema, slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';

/** `system:event` or `system/event`; `*` and `?` as bpftrace's wildcards. */
const eventPattern = z.string().regex(/^[\w*?.-]+[:/][\w*?.-]+$/, 'an event is system:event (wildcards * and ?)').max(128);

export const kernelFormatsForInput = z.union([
  z.strictObject({ agentId: idSchema, events: z.array(eventPattern).min(1).max(32) }),
  z.strictObject({ profile: slugSchema, events: z.array(eventPattern).min(1).max(32) }),
]);
export const kernelFormatsForOutput = z.object({
  /** Null when the agent has not reported its kernel yet. */
  profile: z.object({ name: z.string(), release: z.string(), machine: z.string(), complete: z.boolean(), contentHash: z.string() }).nullable(),
  formats: z.array(z.object({ system: z.string(), event: z.string(), text: z.string() })).max(FORMATS_FOR_LIMIT),
  missing: z.array(z.string()),
  truncated: z.boolean(),
});

/**
 * `kernel.formatsFor` (viewer): the format files of the events a program names, in a profile of
 * the tenant or the one an agent of the tenant reported — what the live editor compiles, verifies
 * and relocates against in the browser. At most 64 formats; another tenant's agent or profile is
 * `NOT_FOUND`.
 */
export const kernelFormatsFor = userProcedure('viewer')
  .input(kernelFormatsForInput)
  .output(kernelFormatsForOutput)
  .query(({ ctx, input }) => formatsFor(ctx.db, ctx.tenantId, 'agentId' in input ? { agentId: input.agentId } : { profile: input.profile }, input.events));
