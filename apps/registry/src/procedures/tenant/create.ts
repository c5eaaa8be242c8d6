import { z } from 'zod';
import { createTenantWithOwner } from '../../data/tenants.js';
import { emailSchema, idSchema, iso, isoDate, passwordSchema, slugSchema } from '../../schemas.js';
import { adminProcedure } from '../../trpc.js';

export const tenantCreateInput = z.strictObject({
  name: slugSchema,
  ownerEmail: emailSchema,
  /** Sets the owner's password when the owner is a new user (else they use the token). */
  ownerPassword: passwordSchema.optional(),
});
export const tenantCreateOutput = z.object({
  tenant: z.object({ id: idSchema, name: z.string(), createdAt: isoDate }),
  owner: z.object({ id: idSchema, email: z.string() }),
  /** The owner's first API token: shown once. */
  ownerToken: z.string(),
  ownerTokenId: idSchema,
});

/** `tenant.create` (instance admin): a tenant, its owner and the owner's first token. */
export const tenantCreate = adminProcedure
  .input(tenantCreateInput)
  .output(tenantCreateOutput)
  .mutation(async ({ ctx, input }) => {
    const r = await createTenantWithOwner(ctx.db, { kind: 'admin', id: ctx.principal.credentialId }, input);
    ctx.log.tenant = r.tenant.name;
    return {
      tenant: { ...r.tenant, createdAt: iso(r.tenant.createdAt) },
      owner: r.owner,
      ownerToken: r.secret,
      ownerTokenId: r.token.id,
    };
  });
