import { z } from 'zod';
import { compatMatrix } from '../../data/compat.js';
import { idSchema, iso, isoDate, slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { semverSchema } from '../program/publish.js';
import { compatCellView, toCompatCellView } from './compat-view.js';

export const compatMatrixInput = z
  .strictObject({
    /** Only this program's versions. */
    name: slugSchema.optional(),
    /** Only this version (needs `name`). */
    version: semverSchema.optional(),
    /** Only this kernel profile. */
    profile: slugSchema.optional(),
  })
  .refine((i) => i.version === undefined || i.name !== undefined, { message: 'version needs name', path: ['version'] })
  .optional();
export const compatMatrixOutput = z.object({
  versions: z.array(z.object({ id: idSchema, program: z.string(), version: z.string(), yankedAt: isoDate.nullable() })),
  /** `complete`: the profile holds every event of its kernel (a missing event is incompatible there, unknown elsewhere). */
  profiles: z.array(z.object({ id: idSchema, name: z.string(), release: z.string(), complete: z.boolean() })),
  /** One per computed (version, profile) pair; a pair without a cell is not computed yet. */
  cells: z.array(compatCellView),
  /** Compat jobs of the tenant still queued or running (cells may be missing until they finish). */
  pendingJobs: z.number().int(),
});

/** `compat.matrix`: versions × kernel profiles of the tenant, with verdicts, reasons and field diffs. */
export const compatMatrixProcedure = userProcedure('viewer')
  .input(compatMatrixInput)
  .output(compatMatrixOutput)
  .query(async ({ ctx, input }) => {
    const m = await compatMatrix(ctx.db, ctx.tenantId, { program: input?.name, version: input?.version, profile: input?.profile });
    return {
      versions: m.versions.map((v) => ({ id: v.id, program: v.program.name, version: v.version, yankedAt: iso(v.yankedAt) })),
      profiles: m.profiles,
      cells: m.cells.map(toCompatCellView),
      pendingJobs: m.pendingJobs,
    };
  });
