import { z } from 'zod';
import { hasRole } from '../../auth/roles.js';
import { writeAudit } from '../../data/audit.js';
import { getInvitation, invitationSelect } from '../../data/invitations.js';
import { RegistryError } from '../../errors.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { invitationView, toInvitationView } from './invitation-view.js';

export const memberRevokeInvitationInput = z.strictObject({ id: idSchema });
export const memberRevokeInvitationOutput = z.object({ invitation: invitationView });

/**
 * `member.revokeInvitation` (admin): a pending invitation of a role no stronger than the caller's
 * can no longer be redeemed. Another tenant's invitation is `NOT_FOUND`; an accepted or revoked
 * one is a CONFLICT.
 */
export const memberRevokeInvitation = userProcedure('admin')
  .input(memberRevokeInvitationInput)
  .output(memberRevokeInvitationOutput)
  .mutation(async ({ ctx, input }) => {
    const p = ctx.principal;
    return ctx.db.$transaction(async (tx) => {
      const inv = await getInvitation(tx, ctx.tenantId, input.id);
      if (!hasRole(p.role, inv.role)) throw new RegistryError('forbidden', `member revoke invitation: revoking a ${inv.role}'s invitation needs the ${inv.role} role`);
      const now = ctx.deps.now();
      const r = await tx.invitation.updateMany({ where: { id: inv.id, tenantId: ctx.tenantId, acceptedAt: null, revokedAt: null }, data: { revokedAt: now } });
      if (r.count !== 1) throw new RegistryError('conflict', `member revoke invitation: ${inv.id} was already ${inv.acceptedAt ? 'accepted' : 'revoked'}`);
      await writeAudit(tx, {
        tenantId: ctx.tenantId,
        actor: { kind: 'user', id: p.userId },
        action: 'member.revokeInvitation',
        targetType: 'invitation',
        targetId: inv.id,
        detail: { email: inv.email, role: inv.role },
      });
      const updated = await tx.invitation.findUniqueOrThrow({ where: { id: inv.id }, select: invitationSelect });
      return { invitation: toInvitationView(updated) };
    });
  });
