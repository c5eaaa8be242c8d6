import { z } from 'zod';
import { previewDeployment } from '../../data/fleet-views.js';
import { idSchema, iso, isoDate, slugSchema } from '../../schemas.js';
import { semverSchema } from '../program/publish.js';
import { userProcedure } from '../../trpc.js';
import { verdictSchema } from '../compat/compat-view.js';
import { selectorSchema } from './deployment-view.js';

export const deploymentPreviewInput = z.strictObject({
  name: slugSchema,
  version: semverSchema,
  selector: selectorSchema,
  /** Agents listed (all are counted). */
  limit: z.number().int().min(1).max(500).default(100),
});
export const deploymentPreviewOutput = z.object({
  versionId: idSchema,
  /** Unrevoked agents the selector matches now (a deployment would make one target each). */
  total: z.number().int(),
  agents: z.array(
    z.object({
      id: idSchema,
      hostname: z.string(),
      labels: z.record(z.string(), z.string()),
      lastSeenAt: isoDate.nullable(),
      profile: z.object({ name: z.string(), release: z.string(), machine: z.string() }).nullable(),
      /** The version's verdict on the agent's own kernel; null while not computed (or the agent reported no kernel yet). */
      verdict: verdictSchema.nullable(),
      reason: z.string().nullable(),
    }),
  ),
  /** Listed agents by predicted verdict (`compatible` … , `pending`, `no-profile`). */
  counts: z.record(z.string(), z.number().int()),
});

/**
 * `deployment.preview` (publisher): the agents `deployment.create` would target with this selector,
 * each with the version's predicted verdict on its kernel. Writes nothing. A yanked version is `CONFLICT`.
 */
export const deploymentPreview = userProcedure('publisher')
  .input(deploymentPreviewInput)
  .output(deploymentPreviewOutput)
  .query(async ({ ctx, input }) => {
    const p = await previewDeployment(ctx.db, ctx.tenantId, { name: input.name, version: input.version, selector: input.selector, limit: input.limit });
    return {
      versionId: p.versionId,
      total: p.total,
      agents: p.rows.map((r) => ({
        id: r.agent.id,
        hostname: r.agent.hostname,
        labels: (r.agent.labels ?? {}) as Record<string, string>,
        lastSeenAt: iso(r.agent.lastSeenAt),
        profile: r.agent.kernelProfile,
        verdict: r.verdict,
        reason: r.reason,
      })),
      counts: p.counts,
    };
  });
