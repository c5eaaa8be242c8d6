import { z } from 'zod';
import { latestOutputs } from '../../data/output-store.js';
import { idSchema, iso, isoDate } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { mergedMapView, targetOutputView } from './output-view.js';

export const outputLatestInput = z.strictObject({ deploymentId: idSchema, targetId: idSchema.optional() });
export const outputLatestOutput = z.object({
  deployment: z.object({ id: idSchema, program: z.string(), version: z.string(), desiredState: z.string(), selectorText: z.string() }),
  targets: z.array(targetOutputView),
  /** Every map of the latest snapshots, merged across the targets (counts summed by key, histogram slots summed). */
  maps: z.array(mergedMapView),
  totals: z.object({ eventsSeen: z.number(), eventsLost: z.number(), faults: z.number(), outputsDropped: z.number(), kernelReadsFailed: z.number(), cpuNs: z.number(), runs: z.number() }),
  /** When the newest of these batches reached the registry. */
  lastReceivedAt: isoDate.nullable(),
  /** Stored batches that do not follow docs/OUTPUTS.md (left out). */
  malformed: z.number().int(),
});

/** `output.latest` (viewer): a deployment's latest outputs, fleet-wide (merged) and per target; another tenant's is `NOT_FOUND`. */
export const outputLatest = userProcedure('viewer')
  .input(outputLatestInput)
  .output(outputLatestOutput)
  .query(async ({ ctx, input }) => {
    const r = await latestOutputs(ctx.db, ctx.tenantId, { deploymentId: input.deploymentId, targetId: input.targetId });
    const sel = r.deployment.selector as Record<string, string>;
    return {
      deployment: {
        id: r.deployment.id,
        program: r.deployment.version.program.name,
        version: r.deployment.version.version,
        desiredState: r.deployment.desiredState,
        selectorText: Object.entries(sel)
          .map(([k, v]) => `${k}=${v}`)
          .join(','),
      },
      targets: r.targets.map((t) => ({
        ...t,
        agentLastSeenAt: iso(t.agentLastSeenAt),
        snapshot: t.snapshot ? { ...t.snapshot, receivedAt: iso(t.snapshot.receivedAt) } : null,
        counters: t.counters as Record<string, unknown> | null,
      })),
      maps: r.maps,
      totals: r.totals,
      lastReceivedAt: iso(r.lastReceivedAt),
      malformed: r.malformed,
    };
  });
