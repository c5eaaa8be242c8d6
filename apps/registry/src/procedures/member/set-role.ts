import { z } from 'zod';
import { hasRole } from '../../auth/roles.js';
import { writeAudit } from '../../data/audit.js';
import { countOwners, getMember, memberSelect } from '../../data/members.js';
import { RegistryError } from '../../errors.js';
import { idSchema, roleSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { memberView, toMemberView } from './member-view.js';

export const memberSetRoleInput = z.strictObject({ userId: idSchema, role: roleSchema });
export const memberSetRoleOutput = z.object({ member: memberView });

/**
 * `member.setRole` (admin): changes the role of a member no stronger than the caller, to a role no
 * stronger than the caller's. The last owner cannot step down.
 */
export const memberSetRole = userProcedure('admin')
  .input(memberSetRoleInput)
  .output(memberSetRoleOutput)
  .mutation(async ({ ctx, input }) => {
    const p = ctx.principal;
    return ctx.db.$transaction(async (tx) => {
      const m = await getMember(tx, ctx.tenantId, input.userId);
      if (!hasRole(p.role, m.role) || !hasRole(p.role, input.role)) {
        throw new RegistryError('forbidden', `member set role: ${m.role} → ${input.role} needs the ${hasRole(m.role, input.role) ? m.role : input.role} role`);
      }
      if (m.role === input.role) return { member: toMemberView(m) };
      if (m.role === 'owner' && (await countOwners(tx, ctx.tenantId)) <= 1) {
        throw new RegistryError('conflict', 'member set role: the tenant needs an owner; make another owner first');
      }
      const updated = await tx.membership.update({ where: { id: m.id }, data: { role: input.role }, select: memberSelect });
      await writeAudit(tx, {
        tenantId: ctx.tenantId,
        actor: { kind: 'user', id: p.userId },
        action: 'member.setRole',
        targetType: 'user',
        targetId: m.userId,
        detail: { email: m.user.email, from: m.role, to: input.role },
      });
      return { member: toMemberView(updated) };
    });
  });
