import { z } from 'zod';
import { hashPassword, verifyPassword } from '../../auth/password.js';
import { writeAudit } from '../../data/audit.js';
import { RegistryError } from '../../errors.js';
import { passwordSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';

export const authSetPasswordInput = z.strictObject({
  /** Required when the user already has a password. */
  currentPassword: z.string().max(256).optional(),
  newPassword: passwordSchema,
});
export const authSetPasswordOutput = z.object({ ok: z.literal(true) });

/** `auth.setPassword`: the calling user sets their own password. */
export const authSetPassword = userProcedure('viewer')
  .input(authSetPasswordInput)
  .output(authSetPasswordOutput)
  .mutation(async ({ ctx, input }) => {
    const user = await ctx.db.user.findUniqueOrThrow({ where: { id: ctx.principal.userId }, select: { passwordHash: true } });
    if (user.passwordHash && !(await verifyPassword(input.currentPassword ?? '', user.passwordHash))) {
      throw new RegistryError('forbidden', 'set password: the current password does not match');
    }
    const passwordHash = await hashPassword(input.newPassword);
    await ctx.db.$transaction(async (tx) => {
      await tx.user.update({ where: { id: ctx.principal.userId }, data: { passwordHash }, select: { id: true } });
      await writeAudit(tx, {
        tenantId: ctx.tenantId,
        actor: { kind: 'user', id: ctx.principal.userId },
        action: 'auth.setPassword',
        targetType: 'user',
        targetId: ctx.principal.userId,
      });
    });
    return { ok: true as const };
  });
