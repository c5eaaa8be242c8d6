import { z } from 'zod';
import { hashPassword } from '../../auth/password.js';
import { hasRole } from '../../auth/roles.js';
import { writeAudit } from '../../data/audit.js';
import { findOrCreateUser, memberSelect } from '../../data/members.js';
import { isUniqueViolation, RegistryError } from '../../errors.js';
import { emailSchema, passwordSchema, roleSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { memberView, toMemberView } from './member-view.js';

export const memberAddInput = z.strictObject({
  email: emailSchema,
  role: roleSchema,
  /** The first password of a user new to the instance; ignored for an existing user. */
  password: passwordSchema.optional(),
});
export const memberAddOutput = z.object({ member: memberView, userCreated: z.boolean() });

/** `member.add` (admin): adds a user (new or existing) to the tenant with a role no stronger than the caller's. */
export const memberAdd = userProcedure('admin')
  .input(memberAddInput)
  .output(memberAddOutput)
  .mutation(async ({ ctx, input }) => {
    const p = ctx.principal;
    if (!hasRole(p.role, input.role)) throw new RegistryError('forbidden', `member add: adding a ${input.role} needs the ${input.role} role`);
    const passwordHash = input.password ? await hashPassword(input.password) : null;
    try {
      return await ctx.db.$transaction(async (tx) => {
        const { user, created } = await findOrCreateUser(tx, input.email, passwordHash);
        const m = await tx.membership.create({ data: { tenantId: ctx.tenantId, userId: user.id, role: input.role }, select: memberSelect });
        await writeAudit(tx, {
          tenantId: ctx.tenantId,
          actor: { kind: 'user', id: p.userId },
          action: 'member.add',
          targetType: 'user',
          targetId: user.id,
          detail: { email: user.email, role: input.role, userCreated: created },
        });
        return { member: toMemberView(m), userCreated: created };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new RegistryError('conflict', `member add: ${input.email} is already a member`);
      throw err;
    }
  });
