import { z } from 'zod';
import { listPendingInvitations } from '../../data/invitations.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { invitationView, toInvitationView } from './invitation-view.js';

export const memberInvitationsInput = z
  .strictObject({
    limit: z.number().int().min(1).max(500).default(100),
    /** The `nextCursor` of the previous page. */
    cursor: idSchema.optional(),
  })
  .optional();
export const memberInvitationsOutput = z.object({ invitations: z.array(invitationView), nextCursor: idSchema.nullable() });

/** `member.invitations` (admin): the tenant's pending invitations (not accepted, revoked or expired), newest first. */
export const memberInvitations = userProcedure('admin')
  .input(memberInvitationsInput)
  .output(memberInvitationsOutput)
  .query(async ({ ctx, input }) => {
    const limit = input?.limit ?? 100;
    const rows = await listPendingInvitations(ctx.db, ctx.tenantId, ctx.deps.now(), { cursor: input?.cursor, limit });
    return { invitations: rows.map(toInvitationView), nextCursor: rows.length === limit ? (rows.at(-1)?.id ?? null) : null };
  });
