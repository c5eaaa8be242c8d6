import type { ProviderDefinition } from '@probeyard/compat';
import { z } from 'zod';
import { INSTANCE_SCOPE, type providerSelect, type providerVersionSelect } from '../../data/providers.js';
import type { Prisma } from '../../generated/prisma/client.js';
import type { FleetState } from '../../fleet/fleet-state.js';
import { iso, isoDate } from '../../schemas.js';

export const providerVersionView = z.object({
  version: z.string(),
  digest: z.string(),
  publishedAt: isoDate,
  yankedAt: isoDate.nullable(),
  yankReason: z.string().nullable(),
});

export const providerView = z.object({
  name: z.string(),
  /** `tenant` (the tenant's own) or `instance` (instance-wide, e.g. the library's). */
  scope: z.enum(['tenant', 'instance']),
  description: z.string(),
  /** Newest first. */
  versions: z.array(providerVersionView),
});

/** A probe of a version's definition, with its implementations (tracepoint, conditions, argument expressions). */
export const providerProbeView = z.object({
  name: z.string(),
  args: z.array(z.object({ name: z.string(), type: z.enum(['int', 'string']) })),
  implementations: z.array(
    z.object({
      for: z.string(),
      tracepoint: z.string(),
      when: z.array(z.object({ field: z.string().optional(), event: z.string().optional(), kind: z.string().optional(), absent: z.boolean().optional() })),
      args: z.record(z.string(), z.string()),
    }),
  ),
});

export function toProviderVersionView(v: Prisma.ProviderVersionGetPayload<{ select: typeof providerVersionSelect }>): z.infer<typeof providerVersionView> {
  return { version: v.version, digest: v.digest, publishedAt: iso(v.publishedAt), yankedAt: iso(v.yankedAt), yankReason: v.yankReason };
}

export function toProviderView(p: Prisma.ProviderGetPayload<{ select: typeof providerSelect }>): z.infer<typeof providerView> {
  return { name: p.name, scope: p.scope === INSTANCE_SCOPE ? 'instance' : 'tenant', description: p.description, versions: p.versions.map(toProviderVersionView) };
}

export function toProbeViews(def: ProviderDefinition): z.infer<typeof providerProbeView>[] {
  return def.probes.map((p) => ({ name: p.name, args: p.args, implementations: p.implementations.map((i) => ({ for: i.for, tracepoint: `${i.system}/${i.event}`, when: i.when, args: i.args })) }));
}

/**
 * After a provider release or yank: the agents (by tenant) running programs that pin its major
 * get a new `agent.poll` answer at their next poll (its assignments list the release resolved
 * now). `auditTargetId` is the version's id, the audit row other replicas sync from.
 */
export function invalidatePinningAgents(fleet: FleetState, agents: ReadonlyMap<string, readonly string[]>, auditTargetId: string): void {
  for (const [tenantId, ids] of agents) fleet.invalidateAgents(tenantId, ids, auditTargetId);
}
