import { z } from 'zod';
import { agentSelect, getAgent } from '../../data/agents.js';
import { agentProcedure } from '../../trpc.js';
import { agentView, toAgentView } from './agent-view.js';

export const agentSelfInput = z.strictObject({}).optional();
export const agentSelfOutput = z.object({ agent: agentView });

/** `agent.self` (agent): the calling agent's own record; records that it was seen. */
export const agentSelf = agentProcedure
  .input(agentSelfInput)
  .output(agentSelfOutput)
  .query(async ({ ctx }) => {
    await getAgent(ctx.db, ctx.tenantId, ctx.principal.agentId);
    const agent = await ctx.db.agent.update({ where: { id: ctx.principal.agentId }, data: { lastSeenAt: ctx.deps.now() }, select: agentSelect });
    return { agent: toAgentView(agent) };
  });
