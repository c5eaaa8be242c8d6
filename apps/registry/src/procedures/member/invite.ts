import { z } from 'zod';
import { hasRole } from '../../auth/roles.js';
import { writeAudit } from '../../data/audit.js';
import { createInvitation } from '../../data/invitations.js';
import { RegistryError } from '../../errors.js';
import { emailSchema, roleSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { invitationView, toInvitationView } from './invitation-view.js';

/** Pending invitations a tenant may hold at once (rows nothing else bounds). */
export const maxPendingInvitations = 1000;

export const memberInviteInput = z.strictObject({
  email: emailSchema,
  role: roleSchema,
  /** How long the secret may be redeemed: 1 hour to 30 days, 72 hours when left out. */
  expiresInHours: z.number().int().min(1).max(720).optional(),
});
export const memberInviteOutput = z.object({
  invitation: invitationView,
  /** The one-time secret for the invited person (`auth.acceptInvitation`): shown this once, only its hash is kept. */
  secret: z.string(),
});

/**
 * `member.invite` (admin): an invitation to join the tenant as `role` (no stronger than the
 * caller's), redeemed with its one-time secret. Whether an account exists for the email anywhere
 * on the instance changes nothing in the answer (no user is looked up; only this tenant's own
 * members are: inviting one is a CONFLICT). The invited person chooses their own password, or, with
 * an account, accepts with that account's own credential.
 */
export const memberInvite = userProcedure('admin')
  .input(memberInviteInput)
  .output(memberInviteOutput)
  .mutation(async ({ ctx, input }) => {
    const p = ctx.principal;
    if (!hasRole(p.role, input.role)) throw new RegistryError('forbidden', `member invite: inviting a ${input.role} needs the ${input.role} role`);
    const member = await ctx.db.membership.findFirst({ where: { tenantId: ctx.tenantId, user: { email: input.email } }, select: { id: true } });
    if (member) throw new RegistryError('conflict', `member invite: ${input.email} is already a member`);
    const now = ctx.deps.now();
    const pending = await ctx.db.invitation.count({ where: { tenantId: ctx.tenantId, acceptedAt: null, revokedAt: null, expiresAt: { gt: now } } });
    if (pending >= maxPendingInvitations) {
      throw new RegistryError('conflict', `member invite: ${pending} invitations are pending, the limit is ${maxPendingInvitations}; revoke some first`);
    }
    const expiresAt = new Date(now.getTime() + (input.expiresInHours ?? 72) * 3_600_000);
    const { invitation, secret } = await ctx.db.$transaction(async (tx) => {
      const made = await createInvitation(tx, { tenantId: ctx.tenantId, email: input.email, role: input.role, createdById: p.userId, expiresAt });
      await writeAudit(tx, {
        tenantId: ctx.tenantId,
        actor: { kind: 'user', id: p.userId },
        action: 'member.invite',
        targetType: 'invitation',
        targetId: made.invitation.id,
        detail: { email: input.email, role: input.role, expiresAt: expiresAt.toISOString() },
      });
      return made;
    });
    return { invitation: toInvitationView(invitation), secret };
  });
