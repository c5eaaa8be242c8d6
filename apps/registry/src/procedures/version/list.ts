import { z } from 'zod';
import { getProgram } from '../../data/programs.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { toVersionSummaryView, versionSummaryView } from '../program/program-view.js';

export const versionListInput = z.strictObject({ name: slugSchema });
export const versionListOutput = z.object({ program: z.string(), versions: z.array(versionSummaryView) });

/** `version.list`: the versions of one program, newest first (yanked ones included, marked). */
export const versionList = userProcedure('viewer')
  .input(versionListInput)
  .output(versionListOutput)
  .query(async ({ ctx, input }) => {
    const p = await getProgram(ctx.db, ctx.tenantId, input.name);
    return { program: p.name, versions: p.versions.map(toVersionSummaryView) };
  });
