import { z } from 'zod';
import { checkPassword, hashPasswordGated } from '../../auth/password-check.js';
import { writeAudit } from '../../data/audit.js';
import { claimInvitation, findInvitationBySecret } from '../../data/invitations.js';
import { isUniqueViolation, RegistryError } from '../../errors.js';
import { idSchema, passwordSchema, roleSchema } from '../../schemas.js';
import { publicProcedure } from '../../trpc.js';

export const authAcceptInvitationInput = z.strictObject({
  /** The one-time secret the inviter was shown (`pyv_…`). */
  secret: z.string().min(1).max(200),
  /**
   * Without an account for the invited email: the password to create it with (at least 12
   * characters). With one: that account's current password, unless the call is made with a token
   * of that account (of its full role).
   */
  password: z.string().max(256).optional(),
});
export const authAcceptInvitationOutput = z.object({
  tenant: z.object({ id: idSchema, name: z.string() }),
  email: z.string(),
  role: roleSchema,
  /** True when the account was made by this call. */
  accountCreated: z.boolean(),
});

const unusable = () => new RegistryError('not_found', 'accept invitation: no such invitation, or it was already used, revoked or has expired');

/**
 * `auth.acceptInvitation` (public; the secret authenticates): joins the invitation's tenant with
 * its role, once. A person without an account creates it here with a password of their own
 * choosing. For an email that already has an account, the secret alone is never enough: the call
 * must carry that account's own credential, a token of it (not capped below its role) or its
 * current password (counted by the login limiter). The secret never sets or reveals an existing
 * account's password.
 *
 * Whoever holds a valid secret learns whether its email has an account (they are asked for a new
 * password or for the existing one); inviting and the member procedures never tell.
 */
export const authAcceptInvitation = publicProcedure
  .input(authAcceptInvitationInput)
  .output(authAcceptInvitationOutput)
  .mutation(async ({ ctx, input }) => {
    const { db, deps } = ctx;
    const p = ctx.principal;
    if (p.kind === 'invalid') throw new RegistryError('unauthorized', `accept invitation: ${p.reason}`);
    const inv = await findInvitationBySecret(db, input.secret);
    if (!inv || inv.acceptedAt || inv.revokedAt || inv.expiresAt <= deps.now()) throw unusable();

    let userId: string | undefined;
    let newPasswordHash: string | undefined;
    if (p.kind === 'user') {
      // Signed in: the account accepts for itself, with a credential of its full role.
      if (p.email !== inv.email) throw new RegistryError('forbidden', 'accept invitation: the invitation is for another email than the signed-in account');
      if (p.capped) throw new RegistryError('forbidden', "accept invitation: this token's role is capped below the account's; accept with a login session or the account's password");
      userId = p.userId;
    } else {
      const user = await db.user.findUnique({ where: { email: inv.email }, select: { id: true, passwordHash: true } });
      if (user) {
        if (!input.password) {
          throw new RegistryError('forbidden', 'accept invitation: an account exists for this email: give its password, or accept while signed in as it');
        }
        if (!(await checkPassword(deps, 'accept invitation', inv.email, ctx.ip, input.password, user.passwordHash))) {
          throw new RegistryError('forbidden', "accept invitation: the password is not the account's password");
        }
        userId = user.id;
      } else {
        const chosen = passwordSchema.safeParse(input.password ?? '');
        if (!chosen.success) throw new RegistryError('bad_request', 'accept invitation: choose a password for the new account (at least 12 characters)');
        newPasswordHash = await hashPasswordGated(deps, 'accept invitation', chosen.data);
      }
    }

    try {
      await db.$transaction(async (tx) => {
        const id = userId ?? (await tx.user.create({ data: { email: inv.email, passwordHash: newPasswordHash ?? null }, select: { id: true } })).id;
        if (!(await claimInvitation(tx, inv.id, id, deps.now()))) throw unusable();
        await tx.membership.create({ data: { tenantId: inv.tenantId, userId: id, role: inv.role }, select: { id: true } });
        await writeAudit(tx, {
          tenantId: inv.tenantId,
          actor: { kind: 'user', id },
          action: 'auth.acceptInvitation',
          targetType: 'invitation',
          targetId: inv.id,
          detail: { email: inv.email, role: inv.role },
        });
      });
      ctx.log.tenant = inv.tenant.name;
      return { tenant: inv.tenant, email: inv.email, role: inv.role, accountCreated: userId === undefined };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      // The membership exists (already a member), or the account was made meanwhile by another redemption.
      throw new RegistryError('conflict', `accept invitation: ${userId ? `already a member of ${inv.tenant.name}` : 'an account for this email was made meanwhile; try again'}`);
    }
  });
