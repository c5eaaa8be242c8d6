import type { Db } from '../db/open.js';
import { notFound } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { Tx } from './tx.js';

export const memberSelect = {
  userId: true,
  role: true,
  createdAt: true,
  user: { select: { email: true } },
} as const satisfies Prisma.MembershipSelect;

export function listMembers(db: Db, tenantId: string) {
  return db.membership.findMany({ where: { tenantId }, orderBy: { createdAt: 'asc' }, select: memberSelect });
}

/** The membership of `userId` in the tenant; a user of another tenant only is `not_found`. */
export async function getMember(db: Db | Tx, tenantId: string, userId: string) {
  const m = await db.membership.findUnique({ where: { tenantId_userId: { tenantId, userId } }, select: { id: true, ...memberSelect } });
  if (!m) throw notFound('member', userId);
  return m;
}

export function countOwners(tx: Tx, tenantId: string): Promise<number> {
  return tx.membership.count({ where: { tenantId, role: 'owner' } });
}

/** Finds the user with `email`, or makes one (with a password hash when given). */
export async function findOrCreateUser(tx: Tx, email: string, passwordHash: string | null) {
  const existing = await tx.user.findUnique({ where: { email }, select: { id: true, email: true } });
  if (existing) return { user: existing, created: false };
  const user = await tx.user.create({ data: { email, passwordHash }, select: { id: true, email: true } });
  return { user, created: true };
}
