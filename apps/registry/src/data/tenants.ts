import { hashPassword } from '../auth/password.js';
import type { Db } from '../db/open.js';
import { isUniqueViolation, RegistryError } from '../errors.js';
import { writeAudit } from './audit.js';
import { findOrCreateUser } from './members.js';
import { createToken } from './tokens.js';
import type { Actor } from './tx.js';

export interface CreateTenantInput {
  name: string;
  ownerEmail: string;
  /** Sets the owner's password when the owner is a new user. */
  ownerPassword?: string | undefined;
}

/**
 * Makes a tenant, its owner (a new or existing user) and the owner's first API token, with their
 * audit rows, in one transaction. Used by `tenant.create` and by `probeyard admin create-tenant`
 * when no registry runs.
 */
export async function createTenantWithOwner(db: Db, actor: Actor, input: CreateTenantInput) {
  const passwordHash = input.ownerPassword ? await hashPassword(input.ownerPassword) : null;
  try {
    return await db.$transaction(async (tx) => {
      const tenant = await tx.tenant.create({ data: { name: input.name }, select: { id: true, name: true, createdAt: true } });
      const { user, created } = await findOrCreateUser(tx, input.ownerEmail, passwordHash);
      await tx.membership.create({ data: { tenantId: tenant.id, userId: user.id, role: 'owner' }, select: { id: true } });
      const { token, secret } = await createToken(tx, {
        tenantId: tenant.id,
        userId: user.id,
        kind: 'api',
        name: 'owner bootstrap',
        role: 'owner',
        expiresAt: null,
      });
      await writeAudit(tx, {
        tenantId: tenant.id,
        actor,
        action: 'tenant.create',
        targetType: 'tenant',
        targetId: tenant.id,
        detail: { name: tenant.name, owner: user.email, ownerCreated: created, tokenId: token.id },
      });
      return { tenant, owner: user, token, secret };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new RegistryError('conflict', `tenant exists: ${input.name}`, { name: input.name });
    throw err;
  }
}
