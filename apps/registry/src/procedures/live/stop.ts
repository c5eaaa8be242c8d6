import { z } from 'zod';
import { hasRole } from '../../auth/roles.js';
import { getLiveSession, liveAgentWakes, liveChanges, stopLiveSession } from '../../data/live.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { liveSessionView, toLiveSessionView } from './live-view.js';

export const liveStopInput = z.strictObject({ sessionId: idSchema });
export const liveStopOutput = z.object({ session: liveSessionView, changed: z.boolean() });

/**
 * `live.stop` (the member who started it, or an admin): the agents stop it at once (those holding
 * `agent.waitLive` are woken; the others learn it at their next report). A session already over is
 * unchanged (`changed: false`).
 */
export const liveStop = userProcedure('publisher')
  .input(liveStopInput)
  .output(liveStopOutput)
  .mutation(async ({ ctx, input }) => {
    const p = ctx.principal;
    const now = ctx.deps.now();
    const r = await ctx.db.$transaction((tx) => stopLiveSession(tx, ctx.tenantId, { kind: 'user', id: p.userId }, input.sessionId, hasRole(p.role, 'admin'), now));
    for (const a of r.agentIds) liveAgentWakes.emit(a);
    if (r.changed) liveChanges.emit(input.sessionId, { tenantId: ctx.tenantId });
    return { session: toLiveSessionView(await getLiveSession(ctx.db, ctx.tenantId, input.sessionId), ctx.deps.now()), changed: r.changed };
  });
