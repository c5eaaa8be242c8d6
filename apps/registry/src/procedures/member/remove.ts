import { z } from 'zod';
import { hasRole } from '../../auth/roles.js';
import { writeAudit } from '../../data/audit.js';
import { countOwners, getMember } from '../../data/members.js';
import { RegistryError } from '../../errors.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { memberView, toMemberView } from './member-view.js';

export const memberRemoveInput = z.strictObject({ userId: idSchema });
export const memberRemoveOutput = z.object({ member: memberView, tokensRevoked: z.number().int() });

/**
 * `member.remove` (admin): removes a member no stronger than the caller and revokes their tokens in
 * the tenant. The last owner cannot be removed.
 */
export const memberRemove = userProcedure('admin')
  .input(memberRemoveInput)
  .output(memberRemoveOutput)
  .mutation(async ({ ctx, input }) => {
    const p = ctx.principal;
    return ctx.db.$transaction(async (tx) => {
      const m = await getMember(tx, ctx.tenantId, input.userId);
      if (!hasRole(p.role, m.role)) throw new RegistryError('forbidden', `member remove: removing a ${m.role} needs the ${m.role} role`);
      if (m.role === 'owner' && (await countOwners(tx, ctx.tenantId)) <= 1) {
        throw new RegistryError('conflict', 'member remove: the tenant needs an owner; make another owner first');
      }
      await tx.membership.delete({ where: { id: m.id }, select: { id: true } });
      const revoked = await tx.apiToken.updateMany({
        where: { tenantId: ctx.tenantId, userId: m.userId, revokedAt: null },
        data: { revokedAt: ctx.deps.now() },
      });
      await writeAudit(tx, {
        tenantId: ctx.tenantId,
        actor: { kind: 'user', id: p.userId },
        action: 'member.remove',
        targetType: 'user',
        targetId: m.userId,
        detail: { email: m.user.email, role: m.role, tokensRevoked: revoked.count },
      });
      return { member: toMemberView(m), tokensRevoked: revoked.count };
    });
  });
