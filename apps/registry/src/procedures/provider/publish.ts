import { z } from 'zod';
import { publishProvider } from '../../data/providers.js';
import { adminProcedure, userProcedure } from '../../trpc.js';
import { invalidatePinningAgents, providerVersionView, toProviderVersionView } from './provider-view.js';

/** The largest provider text accepted. */
export const maxProviderTextBytes = 256 * 1024;

export const providerPublishInput = z.strictObject({
  /** The provider's JSON text (packages/compat's provider format: name, semver version, probes with typed args and implementations). */
  text: z.string().min(1).max(maxProviderTextBytes),
});
export const providerPublishOutput = z.object({
  provider: z.string(),
  version: providerVersionView,
  /** False when this exact version with this exact text existed (nothing was written). */
  created: z.boolean(),
  /** Tenants whose verdicts are recomputed through it (the caller's own count for a tenant provider). */
  recomputedTenants: z.number().int(),
});

/**
 * `provider.publish` (publisher): a version of one of the tenant's providers. Immutable: the same
 * version with another text is `CONFLICT`, with the same text a no-op. A release of major M
 * recomputes the verdicts of the tenant's versions pinning it to M (a new implementation can turn
 * an incompatible cell compatible without the program being republished) and changes the
 * `agent.poll` answer of the tenant's agents running such programs (they restart those targets
 * through it; another tenant's agents are never touched). Malformed text is
 * `BAD_REQUEST` saying where.
 */
export const providerPublish = userProcedure('publisher')
  .input(providerPublishInput)
  .output(providerPublishOutput)
  .mutation(async ({ ctx, input }) => {
    const r = await publishProvider(ctx.db, { tenantId: ctx.tenantId, actor: { kind: 'user', id: ctx.principal.userId }, text: input.text });
    if (r.recomputed.length > 0) ctx.deps.compatJobs?.kick();
    invalidatePinningAgents(ctx.deps.fleet, r.agents, r.version.id);
    return { provider: JSON.parse(input.text).provider as string, version: toProviderVersionView(r.version), created: r.created, recomputedTenants: r.recomputed.length };
  });

/** `provider.publishInstance` (instance admin): a version of an instance-wide provider every tenant sees (the library's). */
export const providerPublishInstance = adminProcedure
  .input(providerPublishInput)
  .output(providerPublishOutput)
  .mutation(async ({ ctx, input }) => {
    const r = await publishProvider(ctx.db, { tenantId: null, actor: { kind: 'admin', id: ctx.principal.credentialId }, text: input.text });
    if (r.recomputed.length > 0) ctx.deps.compatJobs?.kick();
    invalidatePinningAgents(ctx.deps.fleet, r.agents, r.version.id);
    return { provider: JSON.parse(input.text).provider as string, version: toProviderVersionView(r.version), created: r.created, recomputedTenants: r.recomputed.length };
  });
