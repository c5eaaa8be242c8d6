import { z } from 'zod';
import { idSchema, roleSchema } from '../schemas.js';
import { userProcedure } from '../trpc.js';

export const whoamiOutput = z.object({
  tenant: z.object({ id: idSchema, name: z.string() }),
  user: z.object({ id: idSchema, email: z.string() }),
  /** The token's effective role (the weaker of its own and the membership's). */
  role: roleSchema,
  tokenId: idSchema,
});

/** `whoami`: the tenant, user and role a token acts as. */
export const whoami = userProcedure('viewer')
  .output(whoamiOutput)
  .query(({ ctx }) => {
    const p = ctx.principal;
    return { tenant: { id: p.tenantId, name: p.tenantName }, user: { id: p.userId, email: p.email }, role: p.role, tokenId: p.tokenId };
  });
