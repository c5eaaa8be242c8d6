import { z } from 'zod';
import { writeAudit } from '../../data/audit.js';
import { compatEngineOf, enqueueCompatJob, tenantCompatSettings } from '../../data/compat.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';

/** A tenant's compat settings: how its matrix is computed. */
export const compatSettingsView = z.object({
  /**
   * Also refuse a read of a plain `char` field whose signedness changed (`signedness-changed`).
   * Off by default: `char` is text, and its signedness is the architecture's (x86 signed before
   * Linux 6.2, ARM unsigned). A signedness change of any other field is refused always.
   */
  strictCharSign: z.boolean(),
  /** The engine string of the tenant's current results (results of another are recomputed). */
  engine: z.string(),
});

export const compatSettingsOutput = z.object({ settings: compatSettingsView });

/** `compat.settings` (viewer): the tenant's compat settings. */
export const compatSettings = userProcedure('viewer')
  .output(compatSettingsOutput)
  .query(async ({ ctx }) => {
    const s = await tenantCompatSettings(ctx.db, ctx.tenantId);
    return { settings: { ...s, engine: compatEngineOf(s) } };
  });

export const compatSetSettingsInput = z.strictObject({ strictCharSign: z.boolean() });
export const compatSetSettingsOutput = z.object({
  settings: compatSettingsView,
  /** The job computing the tenant's matrix again with the new settings; null when nothing changed. */
  compatJobId: idSchema.nullable(),
});

/**
 * `compat.setSettings` (admin): changes how the tenant's matrix is computed. A change queues a job
 * that computes every (version, profile) pair again (their results carry the old settings'
 * engine string); the old verdicts stay visible until it has.
 */
export const compatSetSettings = userProcedure('admin')
  .input(compatSetSettingsInput)
  .output(compatSetSettingsOutput)
  .mutation(async ({ ctx, input }) => {
    const r = await ctx.db.$transaction(async (tx) => {
      const before = await tenantCompatSettings(tx, ctx.tenantId);
      if (before.strictCharSign === input.strictCharSign) return { settings: before, jobId: null };
      await tx.tenant.update({ where: { id: ctx.tenantId }, data: { strictCharSign: input.strictCharSign }, select: { id: true } });
      const job = await enqueueCompatJob(tx, ctx.tenantId, null);
      await writeAudit(tx, {
        tenantId: ctx.tenantId,
        actor: { kind: 'user', id: ctx.principal.userId },
        action: 'compat.setSettings',
        targetType: 'tenant',
        targetId: ctx.tenantId,
        detail: { strictCharSign: input.strictCharSign, compatJob: job.id },
      });
      return { settings: { strictCharSign: input.strictCharSign }, jobId: job.id };
    });
    if (r.jobId !== null) {
      ctx.deps.compatJobs?.kick();
      // agents check with the tenant's setting (agent.poll's `strictCharSign`): their answers change
      ctx.deps.fleet.invalidateTenant(ctx.tenantId);
    }
    return { settings: { ...r.settings, engine: compatEngineOf(r.settings) }, compatJobId: r.jobId };
  });
