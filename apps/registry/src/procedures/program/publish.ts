import { z } from 'zod';
import { base64Schema } from '../../base64.js';
import { profileBuildFormatTexts } from '../../data/kernels.js';
import { getProgram, parseSemver, publishVersion } from '../../data/programs.js';
import { resolveProviders } from '../../data/providers.js';
import { labelSchema, slugSchema, textSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { programView, toProgramView, toVersionDetailView, versionDetailView } from './program-view.js';

/** The largest artifact accepted (base64 in the JSON body, within the 8 MiB request limit). */
export const maxArtifactBytes = 4 * 1024 * 1024;

export const semverSchema = z
  .string()
  .max(128)
  .refine((s) => parseSemver(s) !== undefined, 'not a semantic version (semver.org): MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]');

export const programPublishInput = z.strictObject({
  name: slugSchema,
  /** Semantic version (semver.org): `1.2.3`, `1.0.0-rc.1`. */
  version: semverSchema,
  /** The ELF object (clang -target bpf), Probeyard assembly text, or a script artifact (packages/script), base64. */
  artifact: z.string().min(1, 'artifact: empty').pipe(base64Schema('artifact', maxArtifactBytes)),
  /** Set on the program (a new one, or replacing the current text). */
  description: textSchema(2000).optional(),
  tags: z.array(labelSchema).max(32).optional(),
  /**
   * A kernel profile of the tenant the artifact was built against: assembly field symbols
   * resolve to its offsets, and hard-coded offsets of an object are named from its formats.
   */
  builtAgainst: slugSchema.optional(),
  /**
   * For provider probes (a script's `proc:::exec`, a compiled object's `SEC("provider/proc/exec")`): the major version of each provider to pin
   * (`{ "proc": 1 }`); a provider not named is pinned to the major of its newest release.
   */
  providers: z.record(slugSchema, z.number().int().min(0).max(0x7fffffff)).optional(),
});
export const programPublishOutput = z.object({
  program: programView,
  version: versionDetailView,
  /** False when this exact version with these exact bytes existed (nothing was written). */
  created: z.boolean(),
  /** The compat job computing this version on every kernel profile of the tenant (null when not created). */
  compatJobId: z.string().nullable(),
});

/**
 * `program.publish` (publisher): parse the artifact, verify every program in it, build the
 * manifest, and store the version — and the program when it is new — with a compat job and an
 * audit row, in one transaction. A program the verifier rejects is `UNPROCESSABLE_CONTENT` with
 * its diagnostics, and nothing is stored; the same version with other bytes is `CONFLICT`, with
 * the same bytes a no-op.
 */
export const programPublish = userProcedure('publisher')
  .input(programPublishInput)
  .output(programPublishOutput)
  .mutation(async ({ ctx, input }) => {
    const bytes = new Uint8Array(Buffer.from(input.artifact, 'base64'));
    const builtAgainst = input.builtAgainst;
    // provider probes (a script's `proc:::exec`, a compiled object's `SEC("provider/proc/exec")`)
    // resolve through the providers the tenant sees (its own, then the instance's)
    let providers = await resolveProviders(ctx.db, ctx.tenantId);
    if (input.providers !== undefined) {
      const pinned = await resolveProviders(ctx.db, ctx.tenantId, input.providers);
      providers = [...pinned, ...providers.filter((p) => !Object.hasOwn(input.providers!, p.name))];
    }
    // On a verifier worker, under a deadline, fairly between tenants (src/jobs/verifier-pool.ts).
    const read = await ctx.deps.verifier.readArtifact(
      ctx.tenantId,
      bytes,
      builtAgainst === undefined ? undefined : (events) => profileBuildFormatTexts(ctx.db, ctx.tenantId, builtAgainst, events),
      providers,
    );
    const r = await publishVersion(
      ctx.db,
      {
        tenantId: ctx.tenantId,
        actor: { kind: 'user', id: ctx.principal.userId },
        name: input.name,
        version: input.version,
        bytes,
        description: input.description,
        tags: input.tags,
      },
      read,
      ctx.deps.hooks,
    );
    if (r.created) ctx.deps.compatJobs?.kick();
    const { versions: _, ...program } = await getProgram(ctx.db, ctx.tenantId, input.name);
    return { program: toProgramView(program), version: toVersionDetailView(r.version), created: r.created, compatJobId: r.jobId };
  });
