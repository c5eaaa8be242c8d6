import { z } from 'zod';
import { listPrograms } from '../../data/programs.js';
import { labelSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { programView, toProgramView } from './program-view.js';

export const programListInput = z.strictObject({ tag: labelSchema.optional() }).optional();
export const programListOutput = z.object({ programs: z.array(programView) });

/** `program.list`: the tenant's programs (optionally those with a tag). */
export const programList = userProcedure('viewer')
  .input(programListInput)
  .output(programListOutput)
  .query(async ({ ctx, input }) => ({ programs: (await listPrograms(ctx.db, ctx.tenantId, { tag: input?.tag })).map(toProgramView) }));
