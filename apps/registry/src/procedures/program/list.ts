import { z } from 'zod';
import { listProgramsPage } from '../../data/program-pages.js';
import { labelSchema, slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { programView, toProgramView, toVersionSummaryView, versionSummaryView } from './program-view.js';

export const programListInput = z
  .strictObject({
    tag: labelSchema.optional(),
    /** Name or description contains this (case-insensitive). */
    q: z.string().trim().max(100).regex(/^[^\p{Cc}]*$/u, 'no control characters').optional(),
    limit: z.number().int().min(1).max(500).default(100),
    /** The `nextCursor` of the previous page. */
    cursor: slugSchema.optional(),
  })
  .optional();
export const programListOutput = z.object({
  programs: z.array(programView.extend({ latest: versionSummaryView.nullable() })),
  nextCursor: z.string().nullable(),
});

/** `program.list`: the tenant's programs by name (optionally with a tag or matching `q`), each with its newest version, a page at a time. */
export const programList = userProcedure('viewer')
  .input(programListInput)
  .output(programListOutput)
  .query(async ({ ctx, input }) => {
    const limit = input?.limit ?? 100;
    const rows = await listProgramsPage(ctx.db, ctx.tenantId, { tag: input?.tag, search: input?.q || undefined, cursor: input?.cursor, limit });
    return {
      programs: rows.map(({ latest, ...p }) => ({ ...toProgramView(p), latest: latest ? toVersionSummaryView(latest) : null })),
      nextCursor: rows.length === limit ? (rows.at(-1)?.name ?? null) : null,
    };
  });
