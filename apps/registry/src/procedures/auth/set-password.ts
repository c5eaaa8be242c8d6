import { z } from 'zod';
import { checkPassword, hashPasswordGated } from '../../auth/password-check.js';
import { writeAudit } from '../../data/audit.js';
import { RegistryError } from '../../errors.js';
import { passwordSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';

export const authSetPasswordInput = z.strictObject({
  /** Required when the user already has a password. */
  currentPassword: z.string().max(256).optional(),
  newPassword: passwordSchema,
});
export const authSetPasswordOutput = z.object({
  ok: z.literal(true),
  /** Login sessions of the account (in every tenant) revoked by the change, the caller's own excepted. */
  sessionsRevoked: z.number().int(),
});

/**
 * `auth.setPassword`: the calling user sets their own password.
 *
 * - With a password set, the current one is needed (counted by the login limiter, so a stolen
 *   token cannot guess it faster than a login could).
 * - Without one (owners made by `admin create-tenant`, until they set one), only a credential of
 *   the account's full role may set it: a token whose own role is below the member's (`capped`)
 *   acts for less than the account, and a password would give a login session of the full role.
 * - Every change revokes the account's login sessions in every tenant except the caller's own
 *   token. API tokens stay: each was made explicitly (by name, with its own role, listed and
 *   revoked one by one with `token.*`) for automation that does not know the password; a password
 *   change is about who may log in, and revoking a leaked API token is `token.revoke`'s job.
 */
export const authSetPassword = userProcedure('viewer')
  .input(authSetPasswordInput)
  .output(authSetPasswordOutput)
  .mutation(async ({ ctx, input }) => {
    const p = ctx.principal;
    const user = await ctx.db.user.findUniqueOrThrow({ where: { id: p.userId }, select: { email: true, passwordHash: true } });
    if (user.passwordHash) {
      if (!(await checkPassword(ctx.deps, 'set password', user.email, ctx.ip, input.currentPassword ?? '', user.passwordHash))) {
        throw new RegistryError('forbidden', 'set password: the current password does not match');
      }
    } else if (p.capped) {
      throw new RegistryError(
        'forbidden',
        `set password: this token's role is capped below the account's (it acts as ${p.role}); set the first password with a token of the account's full role`,
      );
    }
    const passwordHash = await hashPasswordGated(ctx.deps, 'set password', input.newPassword);
    const sessionsRevoked = await ctx.db.$transaction(async (tx) => {
      await tx.user.update({ where: { id: p.userId }, data: { passwordHash }, select: { id: true } });
      const sessions = { userId: p.userId, kind: 'session', revokedAt: null, id: { not: p.tokenId } } as const;
      // This tenant's and the others' apart: the audit row of this tenant counts only its own
      // (the account's sessions elsewhere are none of its business).
      const here = await tx.apiToken.updateMany({ where: { ...sessions, tenantId: ctx.tenantId }, data: { revokedAt: ctx.deps.now() } });
      const elsewhere = await tx.apiToken.updateMany({ where: { ...sessions, tenantId: { not: ctx.tenantId } }, data: { revokedAt: ctx.deps.now() } });
      await writeAudit(tx, {
        tenantId: ctx.tenantId,
        actor: { kind: 'user', id: p.userId },
        action: 'auth.setPassword',
        targetType: 'user',
        targetId: p.userId,
        detail: { firstPassword: !user.passwordHash, sessionsRevoked: here.count },
      });
      return here.count + elsewhere.count;
    });
    return { ok: true as const, sessionsRevoked };
  });
