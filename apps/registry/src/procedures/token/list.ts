import { z } from 'zod';
import { hasRole } from '../../auth/roles.js';
import { listTokensPage } from '../../data/list-pages.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { toTokenView, tokenView } from './token-view.js';

export const tokenListInput = z
  .strictObject({
    includeRevoked: z.boolean().default(false),
    /** Only API tokens or only login sessions. */
    kind: z.enum(['api', 'session']).optional(),
    limit: z.number().int().min(1).max(500).default(500),
    /** The `nextCursor` of the previous page. */
    cursor: idSchema.optional(),
  })
  .default({ includeRevoked: false, limit: 500 });
export const tokenListOutput = z.object({ tokens: z.array(tokenView), nextCursor: idSchema.nullable() });

/** `token.list`: admins and owners see every token of the tenant, others their own; newest first, a page at a time. */
export const tokenList = userProcedure('viewer')
  .input(tokenListInput)
  .output(tokenListOutput)
  .query(async ({ ctx, input }) => {
    const p = ctx.principal;
    const rows = await listTokensPage(ctx.db, ctx.tenantId, {
      userId: hasRole(p.role, 'admin') ? undefined : p.userId,
      includeRevoked: input.includeRevoked,
      kind: input.kind,
      cursor: input.cursor,
      limit: input.limit,
    });
    return { tokens: rows.map(toTokenView), nextCursor: rows.length === input.limit ? (rows.at(-1)?.id ?? null) : null };
  });
