import { z } from 'zod';
import { hasRole } from '../../auth/roles.js';
import { listTokens } from '../../data/tokens.js';
import { userProcedure } from '../../trpc.js';
import { toTokenView, tokenView } from './token-view.js';

export const tokenListInput = z.strictObject({ includeRevoked: z.boolean().default(false) }).default({ includeRevoked: false });
export const tokenListOutput = z.object({ tokens: z.array(tokenView) });

/** `token.list`: admins and owners see every token of the tenant, others their own. */
export const tokenList = userProcedure('viewer')
  .input(tokenListInput)
  .output(tokenListOutput)
  .query(async ({ ctx, input }) => {
    const p = ctx.principal;
    const all = await listTokens(ctx.db, ctx.tenantId, hasRole(p.role, 'admin') ? undefined : p.userId);
    return { tokens: all.filter((t) => input.includeRevoked || !t.revokedAt).map(toTokenView) };
  });
