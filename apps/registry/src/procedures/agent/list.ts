import { z } from 'zod';
import { listAgents } from '../../data/agents.js';
import { userProcedure } from '../../trpc.js';
import { agentView, toAgentView } from './agent-view.js';

export const agentListInput = z.strictObject({}).optional();
export const agentListOutput = z.object({ agents: z.array(agentView) });

/** `agent.list`: the tenant's agents. */
export const agentList = userProcedure('viewer')
  .input(agentListInput)
  .output(agentListOutput)
  .query(async ({ ctx }) => ({ agents: (await listAgents(ctx.db, ctx.tenantId)).map(toAgentView) }));
