import { z } from 'zod';
import { getLiveSession } from '../../data/live.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { liveSessionView, toLiveSessionView } from './live-view.js';

export const liveGetInput = z.strictObject({ sessionId: idSchema });
export const liveGetOutput = z.object({ session: liveSessionView });

/** `live.get` (viewer): one session of the tenant with each agent's state, error and verdict. */
export const liveGet = userProcedure('viewer')
  .input(liveGetInput)
  .output(liveGetOutput)
  .query(async ({ ctx, input }) => ({ session: toLiveSessionView(await getLiveSession(ctx.db, ctx.tenantId, input.sessionId), ctx.deps.now()) }));
