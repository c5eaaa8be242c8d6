import { z } from 'zod';
import { hasRole } from '../../auth/roles.js';
import { writeAudit } from '../../data/audit.js';
import { getToken, tokenSelect } from '../../data/tokens.js';
import { notFound, RegistryError } from '../../errors.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { toTokenView, tokenView } from './token-view.js';

export const tokenRevokeInput = z.strictObject({ id: idSchema });
export const tokenRevokeOutput = z.object({ token: tokenView });

/**
 * `token.revoke`: anyone revokes their own tokens; admins and owners also others' tokens of a role
 * no stronger than theirs. A token the caller cannot see (another user's, for a non-admin; another
 * tenant's) is `NOT_FOUND`. Revoking a revoked token is a no-op.
 */
export const tokenRevoke = userProcedure('viewer')
  .input(tokenRevokeInput)
  .output(tokenRevokeOutput)
  .mutation(async ({ ctx, input }) => {
    const p = ctx.principal;
    const token = await ctx.db.$transaction(async (tx) => {
      const t = await getToken(tx, ctx.tenantId, input.id);
      const own = t.userId === p.userId;
      if (!own && !hasRole(p.role, 'admin')) throw notFound('token', input.id);
      if (!own && !hasRole(p.role, t.role)) {
        throw new RegistryError('forbidden', `token revoke: a ${t.role} token of another user needs the ${t.role} role`);
      }
      if (t.revokedAt) return t;
      const updated = await tx.apiToken.update({
        where: { id: t.id },
        data: { revokedAt: ctx.deps.now() },
        select: tokenSelect,
      });
      await writeAudit(tx, {
        tenantId: ctx.tenantId,
        actor: { kind: 'user', id: p.userId },
        action: 'token.revoke',
        targetType: 'token',
        targetId: t.id,
        detail: { name: t.name, owner: t.user.email },
      });
      return updated;
    });
    return { token: toTokenView(token) };
  });
