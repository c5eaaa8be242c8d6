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
