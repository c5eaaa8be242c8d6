import { z } from 'zod';
import { yankProvider } from '../../data/providers.js';
import { slugSchema } from '../../schemas.js';
import { adminProcedure, userProcedure } from '../../trpc.js';
import { semverSchema } from '../program/publish.js';
import { providerVersionView, toProviderVersionView } from './provider-view.js';

export const providerYankInput = z.strictObject({ name: slugSchema, version: semverSchema, reason: z.string().trim().min(1).max(500).regex(/^[^\p{Cc}]+$/u, 'no control characters') });
export const providerYankOutput = z.object({ version: providerVersionView });

/**
 * `provider.yank` (publisher): marks a version of one of the tenant's own providers yanked. It
 * stays readable; resolution skips it, and the verdicts that followed it are recomputed. Another
 * tenant's provider (or an instance-wide one) is `NOT_FOUND`; a yanked version `CONFLICT`.
 */
export const providerYank = userProcedure('publisher')
  .input(providerYankInput)
  .output(providerYankOutput)
  .mutation(async ({ ctx, input }) => {
    const v = await yankProvider(ctx.db, { tenantId: ctx.tenantId, actor: { kind: 'user', id: ctx.principal.userId }, ...input, now: ctx.deps.now() });
    ctx.deps.compatJobs?.kick();
    return { version: toProviderVersionView(v) };
  });

/** `provider.yankInstance` (instance admin): the same for an instance-wide provider. */
export const providerYankInstance = adminProcedure
  .input(providerYankInput)
  .output(providerYankOutput)
  .mutation(async ({ ctx, input }) => {
    const v = await yankProvider(ctx.db, { tenantId: null, actor: { kind: 'admin', id: ctx.principal.credentialId }, ...input, now: ctx.deps.now() });
    ctx.deps.compatJobs?.kick();
    return { version: toProviderVersionView(v) };
  });
