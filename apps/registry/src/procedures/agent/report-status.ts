import { z } from 'zod';
import { writeAudit } from '../../data/audit.js';
import { agentTargets } from '../../data/deployments.js';
import { idSchema } from '../../schemas.js';
import { agentProcedure } from '../../trpc.js';
import { targetStatuses } from '../deployment/deployment-view.js';

const counter = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const agentReportStatusInput = z.strictObject({
  targets: z
    .array(
      z.strictObject({
        targetId: idSchema,
        status: z.enum(targetStatuses),
        /** Why a target is refused or failed (the relocation's reason), or a note. */
        message: z.string().max(2000).optional(),
        counters: z.strictObject({ eventsSeen: counter, eventsLost: counter, runtimeNs: counter }).partial().optional(),
      }),
    )
    .min(1)
    .max(200)
    .refine((ts) => new Set(ts.map((t) => t.targetId)).size === ts.length, 'each target at most once'),
});
export const agentReportStatusOutput = z.object({ updated: z.number().int(), changed: z.number().int() });

/**
 * `agent.reportStatus` (agent): status, message and counters of the agent's own targets, all or
 * nothing (a target that is not the agent's is `NOT_FOUND`). A change of status is audited;
 * counters alone are not (they are telemetry).
 */
export const agentReportStatus = agentProcedure
  .input(agentReportStatusInput)
  .output(agentReportStatusOutput)
  .mutation(async ({ ctx, input }) => {
    const { agentId } = ctx.principal;
    const now = ctx.deps.now();
    const changed = await ctx.db.$transaction(async (tx) => {
      const current = await agentTargets(tx, ctx.tenantId, agentId, input.targets.map((t) => t.targetId));
      let n = 0;
      let stopping = false;
      for (const t of input.targets) {
        const before = current.get(t.targetId);
        await tx.deploymentTarget.update({
          where: { id: t.targetId },
          data: { status: t.status, reason: t.message ?? null, ...(t.counters ? { detail: { counters: t.counters, reportedAt: now.toISOString() } } : {}) },
          select: { id: true },
        });
        if (before && before.status !== t.status) {
          n++;
          if (before.status === 'stopped' || t.status === 'stopped') stopping = true;
          await writeAudit(tx, {
            tenantId: ctx.tenantId,
            actor: { kind: 'agent', id: agentId },
            action: 'agent.reportStatus',
            targetType: 'deployment_target',
            targetId: t.targetId,
            detail: { deploymentId: before.deploymentId, from: before.status, to: t.status, ...(t.message ? { message: t.message } : {}) },
          });
        }
      }
      return { n, stopping };
    });
    // A target reported stopped leaves the agent's stop list; other statuses do not change assignments.
    if (changed.stopping) ctx.deps.fleet.invalidateAgent(agentId);
    ctx.deps.fleet.markSeen(agentId);
    return { updated: input.targets.length, changed: changed.n };
  });
