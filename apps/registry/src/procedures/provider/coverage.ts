import { type ProviderDefinition, providerKernelOf, resolveProviderProbe } from '@probeyard/compat';
import { z } from 'zod';
import { loadCompatProfileRows } from '../../data/compat.js';
import { compatProfileOf } from '../../data/compat-cell.js';
import { getProvider, getProviderVersion } from '../../data/providers.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { semverSchema } from '../program/publish.js';

export const providerCoverageInput = z.strictObject({
  name: slugSchema,
  /** Default: the newest version that is not yanked (else the newest). */
  version: semverSchema.optional(),
});
export const providerCoverageOutput = z.object({
  provider: z.string(),
  version: z.string(),
  /** One row per kernel profile of the tenant (by name), one cell per probe. */
  kernels: z.array(
    z.object({
      profile: z.string(),
      release: z.string(),
      complete: z.boolean(),
      probes: z.array(
        z.object({
          probe: z.string(),
          /** The implementation chosen there (its `for`), or null when none applies. */
          implementation: z.string().nullable(),
          status: z.enum(['resolved', 'incompatible', 'unknown']),
          /** Why no implementation applies, or why earlier ones did not. */
          reason: z.string(),
        }),
      ),
    }),
  ),
});

/**
 * `provider.coverage`: which implementation of each probe of a provider version serves each of the
 * tenant's kernel profiles (packages/compat `resolveProviderProbe` on the profile's formats of the
 * implementations' events), or why none does. Another tenant's provider is `NOT_FOUND`; only the
 * caller's profiles are read.
 */
export const providerCoverage = userProcedure('viewer')
  .input(providerCoverageInput)
  .output(providerCoverageOutput)
  .query(async ({ ctx, input }) => {
    const want = input.version;
    const { provider, version } = await (async () => {
      if (want !== undefined) return getProviderVersion(ctx.db, ctx.tenantId, input.name, want);
      const p = await getProvider(ctx.db, ctx.tenantId, input.name);
      const v = (p.versions.find((x) => x.yankedAt === null) ?? p.versions[0])?.version ?? '0.0.0';
      return getProviderVersion(ctx.db, ctx.tenantId, input.name, v);
    })();
    const def = version.definition as unknown as ProviderDefinition;
    const events = new Set(def.probes.flatMap((p) => p.implementations.flatMap((i) => [i.event, ...i.when.flatMap((c) => ('event' in c ? [c.event.slice(c.event.indexOf('/') + 1)] : []))])));
    const profiles = await ctx.db.kernelProfile.findMany({ where: { tenantId: ctx.tenantId }, orderBy: { name: 'asc' }, take: 500, select: { id: true, name: true, release: true, complete: true } });
    const kernels = [];
    for (const pr of profiles) {
      const kernel = providerKernelOf(compatProfileOf(await loadCompatProfileRows(ctx.db, pr.id, events)));
      const probes = def.probes.map((probe) => {
        const r = resolveProviderProbe(def, probe.name, kernel);
        if (r.ok) return { probe: probe.name, implementation: r.implementation, status: 'resolved' as const, reason: r.skipped.map((s) => `implementation for ${s.for}: ${s.reason}`).join('; ') };
        return { probe: probe.name, implementation: null, status: r.status, reason: r.reason };
      });
      kernels.push({ profile: pr.name, release: pr.release, complete: pr.complete, probes });
    }
    return { provider: provider.name, version: version.version, kernels };
  });
