import { z } from 'zod';
import { yankProvider } from '../../data/providers.js';
import { slugSchema } from '../../schemas.js';
import { adminProcedure, userProcedure } from '../../trpc.js';
import { semverSchema } from '../program/publish.js';
import { invalidatePinningAgents, providerVersionView, toProviderVersionView } from './provider-view.js';

export const providerYankInput = z.strictObject({ name: slugSchema, version: semverSchema, reason: z.string().trim().min(1).max(500).regex(/^[^\p{Cc}]+$/u, 'no control characters') });
export const providerYankOutput = z.object({ version: providerVersionView });

/**
 * `provider.yank` (publisher): marks a version of one of the tenant's own providers yanked. It
 * stays readable; resolution skips it, the verdicts that followed it are recomputed, and the agents
 * running programs that pin its major get a new `agent.poll` answer (the release resolved now). Another
 * tenant's provider (or an instance-wide one) is `NOT_FOUND`; a yanked version `CONFLICT`.
 */
export const providerYank = userProcedure('publisher')
  .input(providerYankInput)
  .output(providerYankOutput)
  .mutation(async ({ ctx, input }) => {
    const r = await yankProvider(ctx.db, { tenantId: ctx.tenantId, actor: { kind: 'user', id: ctx.principal.userId }, ...input, now: ctx.deps.now() });
    ctx.deps.compatJobs?.kick();
    invalidatePinningAgents(ctx.deps.fleet, r.agents, r.version.id);
    return { version: toProviderVersionView(r.version) };
  });

/** `provider.yankInstance` (instance admin): the same for an instance-wide provider. */
export const providerYankInstance = adminProcedure
  .input(providerYankInput)
  .output(providerYankOutput)
  .mutation(async ({ ctx, input }) => {
    const r = await yankProvider(ctx.db, { tenantId: null, actor: { kind: 'admin', id: ctx.principal.credentialId }, ...input, now: ctx.deps.now() });
    ctx.deps.compatJobs?.kick();
    invalidatePinningAgents(ctx.deps.fleet, r.agents, r.version.id);
    return { version: toProviderVersionView(r.version) };
  });
