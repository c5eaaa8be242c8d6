import { z } from 'zod';
import { getDeployment, listTargets, targetCounts } from '../../data/deployments.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { deploymentView, targetView, toDeploymentView, toTargetView } from './deployment-view.js';

export const deploymentGetInput = z.strictObject({ id: idSchema });
export const deploymentGetOutput = z.object({ deployment: deploymentView, targets: z.array(targetView) });

/** `deployment.get` (viewer): one deployment with its targets and their status. */
export const deploymentGet = userProcedure('viewer')
  .input(deploymentGetInput)
  .output(deploymentGetOutput)
  .query(async ({ ctx, input }) => {
    const d = await getDeployment(ctx.db, ctx.tenantId, input.id);
    const [targets, counts] = await Promise.all([listTargets(ctx.db, ctx.tenantId, d.id), targetCounts(ctx.db, ctx.tenantId, [d.id])]);
    return { deployment: toDeploymentView(d, counts.get(d.id)), targets: targets.map((t) => toTargetView(t, d)) };
  });
