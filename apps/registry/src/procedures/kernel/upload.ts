import { z } from 'zod';
import { base64Schema } from '../../base64.js';
import { insertProfileFormats, parseEventsTarball, parseTraceDatUpload, profileSelect, profileTransaction } from '../../data/kernels.js';
import { writeAudit } from '../../data/audit.js';
import { enqueueCompatJob } from '../../data/compat.js';
import type { Tx } from '../../data/tx.js';
import { isUniqueViolation, RegistryError } from '../../errors.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { kernelProfileView, toKernelProfileView } from './profile-view.js';

/** The largest tarball accepted (base64 in the JSON body, within the 8 MiB request limit). */
export const maxTarballBytes = 5 * 1024 * 1024;

/** A `.tar` or `.tar.gz` of a tracefs `events/` tree, base64 (also what agents report). */
export const tarballSchema = base64Schema('tarball', maxTarballBytes);

export const kernelUploadInput = z
  .strictObject({
    name: slugSchema,
    /** `uname -r`, when known (a trace.dat tells its own). */
    release: z.string().max(128).optional(),
    machine: z.string().max(32).optional(),
    /**
     * The tarball holds some of the kernel's events only (a missing event is `unknown`, not
     * `incompatible`). A trace.dat is always partial.
     */
    partial: z.boolean().optional(),
    /** A `.tar` or `.tar.gz` of a tracefs `events/` tree, base64. */
    tarball: tarballSchema.optional(),
    /** Or a trace.dat (trace-cmd v6/v7), base64: a profile of the formats it recorded. */
    traceDat: base64Schema('traceDat', maxTarballBytes).optional(),
  })
  .refine((i) => (i.tarball === undefined) !== (i.traceDat === undefined), { message: 'give exactly one of tarball and traceDat', path: ['tarball'] });
export const kernelUploadOutput = z.object({
  profile: kernelProfileView,
  /** Format files of the tree that did not parse (the rest of the profile is kept). */
  errors: z.array(z.object({ path: z.string(), message: z.string() })),
  /** Formats no other profile of the tenant has (counted per tenant: what other tenants uploaded is not told). */
  newFormats: z.number().int(),
  /** The compat job computing every version of the tenant on this profile. */
  compatJobId: z.string(),
});

/**
 * How many of `rows`' formats no profile of the tenant has yet. Formats are stored once for the
 * instance, but whether a format row already existed says what other tenants uploaded: the count
 * is the tenant's own (issue 13, finding 7).
 */
async function countNewFormatsOfTenant(tx: Tx, tenantId: string, rows: readonly { hash: string }[]): Promise<number> {
  const hashes = [...new Set(rows.map((r) => r.hash))];
  if (hashes.length === 0) return 0;
  const known = await tx.kernelProfileFormat.findMany({
    where: { formatHash: { in: hashes }, profile: { tenantId } },
    distinct: ['formatHash'],
    select: { formatHash: true },
  });
  return hashes.length - known.length;
}

/**
 * `kernel.upload` (publisher): a kernel profile from a tarball of an `events/` tree (complete,
 * unless `partial`) or from the formats a trace.dat carries (partial), with a compat job for
 * every version of the tenant. Format files
 * are stored once by content hash however many profiles share them; a profile with the same
 * formats as one the tenant has, or the same name, is a CONFLICT. Nothing is written on error.
 */
export const kernelUpload = userProcedure('publisher')
  .input(kernelUploadInput)
  .output(kernelUploadOutput)
  .mutation(async ({ ctx, input }) => {
    // Parsed on a worker thread, with a deadline and a memory cap (src/data/upload-parser.ts).
    const fromDat = input.traceDat !== undefined ? await parseTraceDatUpload(ctx.deps.uploads, input.traceDat, ctx.tenantId) : undefined;
    const set = fromDat ?? (await parseEventsTarball(ctx.deps.uploads, input.tarball ?? '', ctx.tenantId));
    const { rows } = set;
    // a trace.dat holds only the events it recorded; a tree is complete unless marked partial
    const complete = fromDat === undefined && input.partial !== true;
    try {
      const { profile, newFormats, jobId } = await ctx.db.$transaction(async (tx) => {
        const made = await tx.kernelProfile.create({
          data: {
            tenantId: ctx.tenantId,
            name: input.name,
            release: input.release ?? set.release,
            machine: input.machine ?? fromDat?.machine ?? '',
            source: fromDat ? 'trace_dat' : 'events_tree',
            complete,
            contentHash: set.hash,
          },
          select: { id: true },
        });
        // counted per tenant before this profile links them (issue 13, finding 7)
        const newFormats = await countNewFormatsOfTenant(tx, ctx.tenantId, rows);
        // In chunks that let other requests run between them (src/data/kernels.ts).
        await insertProfileFormats(tx, made.id, rows);
        const created = await tx.kernelProfile.findUniqueOrThrow({ where: { id: made.id }, select: profileSelect });
        const job = await enqueueCompatJob(tx, ctx.tenantId, created.id);
        await writeAudit(tx, {
          tenantId: ctx.tenantId,
          actor: { kind: 'user', id: ctx.principal.userId },
          action: 'kernel.upload',
          targetType: 'kernel_profile',
          targetId: created.id,
          detail: { name: input.name, source: fromDat ? 'trace_dat' : 'events_tree', complete, contentHash: set.hash, formats: rows.length, errors: set.errors.length, compatJob: job.id },
        });
        return { profile: created, newFormats, jobId: job.id };
      }, profileTransaction);
      ctx.deps.compatJobs?.kick();
      return {
        profile: toKernelProfileView(profile),
        errors: set.errors,
        newFormats,
        compatJobId: jobId,
      };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const same = await ctx.db.kernelProfile.findFirst({ where: { tenantId: ctx.tenantId, contentHash: set.hash }, select: { name: true } });
      throw new RegistryError(
        'conflict',
        same ? `kernel upload: profile ${same.name} has the same formats (${set.hash.slice(0, 12)})` : `kernel upload: a profile named ${input.name} exists`,
      );
    }
  });
