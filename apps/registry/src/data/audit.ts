import type { Db } from '../db/open.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { Actor, Tx } from './tx.js';

export interface AuditInput {
  tenantId: string | null;
  actor: Actor;
  /** The procedure (`token.create`). */
  action: string;
  targetType: string;
  targetId: string | null;
  detail?: Prisma.InputJsonValue;
}

/** Records a change; call it inside the transaction that makes the change. */
export async function writeAudit(tx: Tx, entry: AuditInput): Promise<void> {
  await tx.auditEntry.create({
    data: {
      tenantId: entry.tenantId,
      actorKind: entry.actor.kind,
      actorId: entry.actor.id,
      action: entry.action,
      targetType: entry.targetType,
      targetId: entry.targetId,
      detail: entry.detail ?? {},
    },
    select: { id: true },
  });
}

export const auditSelect = {
  id: true,
  actorKind: true,
  actorId: true,
  action: true,
  targetType: true,
  targetId: true,
  detail: true,
  createdAt: true,
} as const satisfies Prisma.AuditEntrySelect;

/** A tenant's audit entries, newest first (ids are time-ordered uuid v7). */
export function listAudit(db: Db, tenantId: string, page: { limit: number; cursor?: string | undefined }) {
  return db.auditEntry.findMany({
    where: { tenantId, ...(page.cursor ? { id: { lt: page.cursor } } : {}) },
    orderBy: { id: 'desc' },
    take: page.limit,
    select: auditSelect,
  });
}
