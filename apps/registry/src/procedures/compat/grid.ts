import { z } from 'zod';
import { compatGrid } from '../../data/compat-grid.js';
import { idSchema, slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';

const text = z.string().trim().max(100).regex(/^[^\p{Cc}]*$/u, 'no control characters');

export const compatGridInput = z
  .strictObject({
    program: slugSchema.optional(),
    /** Kernel release contains this. */
    release: text.optional(),
    /** Kernel architecture (`uname -m`) exactly. */
    machine: text.optional(),
    offset: z.number().int().min(0).max(1_000_000).default(0),
    limit: z.number().int().min(1).max(1000).default(500),
  })
  .optional();
export const compatGridOutput = z.object({
  versions: z.array(z.object({ id: idSchema, program: z.string(), version: z.string(), yanked: z.boolean() })),
  /** Versions matching the filter, over every page. */
  totalVersions: z.number().int(),
  /** `complete`: the profile holds every event of its kernel (a missing event is incompatible there, unknown on a partial one). */
  profiles: z.array(z.object({ id: idSchema, name: z.string(), release: z.string(), machine: z.string(), complete: z.boolean() })),
  /** Architectures of the tenant's profiles, for the filter. */
  machines: z.array(z.string()),
  /** One string per version, one letter per profile: c compatible, r relocated, i incompatible, u unknown, `.` not computed yet. */
  verdicts: z.array(z.string()),
  pendingJobs: z.number().int(),
});

/** `compat.grid` (viewer): the matrix, versions × kernel profiles, one letter per cell (reasons: `compat.cell`). */
export const compatGridProcedure = userProcedure('viewer')
  .input(compatGridInput)
  .output(compatGridOutput)
  .query(({ ctx, input }) =>
    compatGrid(ctx.db, ctx.tenantId, {
      program: input?.program,
      release: input?.release || undefined,
      machine: input?.machine || undefined,
      offset: input?.offset ?? 0,
      limit: input?.limit ?? 500,
    }),
  );
