import type { Db } from '../db/open.js';
import { notFound } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { Tx } from './tx.js';

export const agentSelect = {
  id: true,
  hostname: true,
  labels: true,
  agentVersion: true,
  kernelProfileId: true,
  enrolledAt: true,
  lastSeenAt: true,
  revokedAt: true,
} as const satisfies Prisma.AgentSelect;

export function listAgents(db: Db, tenantId: string) {
  return db.agent.findMany({ where: { tenantId }, orderBy: { id: 'asc' }, select: agentSelect });
}

export async function getAgent(db: Db | Tx, tenantId: string, id: string) {
  const a = await db.agent.findFirst({ where: { id, tenantId }, select: agentSelect });
  if (!a) throw notFound('agent', id);
  return a;
}

/**
 * Enrols many agents at once with credentials made by the caller (the load bench: 10,000 agents
 * through `agent.enroll` one by one would take minutes on PGlite). No targets are made.
 */
export async function bulkCreateAgents(db: Db, tenantId: string, agents: { hostname: string; labels: Record<string, string>; credentialHash: string }[]) {
  for (let i = 0; i < agents.length; i += 2000) {
    await db.agent.createMany({ data: agents.slice(i, i + 2000).map((a) => ({ tenantId, hostname: a.hostname, labels: a.labels, credentialHash: a.credentialHash })) });
  }
}
