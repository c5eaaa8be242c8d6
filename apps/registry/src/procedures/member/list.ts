import { z } from 'zod';
import { listMembersPage } from '../../data/list-pages.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { memberView, toMemberView } from './member-view.js';

export const memberListInput = z
  .strictObject({
    limit: z.number().int().min(1).max(500).default(500),
    /** The `nextCursor` of the previous page. */
    cursor: idSchema.optional(),
  })
  .optional();
export const memberListOutput = z.object({ members: z.array(memberView), nextCursor: idSchema.nullable() });

/** `member.list`: the tenant's members and roles, in the order they joined, a page at a time. */
export const memberList = userProcedure('viewer')
  .input(memberListInput)
  .output(memberListOutput)
  .query(async ({ ctx, input }) => {
    const limit = input?.limit ?? 500;
    const rows = await listMembersPage(ctx.db, ctx.tenantId, { cursor: input?.cursor, limit });
    return { members: rows.map(toMemberView), nextCursor: rows.length === limit ? (rows.at(-1)?.id ?? null) : null };
  });
