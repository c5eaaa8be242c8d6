import { z } from 'zod';
import { resolveProviderReleases } from '../../data/providers.js';
import { idSchema } from '../../schemas.js';
import { notFound } from '../../errors.js';
import { agentProcedure } from '../../trpc.js';

export const agentArtifactInput = z.strictObject({ targetId: idSchema });
export const agentArtifactOutput = z.object({
  versionId: idSchema,
  program: z.object({ name: z.string(), version: z.string() }),
  artifactKind: z.string(),
  /** The published bytes, base64; their sha256 is `digest`. */
  artifact: z.string(),
  digest: z.string(),
  /** The ProgramSpec and manifest (packages/compat) the agent relocates for its node. */
  spec: z.unknown(),
  manifest: z.unknown(),
  /**
   * A script pinning providers: the release of each pin the registry resolves now (the newest
   * non-yanked one of the pinned major, the tenant's own or instance-wide, as the matrix does),
   * with its published text. The agent compiles and checks the script for its own kernel through
   * them (packages/script `checkScriptCompat`) and runs the verdict's spec. Absent otherwise.
   */
  providers: z.array(z.object({ name: z.string(), version: z.string(), text: z.string() })).optional(),
});

/**
 * `agent.artifact` (agent): the version behind one of the agent's own targets, bytes and spec, and
 * for a script pinning providers the releases they resolve to now. Another agent's target (of this
 * tenant or another) is `NOT_FOUND`.
 */
export const agentArtifact = agentProcedure
  .input(agentArtifactInput)
  .output(agentArtifactOutput)
  .query(async ({ ctx, input }) => {
    const t = await ctx.db.deploymentTarget.findFirst({
      where: { id: input.targetId, tenantId: ctx.tenantId, agentId: ctx.principal.agentId },
      select: {
        deployment: {
          select: {
            version: {
              select: { id: true, version: true, artifactKind: true, artifact: true, digest: true, spec: true, manifest: true, providerPins: true, program: { select: { name: true } } },
            },
          },
        },
      },
    });
    if (!t) throw notFound('deployment target', input.targetId);
    const v = t.deployment.version;
    const pins = (v.providerPins ?? {}) as Record<string, number>;
    const providers = Object.keys(pins).length > 0 ? (await resolveProviderReleases(ctx.db, ctx.tenantId, pins)).map((r) => ({ name: r.name, version: r.version, text: r.text })) : undefined;
    return {
      versionId: v.id,
      program: { name: v.program.name, version: v.version },
      artifactKind: v.artifactKind,
      artifact: Buffer.from(v.artifact).toString('base64'),
      digest: v.digest,
      spec: v.spec,
      manifest: v.manifest,
      ...(providers ? { providers } : {}),
    };
  });
