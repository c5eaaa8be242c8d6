import { z } from 'zod';
import { agentSelect, getAgent } from '../../data/agents.js';
import { writeAudit } from '../../data/audit.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { agentView, toAgentView } from './agent-view.js';

export const agentRevokeInput = z.strictObject({ agentId: idSchema });
export const agentRevokeOutput = z.object({ agent: agentView });

/** `agent.revoke` (admin): the agent's credential stops working (the node must enrol again). */
export const agentRevoke = userProcedure('admin')
  .input(agentRevokeInput)
  .output(agentRevokeOutput)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.db.$transaction(async (tx) => {
      const before = await getAgent(tx, ctx.tenantId, input.agentId);
      if (before.revokedAt) return { agent: toAgentView(before) };
      const agent = await tx.agent.update({ where: { id: before.id }, data: { revokedAt: ctx.deps.now() }, select: agentSelect });
      await writeAudit(tx, {
        tenantId: ctx.tenantId,
        actor: { kind: 'user', id: ctx.principal.userId },
        action: 'agent.revoke',
        targetType: 'agent',
        targetId: agent.id,
        detail: { hostname: agent.hostname },
      });
      return { agent: toAgentView(agent) };
    });
    // A cached credential of this agent stops working now, not when the cache expires.
    ctx.deps.fleet.forgetCredential(input.agentId);
    return result;
  });
