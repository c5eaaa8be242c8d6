import { z } from 'zod';
import { deleteProfile } from '../../data/kernels.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';

export const kernelDeleteInput = z.strictObject({ name: slugSchema });
export const kernelDeleteOutput = z.object({
  /** The deleted profile's id. */
  id: z.string(),
  /** Formats the profile had. */
  formats: z.number().int(),
});

/**
 * `kernel.delete` (publisher): deletes a profile of the tenant with its compat results; agents on
 * it have no profile until they report again. Formats no profile of any tenant uses any more are
 * collected (the count is not told: it would say what other tenants have). Another tenant's
 * profile is `NOT_FOUND`.
 */
export const kernelDelete = userProcedure('publisher')
  .input(kernelDeleteInput)
  .output(kernelDeleteOutput)
  .mutation(async ({ ctx, input }) => {
    const r = await deleteProfile(ctx.db, { tenantId: ctx.tenantId, actor: { kind: 'user', id: ctx.principal.userId }, name: input.name });
    return { id: r.id, formats: r.formats };
  });
