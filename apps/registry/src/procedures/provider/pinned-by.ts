import { z } from 'zod';
import { getProvider, versionsPinning } from '../../data/providers.js';
import { iso, isoDate, slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';

export const providerPinnedByInput = z.strictObject({ name: slugSchema });
export const providerPinnedByOutput = z.object({
  provider: z.string(),
  /** The tenant's program versions that pin the provider, by program name, newest version first. */
  versions: z.array(
    z.object({
      program: z.string(),
      version: z.string(),
      /** The major version pinned at publish: its newest non-yanked release is what the version resolves through. */
      major: z.number().int(),
      yanked: z.boolean(),
      publishedAt: isoDate,
    }),
  ),
  /** True when there are more than the versions listed. */
  more: z.boolean(),
});

/**
 * `provider.pinnedBy` (viewer): which of the tenant's programs (and versions) pin a provider it
 * sees, and which major each pins. Only the caller's tenant's programs, even for an instance-wide
 * provider other tenants use too; a provider the tenant does not see is `NOT_FOUND`.
 */
export const providerPinnedBy = userProcedure('viewer')
  .input(providerPinnedByInput)
  .output(providerPinnedByOutput)
  .query(async ({ ctx, input }) => {
    const p = await getProvider(ctx.db, ctx.tenantId, input.name);
    const r = await versionsPinning(ctx.db, ctx.tenantId, p.name);
    return { provider: p.name, versions: r.versions.map((v) => ({ ...v, major: Number(v.major), publishedAt: iso(v.publishedAt) })), more: r.more };
  });
