import { z } from 'zod';
import { hasRole } from '../../auth/roles.js';
import { writeAudit } from '../../data/audit.js';
import { createToken } from '../../data/tokens.js';
import { RegistryError } from '../../errors.js';
import { labelSchema, roleSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { toTokenView, tokenView } from './token-view.js';

export const tokenCreateInput = z.strictObject({
  name: labelSchema,
  /** Defaults to the caller's role; a stronger role than the caller's is forbidden. */
  role: roleSchema.optional(),
  /** No expiry when left out. */
  expiresInDays: z.number().int().min(1).max(3650).optional(),
});
export const tokenCreateOutput = z.object({
  token: tokenView,
  /** The secret: shown this once, only its hash is kept. */
  secret: z.string(),
});

/** `token.create`: an API token for the caller, in the caller's tenant, of at most the caller's role. */
export const tokenCreate = userProcedure('viewer')
  .input(tokenCreateInput)
  .output(tokenCreateOutput)
  .mutation(async ({ ctx, input }) => {
    const p = ctx.principal;
    const role = input.role ?? p.role;
    if (!hasRole(p.role, role)) {
      throw new RegistryError('forbidden', `token create: a token of role ${role} needs that role, the caller has ${p.role}`);
    }
    const expiresAt = input.expiresInDays ? new Date(ctx.deps.now().getTime() + input.expiresInDays * 86_400_000) : null;
    const { token, secret } = await ctx.db.$transaction(async (tx) => {
      const made = await createToken(tx, { tenantId: ctx.tenantId, userId: p.userId, kind: 'api', name: input.name, role, expiresAt });
      await writeAudit(tx, {
        tenantId: ctx.tenantId,
        actor: { kind: 'user', id: p.userId },
        action: 'token.create',
        targetType: 'token',
        targetId: made.token.id,
        detail: { name: input.name, role },
      });
      return made;
    });
    return { token: toTokenView(token), secret };
  });
