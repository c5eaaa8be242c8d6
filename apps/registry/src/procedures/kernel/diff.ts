import { z } from 'zod';
import { diffStoredProfiles } from '../../data/kernels.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { layoutFieldView } from '../compat/compat-view.js';

export const kernelDiffInput = z.strictObject({
  a: slugSchema,
  b: slugSchema,
  /** Only this event (`system/event` or a bare event name). */
  event: z.string().regex(/^[\w.-]+(\/[\w.-]+)?$/).max(128).optional(),
});
export const kernelDiffOutput = z.object({
  a: z.string(),
  b: z.string(),
  /** Events only in B. */
  added: z.array(z.string()),
  /** Events only in A. */
  removed: z.array(z.string()),
  /** Events whose format file differs, with field changes (moved, resized, added, removed, became dynamic …). */
  changed: z.array(
    z.object({
      event: z.string(),
      changes: z.array(z.object({ kind: z.string(), field: z.string(), before: layoutFieldView.nullable(), after: layoutFieldView.nullable(), text: z.string() })),
    }),
  ),
  /** Events with the same format in both. */
  same: z.number().int(),
});

/** `kernel.diff`: two profiles of the tenant compared event by event and field by field. */
export const kernelDiff = userProcedure('viewer')
  .input(kernelDiffInput)
  .output(kernelDiffOutput)
  .query(async ({ ctx, input }) => {
    const d = await diffStoredProfiles(ctx.db, ctx.tenantId, input.a, input.b, input.event);
    return {
      a: input.a,
      b: input.b,
      added: d.added,
      removed: d.removed,
      changed: d.changed.map((c) => ({ event: c.event, changes: c.changes.map((x) => ({ kind: x.kind, field: x.field, before: x.before ?? null, after: x.after ?? null, text: x.text })) })),
      same: d.same,
    };
  });
