import { hashSecret, newSecret, SecretKind, secretPrefix } from '../auth/secrets.js';
import type { Db } from '../db/open.js';
import { notFound } from '../errors.js';
import type { Prisma, Role, TokenKind } from '../generated/prisma/client.js';
import type { Tx } from './tx.js';

export const tokenSelect = {
  id: true,
  userId: true,
  kind: true,
  name: true,
  role: true,
  prefix: true,
  createdAt: true,
  expiresAt: true,
  lastUsedAt: true,
  revokedAt: true,
  user: { select: { email: true } },
} as const satisfies Prisma.ApiTokenSelect;

export interface NewToken {
  tenantId: string;
  userId: string;
  kind: TokenKind;
  name: string;
  role: Role;
  expiresAt: Date | null;
}

/** Makes a token; the secret is returned once and only its hash is stored. */
export async function createToken(tx: Tx, t: NewToken) {
  const secret = newSecret(t.kind === 'session' ? SecretKind.session : SecretKind.apiToken);
  const token = await tx.apiToken.create({
    data: { ...t, hash: hashSecret(secret), prefix: secretPrefix(secret) },
    select: tokenSelect,
  });
  return { token, secret };
}

/** Tokens of a tenant (of one user when `userId` is given), newest first. */
export function listTokens(db: Db, tenantId: string, userId?: string) {
  return db.apiToken.findMany({
    where: { tenantId, ...(userId ? { userId } : {}) },
    orderBy: { id: 'desc' },
    select: tokenSelect,
  });
}

/** One token of the tenant; another tenant's token is `not_found`, as a missing one. */
export async function getToken(db: Db | Tx, tenantId: string, id: string) {
  const token = await db.apiToken.findFirst({ where: { id, tenantId }, select: tokenSelect });
  if (!token) throw notFound('token', id);
  return token;
}
