import { z } from 'zod';
import { getVersion } from '../../data/programs.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { compatCellView, toCompatCellView } from '../compat/compat-view.js';
import { toVersionDetailView, versionDetailView } from '../program/program-view.js';
import { semverSchema } from '../program/publish.js';

export const versionGetInput = z.strictObject({ name: slugSchema, version: semverSchema });
export const versionGetOutput = z.object({
  version: versionDetailView,
  /** The verdict on each kernel profile of the tenant computed so far. */
  compat: z.array(compatCellView.extend({ profile: z.string() })),
});

/** `version.get`: one version with its manifest, verifier report and compat results. */
export const versionGet = userProcedure('viewer')
  .input(versionGetInput)
  .output(versionGetOutput)
  .query(async ({ ctx, input }) => {
    const v = await getVersion(ctx.db, ctx.tenantId, input.name, input.version);
    const results = await ctx.db.compatResult.findMany({
      where: { tenantId: ctx.tenantId, versionId: v.id },
      orderBy: { profile: { name: 'asc' } },
      select: { versionId: true, profileId: true, verdict: true, reasons: true, engine: true, computedAt: true, profile: { select: { name: true } } },
    });
    const { programId: _, ...detail } = v;
    return { version: toVersionDetailView(detail), compat: results.map(({ profile, ...r }) => ({ ...toCompatCellView(r), profile: profile.name })) };
  });
