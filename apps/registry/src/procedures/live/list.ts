import { z } from 'zod';
import { listLiveSessions } from '../../data/live.js';
import { userProcedure } from '../../trpc.js';
import { liveSessionView, toLiveSessionView } from './live-view.js';

export const liveListInput = z.strictObject({ limit: z.number().int().min(1).max(100).default(20) }).optional();
export const liveListOutput = z.object({ sessions: z.array(liveSessionView) });

/** `live.list` (viewer): the tenant's recent sessions, newest first. */
export const liveList = userProcedure('viewer')
  .input(liveListInput)
  .output(liveListOutput)
  .query(async ({ ctx, input }) => {
    const now = ctx.deps.now();
    return { sessions: (await listLiveSessions(ctx.db, ctx.tenantId, input?.limit ?? 20)).map((r) => toLiveSessionView(r, now)) };
  });
