import { z } from 'zod';
import { listMembers } from '../../data/members.js';
import { userProcedure } from '../../trpc.js';
import { memberView, toMemberView } from './member-view.js';

export const memberListInput = z.strictObject({}).optional();
export const memberListOutput = z.object({ members: z.array(memberView) });

/** `member.list`: the tenant's members and roles. */
export const memberList = userProcedure('viewer')
  .input(memberListInput)
  .output(memberListOutput)
  .query(async ({ ctx }) => ({ members: (await listMembers(ctx.db, ctx.tenantId)).map(toMemberView) }));
