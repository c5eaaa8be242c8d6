import { z } from 'zod';
import { yankVersion } from '../../data/programs.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { toVersionDetailView, versionDetailView } from '../program/program-view.js';
import { semverSchema } from '../program/publish.js';

export const versionYankInput = z.strictObject({ name: slugSchema, version: semverSchema, reason: z.string().trim().min(1).max(500).regex(/^[^\p{Cc}]+$/u, 'no control characters') });
export const versionYankOutput = z.object({ version: versionDetailView });

/**
 * `version.yank` (publisher): marks a version yanked with a reason. It stays readable (listed,
 * marked); deployments of it are refused. Yanking a yanked version is `CONFLICT`.
 */
export const versionYank = userProcedure('publisher')
  .input(versionYankInput)
  .output(versionYankOutput)
  .mutation(async ({ ctx, input }) => {
    const v = await yankVersion(ctx.db, {
      tenantId: ctx.tenantId,
      actor: { kind: 'user', id: ctx.principal.userId },
      name: input.name,
      version: input.version,
      reason: input.reason,
      now: ctx.deps.now(),
    });
    return { version: toVersionDetailView(v) };
  });
