import { z } from 'zod';
import { listProfiles } from '../../data/kernels.js';
import { userProcedure } from '../../trpc.js';
import { kernelProfileView, toKernelProfileView } from './profile-view.js';

export const kernelListInput = z.strictObject({}).optional();
export const kernelListOutput = z.object({ profiles: z.array(kernelProfileView) });

/** `kernel.list`: the tenant's kernel profiles. */
export const kernelList = userProcedure('viewer')
  .input(kernelListInput)
  .output(kernelListOutput)
  .query(async ({ ctx }) => ({ profiles: (await listProfiles(ctx.db, ctx.tenantId)).map(toKernelProfileView) }));
