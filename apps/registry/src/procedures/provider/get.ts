import type { ProviderDefinition } from '@probeyard/compat';
import { z } from 'zod';
import { getProvider, getProviderVersion } from '../../data/providers.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { semverSchema } from '../program/publish.js';
import { providerProbeView, providerVersionView, providerView, toProbeViews, toProviderVersionView, toProviderView } from './provider-view.js';

export const providerGetInput = z.strictObject({
  name: slugSchema,
  /** Default: the newest version that is not yanked (else the newest). */
  version: semverSchema.optional(),
});
export const providerGetOutput = z.object({
  provider: providerView,
  version: providerVersionView,
  probes: z.array(providerProbeView),
  text: z.string(),
});

/** `provider.get`: a provider the tenant sees, one version's probes and implementations, and its text. Another tenant's is `NOT_FOUND`. */
export const providerGet = userProcedure('viewer')
  .input(providerGetInput)
  .output(providerGetOutput)
  .query(async ({ ctx, input }) => {
    const p = await getProvider(ctx.db, ctx.tenantId, input.name);
    const want = input.version ?? (p.versions.find((v) => v.yankedAt === null) ?? p.versions[0])?.version;
    const r = await getProviderVersion(ctx.db, ctx.tenantId, input.name, want ?? '0.0.0');
    return { provider: toProviderView(p), version: toProviderVersionView(r.version), probes: toProbeViews(r.version.definition as unknown as ProviderDefinition), text: r.version.text };
  });
