import { z } from 'zod';
import { listProfilesPage } from '../../data/kernel-format.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { kernelProfileView, toKernelProfileView } from './profile-view.js';

export const kernelListInput = z
  .strictObject({
    limit: z.number().int().min(1).max(500).default(500),
    /** The `nextCursor` of the previous page. */
    cursor: slugSchema.optional(),
  })
  .optional();
export const kernelListOutput = z.object({ profiles: z.array(kernelProfileView), nextCursor: z.string().nullable() });

/** `kernel.list`: the tenant's kernel profiles by name, a page at a time. */
export const kernelList = userProcedure('viewer')
  .input(kernelListInput)
  .output(kernelListOutput)
  .query(async ({ ctx, input }) => {
    const limit = input?.limit ?? 500;
    const rows = await listProfilesPage(ctx.db, ctx.tenantId, { cursor: input?.cursor, limit });
    return { profiles: rows.map(toKernelProfileView), nextCursor: rows.length === limit ? (rows.at(-1)?.name ?? null) : null };
  });
