import { z } from 'zod';
import { compatCell } from '../../data/compat-grid.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { compatCellView, toCompatCellView } from './compat-view.js';

export const compatCellInput = z.strictObject({ versionId: idSchema, profileId: idSchema });
export const compatCellOutput = z.object({
  version: z.object({ id: idSchema, program: z.string(), version: z.string() }),
  /** `complete`: the profile holds every event of its kernel. */
  profile: z.object({ id: idSchema, name: z.string(), release: z.string(), machine: z.string(), complete: z.boolean() }),
  /** Null while the pair is not computed yet. */
  cell: compatCellView.nullable(),
});

/** `compat.cell` (viewer): one version on one profile, with reasons and field diffs; another tenant's ids are `NOT_FOUND`. */
export const compatCellProcedure = userProcedure('viewer')
  .input(compatCellInput)
  .output(compatCellOutput)
  .query(async ({ ctx, input }) => {
    const c = await compatCell(ctx.db, ctx.tenantId, input.versionId, input.profileId);
    return {
      version: { id: c.version.id, program: c.version.program.name, version: c.version.version },
      profile: c.profile,
      cell: c.result ? toCompatCellView(c.result) : null,
    };
  });
