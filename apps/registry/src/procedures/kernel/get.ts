import { z } from 'zod';
import { getProfileWithFormats } from '../../data/kernels.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { kernelProfileView, toKernelProfileView } from './profile-view.js';

export const kernelGetInput = z.strictObject({ name: slugSchema });
export const kernelGetOutput = z.object({
  profile: kernelProfileView,
  events: z.array(z.object({ system: z.string(), event: z.string(), formatHash: z.string() })),
});

/** `kernel.get`: one profile of the tenant and its events; another tenant's is `NOT_FOUND`. */
export const kernelGet = userProcedure('viewer')
  .input(kernelGetInput)
  .output(kernelGetOutput)
  .query(async ({ ctx, input }) => {
    const { formats, ...p } = await getProfileWithFormats(ctx.db, ctx.tenantId, input.name);
    return { profile: toKernelProfileView(p), events: formats };
  });
