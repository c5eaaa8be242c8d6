import { z } from 'zod';
import { collectReplacedAgentProfile, insertProfileFormats, parseEventsTarball, profileSelect, profileTransaction } from '../../data/kernels.js';
import { writeAudit } from '../../data/audit.js';
import { isUniqueViolation } from '../../errors.js';
import { agentProcedure } from '../../trpc.js';
import { kernelProfileView, toKernelProfileView } from '../kernel/profile-view.js';
import { tarballSchema } from '../kernel/upload.js';
import { enqueueCompatJob, staleProfileResults } from '../../data/compat.js';

export const agentReportProfileInput = z.strictObject({
  release: z.string().max(128).default(''),
  machine: z.string().max(32).default(''),
  /** A `.tar`/`.tar.gz` of the node's tracefs `events/` tree, base64. */
  tarball: tarballSchema,
  /**
   * The node's formats are some of its kernel's only: an agent replaying a recording
   * (`--feed FILE.dat`) knows just the events recorded. Default false: a node's tracefs is whole.
   */
  partial: z.boolean().default(false),
});
export const agentReportProfileOutput = z.object({ profile: kernelProfileView, created: z.boolean() });

/** A profile name from a kernel release and the content hash (`6.8.0-45-generic-3f2a…`). */
function profileName(release: string, hash: string): string {
  const base = release.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[^a-z0-9]+/, '').slice(0, 48);
  return `${base || 'kernel'}-${hash.slice(0, 12)}`;
}

/**
 * `agent.reportProfile` (agent): the node's kernel profile from its own format files — all of
 * them, read from its tracefs, so the profile is complete (a missing event is `incompatible`
 * there); `partial` for an agent that replays a recording. Nodes with the same formats share one
 * profile of the tenant (made by the first one to report it); the agent is linked to it. A
 * profile of the same formats uploaded as partial before becomes complete when a node reports it
 * whole, and its verdicts are computed again.
 */
export const agentReportProfile = agentProcedure
  .input(agentReportProfileInput)
  .output(agentReportProfileOutput)
  .mutation(async ({ ctx, input }) => {
    const set = await parseEventsTarball(ctx.deps.uploads, input.tarball, ctx.tenantId);
    const { rows } = set;
    const attempt = () =>
      ctx.db.$transaction(async (tx) => {
        let profile = await tx.kernelProfile.findUnique({ where: { tenantId_contentHash: { tenantId: ctx.tenantId, contentHash: set.hash } }, select: profileSelect });
        const created = !profile;
        let completed = false;
        if (profile && !profile.complete && !input.partial) {
          // the same formats, read whole from a node's tracefs: every event of that kernel is here
          await tx.kernelProfile.update({ where: { id: profile.id }, data: { complete: true }, select: { id: true } });
          await staleProfileResults(tx, profile.id);
          await enqueueCompatJob(tx, ctx.tenantId, profile.id);
          completed = true;
        }
        if (!profile) {
          const made = await tx.kernelProfile.create({
            data: { tenantId: ctx.tenantId, name: profileName(input.release, set.hash), release: input.release, machine: input.machine, source: 'agent', complete: !input.partial, contentHash: set.hash },
            select: { id: true },
          });
          await insertProfileFormats(tx, made.id, rows);
          profile = await tx.kernelProfile.findUniqueOrThrow({ where: { id: made.id }, select: profileSelect });
          // A new kernel: compute every version of the tenant on it (in the background).
          await enqueueCompatJob(tx, ctx.tenantId, profile.id);
        }
        const before = await tx.agent.findUniqueOrThrow({ where: { id: ctx.principal.agentId }, select: { kernelProfileId: true } });
        await tx.agent.update({ where: { id: ctx.principal.agentId }, data: { kernelProfileId: profile.id, lastSeenAt: ctx.deps.now() }, select: { id: true } });
        await writeAudit(tx, {
          tenantId: ctx.tenantId,
          actor: { kind: 'agent', id: ctx.principal.agentId },
          action: 'agent.reportProfile',
          targetType: 'kernel_profile',
          targetId: profile.id,
          detail: { contentHash: set.hash, created, formats: rows.length, ...(completed ? { completed: true } : {}) },
        });
        const linked = await tx.kernelProfile.findUniqueOrThrow({ where: { id: profile.id }, select: profileSelect });
        return { profile: toKernelProfileView(linked), created, recompute: created || completed, replaced: before.kernelProfileId !== profile.id ? before.kernelProfileId : null };
      }, profileTransaction);
    try {
      const { recompute, replaced, ...r } = await attempt();
      if (recompute) ctx.deps.compatJobs?.kick();
      // The agent's kernel changed: the profile agents made for the old one goes when no agent is left on it.
      if (replaced) await collectReplacedAgentProfile(ctx.db, ctx.tenantId, replaced);
      return r;
    } catch (err) {
      // Another node of the same kernel made the profile meanwhile: link to it.
      if (isUniqueViolation(err)) {
        const { recompute: _, replaced, ...r } = await attempt();
        if (replaced) await collectReplacedAgentProfile(ctx.db, ctx.tenantId, replaced);
        return r;
      }
      throw err;
    }
  });
