import { z } from 'zod';
import { type Assignment, loadAssignments } from '../../data/deployments.js';
import { notFound } from '../../errors.js';
import { agentsAssignments, assignmentsEtag, tenantAssignments } from '../../fleet/warm.js';
import { idSchema } from '../../schemas.js';
import { agentProcedure } from '../../trpc.js';
import { desiredStates } from '../deployment/deployment-view.js';

/** How long an agent waits before its next poll (it adds its own jitter). */
export const pollAfterSeconds = 10;

export const agentPollInput = z.strictObject({ etag: z.string().max(128).optional() }).optional();
export const assignmentView = z.object({
  targetId: idSchema,
  deploymentId: idSchema,
  program: z.object({ name: z.string(), version: z.string() }),
  versionId: idSchema,
  /** sha256 of the artifact: fetch it with `agent.artifact({ targetId })` and check it. */
  digest: z.string(),
  size: z.number().int(),
  artifactKind: z.string(),
  /** `.rodata` options to set before load, by variable name (decimal text or `true`/`false`). */
  options: z.record(z.string(), z.string()),
  desiredState: z.enum(desiredStates),
  /**
   * A program pinning providers: the release each pin resolves to now (`io@1.1.0`, sorted). A
   * provider release or yank changes it (and the ETag): the agent fetches the definitions again
   * (`agent.artifact`) and restarts the target through them.
   */
  providers: z.array(z.string()).optional(),
  /** The tenant checks plain `char` signedness too (its compat setting): the agent's verdict does as its matrix. */
  strictCharSign: z.literal(true).optional(),
});
export const agentPollOutput = z.discriminatedUnion('notModified', [
  z.object({ notModified: z.literal(true), etag: z.string(), pollAfterSeconds: z.number() }),
  z.object({ notModified: z.literal(false), etag: z.string(), pollAfterSeconds: z.number(), assignments: z.array(assignmentView) }),
]);

/**
 * `agent.poll` (agent): the agent's assignments: what to run (desired running) and what to stop
 * (desired stopped, listed until the agent reports the target stopped); anything not listed is not
 * the agent's. With the ETag of its last answer the agent gets `notModified`. An unchanged poll is
 * answered from memory (no database query); last-seen times are written in batches.
 */
export const agentPoll = agentProcedure
  .input(agentPollInput)
  .output(agentPollOutput)
  .query(async ({ ctx, input }) => {
    const { fleet } = ctx.deps;
    const { agentId } = ctx.principal;
    fleet.markSeen(agentId);
    let current = fleet.cachedAssignments<Assignment[]>(ctx.tenantId, agentId);
    if (!current && (await fleet.ensureGroupLoaded(agentId, (tenantId, ids) => agentsAssignments(ctx.db, tenantId, ids)))) {
      // One of many agents a change touched: all of them in one load, shared by their polls.
      current = fleet.cachedAssignments<Assignment[]>(ctx.tenantId, agentId);
    }
    if (!current) {
      // First poll of the tenant since start (or since another replica changed it): all its
      // agents in one load, shared by the polls that arrive meanwhile.
      await fleet.ensureTenantLoaded(ctx.tenantId, () => tenantAssignments(ctx.db, ctx.tenantId));
      current = fleet.cachedAssignments<Assignment[]>(ctx.tenantId, agentId);
    }
    if (!current) {
      fleet.countLoad();
      const generations = fleet.generations(ctx.tenantId, agentId);
      const assignments = await loadAssignments(ctx.db, ctx.tenantId, agentId);
      if (!assignments) throw notFound('agent', agentId);
      current = { etag: assignmentsEtag(assignments), assignments };
      fleet.storeAssignments(agentId, generations, current);
    }
    if (input?.etag === current.etag) return { notModified: true as const, etag: current.etag, pollAfterSeconds };
    return { notModified: false as const, etag: current.etag, pollAfterSeconds, assignments: current.assignments };
  });
