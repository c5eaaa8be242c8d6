import { z } from 'zod';
import { listProviders } from '../../data/providers.js';
import { userProcedure } from '../../trpc.js';
import { providerView, toProviderView } from './provider-view.js';

export const providerListInput = z.strictObject({}).optional();
export const providerListOutput = z.object({ providers: z.array(providerView) });

/** `provider.list`: the providers the tenant sees — its own, and the instance-wide ones its own do not shadow. */
export const providerList = userProcedure('viewer')
  .input(providerListInput)
  .output(providerListOutput)
  .query(async ({ ctx }) => ({ providers: (await listProviders(ctx.db, ctx.tenantId)).map(toProviderView) }));
