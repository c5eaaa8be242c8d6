import { z } from 'zod';
import { getDeployment, stopDeployment, targetCounts } from '../../data/deployments.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { deploymentView, toDeploymentView } from './deployment-view.js';

export const deploymentStopInput = z.strictObject({ id: idSchema });
export const deploymentStopOutput = z.object({ deployment: deploymentView, changed: z.boolean() });

/** `deployment.stop` (publisher): desired state stopped; agents stop its targets at their next poll. */
export const deploymentStop = userProcedure('publisher')
  .input(deploymentStopInput)
  .output(deploymentStopOutput)
  .mutation(async ({ ctx, input }) => {
    const { changed, agentIds } = await ctx.db.$transaction((tx) => stopDeployment(tx, ctx.tenantId, { kind: 'user', id: ctx.principal.userId }, input.id));
    // Only the agents with a target of it have other assignments now.
    ctx.deps.fleet.invalidateAgents(ctx.tenantId, agentIds, input.id);
    const d = await getDeployment(ctx.db, ctx.tenantId, input.id);
    return { deployment: toDeploymentView(d, (await targetCounts(ctx.db, ctx.tenantId, [d.id])).get(d.id)), changed };
  });
