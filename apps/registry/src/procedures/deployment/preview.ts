import { z } from 'zod';
import { previewDeployment } from '../../data/fleet-views.js';
import { idSchema, iso, isoDate, slugSchema } from '../../schemas.js';
import { semverSchema } from '../program/publish.js';
import { userProcedure } from '../../trpc.js';
import { verdictSchema } from '../compat/compat-view.js';
import { deploymentOptionsSchema, selectorSchema } from './deployment-view.js';

export const deploymentPreviewInput = z.strictObject({
  name: slugSchema,
  version: semverSchema,
  selector: selectorSchema,
  /**
   * The deployment's `.rodata` options: the listed agents' verdicts are then computed with them
   * (a read an option guards counts only when the option turns it on). Checked as
   * `deployment.create` checks them (a 400 in words).
   */
  options: deploymentOptionsSchema.optional(),
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
  /** The options the verdicts were computed with (decimal text; `{}`: the object's defaults, the stored matrix). */
  options: z.record(z.string(), z.string()),
  /** What the verdicts with options leave out (kernels past the preview's limit, a version pinning providers); null when nothing. */
  optionsNote: z.string().nullable(),
});

/**
 * `deployment.preview` (publisher): the agents `deployment.create` would target with this selector,
 * each with the version's predicted verdict on its kernel (with `options`, computed with them on
 * the verifier's workers for the first kernels; see `cellsWithOptions`). Writes nothing. A yanked
 * version is `CONFLICT`.
 */
export const deploymentPreview = userProcedure('publisher')
  .input(deploymentPreviewInput)
  .output(deploymentPreviewOutput)
  .query(async ({ ctx, input }) => {
    const p = await previewDeployment(
      ctx.db,
      ctx.tenantId,
      { name: input.name, version: input.version, selector: input.selector, limit: input.limit, options: input.options },
      (tenant, spec, manifest, profile, settings) => ctx.deps.verifier.compatCell(tenant, spec, manifest, profile, settings),
    );
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
      options: p.options,
      optionsNote: p.optionsNote,
    };
  });
