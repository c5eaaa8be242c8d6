import { z } from 'zod';
import { getAgentDetail } from '../../data/fleet-views.js';
import { idSchema, iso, isoDate } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { desiredStates, targetStatuses } from '../deployment/deployment-view.js';
import { agentView, toAgentView } from './agent-view.js';

export const agentGetInput = z.strictObject({ id: idSchema });
export const agentGetOutput = z.object({
  agent: agentView.extend({ kernel: z.object({ name: z.string(), release: z.string(), machine: z.string() }).nullable() }),
  /** Newest first (at most 500). */
  targets: z.array(
    z.object({
      id: idSchema,
      deploymentId: idSchema,
      program: z.object({ name: z.string(), version: z.string() }),
      status: z.enum(targetStatuses),
      desiredState: z.enum(desiredStates),
      reason: z.string().nullable(),
      counters: z.record(z.string(), z.number()).nullable(),
      updatedAt: isoDate,
    }),
  ),
});

/** `agent.get` (viewer): one agent with its kernel and every target; another tenant's is `NOT_FOUND`. */
export const agentGet = userProcedure('viewer')
  .input(agentGetInput)
  .output(agentGetOutput)
  .query(async ({ ctx, input }) => {
    const d = await getAgentDetail(ctx.db, ctx.tenantId, input.id);
    const { kernelProfile, ...a } = d.agent;
    return { agent: { ...toAgentView(a), kernel: kernelProfile }, targets: d.targets.map((t) => ({ ...t, updatedAt: iso(t.updatedAt) })) };
  });
