import { z } from 'zod';
import { getProgram } from '../../data/programs.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { programView, toProgramView, toVersionSummaryView, versionSummaryView } from './program-view.js';

export const programGetInput = z.strictObject({ name: slugSchema });
export const programGetOutput = z.object({ program: programView, versions: z.array(versionSummaryView) });

/** `program.get`: one program of the tenant and its versions (newest first); another tenant's is `NOT_FOUND`. */
export const programGet = userProcedure('viewer')
  .input(programGetInput)
  .output(programGetOutput)
  .query(async ({ ctx, input }) => {
    const { versions, ...p } = await getProgram(ctx.db, ctx.tenantId, input.name);
    return { program: toProgramView(p), versions: versions.map(toVersionSummaryView) };
  });
