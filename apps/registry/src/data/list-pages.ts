// Pages of the tenant's tokens and members (the web app's Tokens and Members pages).
import type { Db } from '../db/open.js';
import { memberSelect } from './members.js';
import { tokenSelect } from './tokens.js';

/** Tokens newest first after `cursor` (an id); of one user when `userId` is given. */
export function listTokensPage(db: Db, tenantId: string, q: { userId?: string | undefined; includeRevoked: boolean; kind?: 'api' | 'session' | undefined; cursor?: string | undefined; limit: number }) {
  return db.apiToken.findMany({
    where: {
      tenantId,
      ...(q.userId ? { userId: q.userId } : {}),
      ...(q.includeRevoked ? {} : { revokedAt: null }),
      ...(q.kind ? { kind: q.kind } : {}),
      ...(q.cursor ? { id: { lt: q.cursor } } : {}),
    },
    orderBy: { id: 'desc' },
    take: q.limit,
    select: tokenSelect,
  });
}

/** Members in the order they joined, after `cursor` (a membership id). */
export function listMembersPage(db: Db, tenantId: string, q: { cursor?: string | undefined; limit: number }) {
  return db.membership.findMany({
    where: { tenantId, ...(q.cursor ? { id: { gt: q.cursor } } : {}) },
    orderBy: { id: 'asc' },
    take: q.limit,
    select: { id: true, ...memberSelect },
  });
}
