import { z } from 'zod';
import { agentSelect, getAgent } from '../../data/agents.js';
import { writeAudit } from '../../data/audit.js';
import { reconcileAgentTargets } from '../../data/deployments.js';
import { fleetTransaction } from '../../data/fleet-gate.js';
import { idSchema, labelsSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { agentView, toAgentView } from './agent-view.js';

export const agentSetLabelsInput = z.strictObject({ agentId: idSchema, labels: labelsSchema });
export const agentSetLabelsOutput = z.object({ agent: agentView });

/** `agent.setLabels` (admin): replaces an agent's labels (what deployment selectors match). */
export const agentSetLabels = userProcedure('admin')
  .input(agentSetLabelsInput)
  .output(agentSetLabelsOutput)
  .mutation(async ({ ctx, input }) => {
    const result = await fleetTransaction(ctx.db, ctx.tenantId, 'agent setLabels', async (tx) => {
      const before = await getAgent(tx, ctx.tenantId, input.agentId);
      const agent = await tx.agent.update({ where: { id: before.id }, data: { labels: input.labels }, select: agentSelect });
      await writeAudit(tx, {
        tenantId: ctx.tenantId,
        actor: { kind: 'user', id: ctx.principal.userId },
        action: 'agent.setLabels',
        targetType: 'agent',
        targetId: agent.id,
        detail: { from: before.labels ?? {}, to: input.labels },
      });
      // Targets for running deployments it now matches; those it no longer matches are stopped by the agent.
      if (!agent.revokedAt) await reconcileAgentTargets(tx, ctx.tenantId, { kind: 'user', id: ctx.principal.userId }, agent.id, input.labels);
      return { agent: toAgentView(agent) };
    });
    ctx.deps.fleet.invalidateAgent(input.agentId);
    return result;
  });
