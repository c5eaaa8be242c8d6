import { z } from 'zod';
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
});

/** `agent.artifact` (agent): the version behind one of the agent's own targets, bytes and spec. */
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
              select: { id: true, version: true, artifactKind: true, artifact: true, digest: true, spec: true, manifest: true, program: { select: { name: true } } },
            },
          },
        },
      },
    });
    if (!t) throw notFound('deployment target', input.targetId);
    const v = t.deployment.version;
    return {
      versionId: v.id,
      program: { name: v.program.name, version: v.version },
      artifactKind: v.artifactKind,
      artifact: Buffer.from(v.artifact).toString('base64'),
      digest: v.digest,
      spec: v.spec,
      manifest: v.manifest,
    };
  });
