import { hashSecret, newSecret, SecretKind, secretPrefix } from '../auth/secrets.js';
import type { Db } from '../db/open.js';
import { notFound } from '../errors.js';
import type { Prisma, Role } from '../generated/prisma/client.js';
import type { Tx } from './tx.js';

export const invitationSelect = {
  id: true,
  email: true,
  role: true,
  prefix: true,
  createdAt: true,
  expiresAt: true,
  acceptedAt: true,
  revokedAt: true,
} as const satisfies Prisma.InvitationSelect;

/** Makes an invitation; the secret is returned once and only its hash is stored. */
export async function createInvitation(tx: Tx, i: { tenantId: string; email: string; role: Role; createdById: string; expiresAt: Date }) {
  const secret = newSecret(SecretKind.invitation);
  const invitation = await tx.invitation.create({
    data: { ...i, hash: hashSecret(secret), prefix: secretPrefix(secret) },
    select: invitationSelect,
  });
  return { invitation, secret };
}

/** Pending invitations of a tenant (neither accepted, revoked nor expired), newest first, after `cursor`. */
export function listPendingInvitations(db: Db, tenantId: string, now: Date, q: { cursor?: string | undefined; limit: number }) {
  return db.invitation.findMany({
    where: { tenantId, acceptedAt: null, revokedAt: null, expiresAt: { gt: now }, ...(q.cursor ? { id: { lt: q.cursor } } : {}) },
    orderBy: { id: 'desc' },
    take: q.limit,
    select: invitationSelect,
  });
}

/** One invitation of the tenant; another tenant's is `not_found`, as a missing one. */
export async function getInvitation(db: Db | Tx, tenantId: string, id: string) {
  const invitation = await db.invitation.findFirst({ where: { id, tenantId }, select: invitationSelect });
  if (!invitation) throw notFound('invitation', id);
  return invitation;
}

/** The invitation a secret redeems, whatever its state (the caller checks it), with its tenant. */
export function findInvitationBySecret(db: Db, secret: string) {
  return db.invitation.findUnique({
    where: { hash: hashSecret(secret) },
    select: { ...invitationSelect, tenantId: true, tenant: { select: { id: true, name: true } } },
  });
}

/**
 * Marks an invitation used, if it still is usable at `now`: true for exactly one caller however
 * many redeem it at once (a conditional update).
 */
export async function claimInvitation(tx: Tx, id: string, userId: string, now: Date): Promise<boolean> {
  const r = await tx.invitation.updateMany({
    where: { id, acceptedAt: null, revokedAt: null, expiresAt: { gt: now } },
    data: { acceptedAt: now, acceptedById: userId },
  });
  return r.count === 1;
}
