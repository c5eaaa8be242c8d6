import { z } from 'zod';
import { createDeployment, getDeployment, targetCounts } from '../../data/deployments.js';
import { fleetTransaction } from '../../data/fleet-gate.js';
import { slugSchema } from '../../schemas.js';
import { semverSchema } from '../program/publish.js';
import { userProcedure } from '../../trpc.js';
import { deploymentOptionsSchema, deploymentView, selectorSchema, toDeploymentView } from './deployment-view.js';

export const deploymentCreateInput = z.strictObject({
  /** Program name. */
  name: slugSchema,
  /** The version text, exactly as published (`1.2.0`). */
  version: semverSchema,
  /** `k=v,k2=v2`: agents whose labels include every pair. */
  selector: selectorSchema,
  /**
   * `.rodata` options by variable name (`{ filter_pid: "42", filter_failed: "true" }`), set before
   * load as a libbpf tool's command line sets them; a name the version has no read-only variable
   * of, or a value that does not fit it, is refused.
   */
  options: deploymentOptionsSchema.optional(),
});
export const deploymentCreateOutput = z.object({ deployment: deploymentView });

/**
 * `deployment.create` (publisher): deploys a version to every agent of the tenant whose labels
 * match the selector, one target each; agents that enrol or are relabelled later join it. Its
 * options (`.rodata` variables) go to every target with the assignment.
 */
export const deploymentCreate = userProcedure('publisher')
  .input(deploymentCreateInput)
  .output(deploymentCreateOutput)
  .mutation(async ({ ctx, input }) => {
    const made = await fleetTransaction(
      ctx.db,
      ctx.tenantId,
      'deployment create',
      (tx) => createDeployment(tx, { tenantId: ctx.tenantId, actor: { kind: 'user', id: ctx.principal.userId }, name: input.name, version: input.version, selector: input.selector, options: input.options ?? {} }),
      // Thousands of targets, and on a loaded server a wait for its turn and a pooled connection (default 2 s).
      { timeout: 60_000, maxWait: 30_000 },
    );
    // Only the agents that got a target of it have other assignments now.
    ctx.deps.fleet.invalidateAgents(ctx.tenantId, made.agentIds, made.id);
    const d = await getDeployment(ctx.db, ctx.tenantId, made.id);
    return { deployment: toDeploymentView(d, (await targetCounts(ctx.db, ctx.tenantId, [d.id])).get(d.id)) };
  });
