import { createHash } from 'node:crypto';
import type { RegistryDeps } from '../context.js';
import type { Db } from '../db/open.js';
import { type Assignment, loadAgentsAssignments, loadTenantAssignments } from '../data/deployments.js';
import type { CachedAssignments } from './fleet-state.js';

/** The ETag of an assignment list: its content hash, so every replica gives the same one. */
export function assignmentsEtag(assignments: Assignment[]): string {
  return createHash('sha256').update(JSON.stringify(assignments)).digest('base64url').slice(0, 27);
}

/** Every agent of a tenant with its assignments and their ETag, for the poll cache. */
export async function tenantAssignments(db: Db, tenantId: string): Promise<Map<string, CachedAssignments<Assignment[]>>> {
  const all = await loadTenantAssignments(db, tenantId);
  return new Map([...all].map(([id, assignments]) => [id, { etag: assignmentsEtag(assignments), assignments }]));
}

/** The given agents of a tenant with their assignments and ETags (one query), for the poll cache. */
export async function agentsAssignments(db: Db, tenantId: string, agentIds: readonly string[]): Promise<Map<string, CachedAssignments<Assignment[]>>> {
  const all = await loadAgentsAssignments(db, tenantId, agentIds);
  return new Map([...all].map(([id, assignments]) => [id, { etag: assignmentsEtag(assignments), assignments }]));
}

/**
 * Before serving: every unrevoked agent's credential and assignments in memory (a few queries per
 * tenant), so that a fleet polling a freshly started registry is answered from memory.
 */
export async function warmFleet(deps: RegistryDeps): Promise<{ agents: number; tenants: number }> {
  const agents = await deps.fleet.warmCredentials();
  const tenants = await deps.db.agent.groupBy({ by: ['tenantId'], where: { revokedAt: null } });
  for (const t of tenants) await deps.fleet.ensureTenantLoaded(t.tenantId, () => tenantAssignments(deps.db, t.tenantId));
  return { agents, tenants: tenants.length };
}
