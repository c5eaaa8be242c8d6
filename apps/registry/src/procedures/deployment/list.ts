import { z } from 'zod';
import { listDeployments, targetCounts } from '../../data/deployments.js';
import { listInput } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { deploymentView, desiredStates, toDeploymentView } from './deployment-view.js';

export const deploymentListInput = listInput.extend({ state: z.enum(desiredStates).optional() }).optional();
export const deploymentListOutput = z.object({ deployments: z.array(deploymentView), nextCursor: z.string().nullable() });

/** `deployment.list` (viewer): the tenant's deployments, newest first, with target counts. */
export const deploymentList = userProcedure('viewer')
  .input(deploymentListInput)
  .output(deploymentListOutput)
  .query(async ({ ctx, input }) => {
    const limit = input?.limit ?? 100;
    const rows = await listDeployments(ctx.db, ctx.tenantId, { limit, cursor: input?.cursor, state: input?.state });
    const counts = await targetCounts(ctx.db, ctx.tenantId, rows.map((r) => r.id));
    return { deployments: rows.map((d) => toDeploymentView(d, counts.get(d.id))), nextCursor: rows.length === limit ? (rows.at(-1)?.id ?? null) : null };
  });
