import { z } from 'zod';
import { writeAudit } from '../../data/audit.js';
import { agentTargets } from '../../data/deployments.js';
import { idSchema } from '../../schemas.js';
import { agentProcedure } from '../../trpc.js';
import { targetStatuses } from '../deployment/deployment-view.js';

const counter = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const text = (max: number) => z.string().max(max);

/**
 * Why a target is in its status, as data (the agent's side of docs/OUTPUTS.md): the verdict and
 * field moves of a running target, the reasons of a refused one (which program, event, field,
 * instruction), the fault of a failed one (program, instruction, the record it ran on), the limit
 * that stopped one (`cpu-budget`, `fault-rate`, `memory-budget`), and which run, digest and
 * kernel profile it is about.
 */
export const targetStatusDetail = z.strictObject({
  /** A stable code: `compatible`, `relocated`, `incompatible`, `digest-mismatch`, `load-fault`, `fault-rate`, `cpu-budget`, `memory-budget`, `throttled`, `stopped`… */
  code: z.string().regex(/^[a-z][a-z0-9-]{0,47}$/),
  verdict: z.enum(['compatible', 'relocated', 'incompatible', 'unknown']).optional(),
  /** Field moves of a relocation (`switch: next_pid: offset 56 → 52`). */
  moves: z.array(text(500)).max(200).optional(),
  /** Which provider implementation runs each provider probe (`proc:::fork via proc@1.2.0, implementation for __data_loc parent_comm`). */
  via: z.array(text(500)).max(50).optional(),
  /** Why the node's own profile refuses the program. */
  refusal: z
    .array(
      z.strictObject({
        kind: text(64),
        program: text(200),
        event: text(200),
        field: text(200).optional(),
        insnIndex: z.number().int().min(0).max(1_000_000).optional(),
        text: text(1000),
      }),
    )
    .max(50)
    .optional(),
  /** A fault: where, why, and the record it ran on (hex, cut to 512 bytes). */
  fault: z
    .strictObject({
      program: text(200).optional(),
      map: text(200).optional(),
      insnIndex: z.number().int().min(0).max(1_000_000).optional(),
      insnText: text(200).optional(),
      message: text(1000),
      count: counter.optional(),
      record: z.strictObject({ eventId: z.number().int().min(0).max(65_535), cpu: z.number().int().min(0).max(65_535), timeNs: z.string().regex(/^\d{1,20}$/), hex: z.string().regex(/^[0-9a-f]{0,1024}$/) }).optional(),
    })
    .optional(),
  /** The limit and the measure behind a `cpu-budget`, `fault-rate` or `memory-budget` code. */
  limit: z.strictObject({ used: z.number().min(0), budget: z.number().min(0), unit: text(16), windowSeconds: z.number().min(0).optional() }).optional(),
  runId: text(64).optional(),
  digest: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  kernelHash: z.string().regex(/^[0-9a-f]{64}$/).optional(),
});
export type TargetStatusDetail = z.infer<typeof targetStatusDetail>;

export const agentReportStatusInput = z.strictObject({
  targets: z
    .array(
      z.strictObject({
        targetId: idSchema,
        status: z.enum(targetStatuses),
        /** Why a target is refused or failed (the relocation's reason), or a note. */
        message: z.string().max(2000).optional(),
        counters: z.strictObject({ eventsSeen: counter, eventsLost: counter, runtimeNs: counter, kernelReadsFailed: counter }).partial().optional(),
        /** The reason as data (the message says it in words). */
        detail: targetStatusDetail.optional(),
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
          data: {
            status: t.status,
            reason: t.message ?? null,
            ...(t.counters || t.detail ? { detail: { ...(t.counters ? { counters: t.counters } : {}), ...(t.detail ? { status: t.detail } : {}), reportedAt: now.toISOString() } } : {}),
          },
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
            detail: { deploymentId: before.deploymentId, from: before.status, to: t.status, ...(t.message ? { message: t.message } : {}), ...(t.detail ? { code: t.detail.code } : {}) },
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
