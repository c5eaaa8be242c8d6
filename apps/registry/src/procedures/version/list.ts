import { z } from 'zod';
import { listVersionsPage } from '../../data/program-pages.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { toVersionSummaryView, versionSummaryView } from '../program/program-view.js';

export const versionListInput = z.strictObject({
  name: slugSchema,
  /** Versions to skip (newest first), for the next page. */
  offset: z.number().int().min(0).max(1_000_000).default(0),
  limit: z.number().int().min(1).max(500).default(500),
});
export const versionListOutput = z.object({ program: z.string(), versions: z.array(versionSummaryView), total: z.number().int() });

/** `version.list`: the versions of one program, newest first (yanked ones included, marked), a page at a time. */
export const versionList = userProcedure('viewer')
  .input(versionListInput)
  .output(versionListOutput)
  .query(async ({ ctx, input }) => {
    const p = await listVersionsPage(ctx.db, ctx.tenantId, input.name, { offset: input.offset, limit: input.limit });
    return { program: p.program, versions: p.versions.map(toVersionSummaryView), total: p.total };
  });
