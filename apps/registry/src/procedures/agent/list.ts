import { z } from 'zod';
import { listAgentsPage } from '../../data/fleet-views.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { selectorSchema } from '../deployment/deployment-view.js';
import { agentView, toAgentView } from './agent-view.js';

export const agentListInput = z
  .strictObject({
    limit: z.number().int().min(1).max(500).default(500),
    /** The `nextCursor` of the previous page. */
    cursor: idSchema.optional(),
    /** Hostname contains this. */
    q: z.string().trim().max(100).regex(/^[^\p{Cc}]*$/u, 'no control characters').optional(),
    /** Only agents whose labels include every pair (`k=v,k2=v2`). */
    selector: selectorSchema.optional(),
  })
  .optional();
export const agentListOutput = z.object({
  agents: z.array(
    agentView.extend({
      kernel: z.object({ name: z.string(), release: z.string(), machine: z.string() }).nullable(),
      /** The agent's targets by status (`running`, `refused` …). */
      targets: z.record(z.string(), z.number().int()),
    }),
  ),
  nextCursor: idSchema.nullable(),
});

/** `agent.list`: the tenant's agents with their kernel and targets by status, a page at a time. */
export const agentList = userProcedure('viewer')
  .input(agentListInput)
  .output(agentListOutput)
  .query(async ({ ctx, input }) => {
    const limit = input?.limit ?? 500;
    const rows = await listAgentsPage(ctx.db, ctx.tenantId, { limit, cursor: input?.cursor, search: input?.q || undefined, selector: input?.selector });
    return {
      agents: rows.map(({ kernelProfile, targetCounts, ...a }) => ({ ...toAgentView(a), kernel: kernelProfile, targets: targetCounts })),
      nextCursor: rows.length === limit ? (rows.at(-1)?.id ?? null) : null,
    };
  });
