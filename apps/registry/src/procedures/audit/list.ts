import { z } from 'zod';
import { listAudit } from '../../data/audit.js';
import { idSchema, iso, isoDate, listInput } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';

export const auditListInput = listInput.default({ limit: 100 });
export const auditEntryView = z.object({
  id: idSchema,
  actor: z.object({ kind: z.string(), id: z.string().nullable() }),
  action: z.string(),
  target: z.object({ type: z.string(), id: z.string().nullable() }),
  detail: z.unknown(),
  at: isoDate,
});
export const auditListOutput = z.object({ entries: z.array(auditEntryView), nextCursor: idSchema.nullable() });

/** `audit.list` (admin): the tenant's audit log, newest first, a page at a time. */
export const auditList = userProcedure('admin')
  .input(auditListInput)
  .output(auditListOutput)
  .query(async ({ ctx, input }) => {
    const rows = await listAudit(ctx.db, ctx.tenantId, input);
    return {
      entries: rows.map((r) => ({
        id: r.id,
        actor: { kind: r.actorKind, id: r.actorId },
        action: r.action,
        target: { type: r.targetType, id: r.targetId },
        detail: r.detail,
        at: iso(r.createdAt),
      })),
      nextCursor: rows.length === input.limit ? (rows.at(-1)?.id ?? null) : null,
    };
  });
