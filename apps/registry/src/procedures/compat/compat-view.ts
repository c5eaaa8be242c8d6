import { z } from 'zod';
import type { compatJobSelect, StoredReasons } from '../../data/compat.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { idSchema, iso, isoDate } from '../../schemas.js';

/** A field of a kernel's event record (packages/compat `LayoutField`). */
export const layoutFieldView = z.object({
  name: z.string(),
  type: z.string(),
  byteOffset: z.number().int(),
  size: z.number().int(),
  signed: z.boolean(),
  arrayLength: z.number().int().optional(),
  dynamic: z.enum(['data_loc', 'rel_loc']).optional(),
  isCommon: z.boolean(),
});

export const verdictSchema = z.enum(['compatible', 'relocated', 'incompatible', 'unknown']);

/** One cell of the matrix: a version's verdict on a profile, its reasons, and the field diffs behind them. */
export const compatCellView = z.object({
  versionId: idSchema,
  profileId: idSchema,
  verdict: verdictSchema,
  /** Per program: status, reasons, relocated fields, fields a `field exists` check found absent. */
  programs: z.array(z.unknown()),
  /** Every reason as data (`kind`, `program`, `event`, `field`, `insnIndex`, `diagnostics`) and `text`. */
  reasons: z.array(
    z.object({
      kind: z.string(),
      program: z.string(),
      event: z.string(),
      field: z.string().optional(),
      insnIndex: z.number().int().optional(),
      diagnostics: z.array(z.object({ insnIndex: z.number().int(), insnText: z.string(), message: z.string() })).optional(),
      text: z.string(),
    }),
  ),
  /** Fields read whose layout here differs from the build-time one (moved, resized, removed, became dynamic …). */
  fieldDiffs: z.array(
    z.object({
      event: z.string(),
      field: z.string(),
      changes: z.array(z.string()),
      built: z.object({ byteOffset: z.number().nullable(), size: z.number().nullable(), signed: z.boolean().nullable(), dataLoc: z.boolean() }).nullable(),
      kernel: layoutFieldView.nullable(),
      text: z.string(),
    }),
  ),
  engine: z.string(),
  computedAt: isoDate,
});
export type CompatCellView = z.infer<typeof compatCellView>;

export function toCompatCellView(r: {
  versionId: string;
  profileId: string;
  verdict: CompatCellView['verdict'];
  reasons: Prisma.JsonValue;
  engine: string;
  computedAt: Date;
}): CompatCellView {
  const stored = r.reasons as unknown as StoredReasons;
  return {
    versionId: r.versionId,
    profileId: r.profileId,
    verdict: r.verdict,
    programs: stored.programs ?? [],
    reasons: stored.reasons ?? [],
    fieldDiffs: stored.fieldDiffs ?? [],
    engine: r.engine,
    computedAt: iso(r.computedAt),
  };
}

export const compatJobView = z.object({
  id: idSchema,
  /** `queued`, `running`, `done` or `failed`. */
  status: z.enum(['queued', 'running', 'done', 'failed']),
  /** The profile a new-profile job covers; null for a new-version job (every missing pair). */
  profile: z.string().nullable(),
  total: z.number().int(),
  done: z.number().int(),
  error: z.string().nullable(),
  createdAt: isoDate,
  finishedAt: isoDate.nullable(),
});

export function toCompatJobView(j: Prisma.CompatJobGetPayload<{ select: typeof compatJobSelect }>): z.infer<typeof compatJobView> {
  return {
    id: j.id,
    status: j.status,
    profile: j.profile?.name ?? null,
    total: j.total,
    done: j.done,
    error: j.error,
    createdAt: iso(j.createdAt),
    finishedAt: iso(j.finishedAt),
  };
}
