import { z } from 'zod';
import type { programSelect, versionDetailSelect, versionSummarySelect } from '../../data/programs.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { idSchema, iso, isoDate } from '../../schemas.js';

export const programView = z.object({
  id: idSchema,
  name: z.string(),
  description: z.string(),
  tags: z.array(z.string()),
  versions: z.number().int(),
  createdAt: isoDate,
  updatedAt: isoDate,
});
export const versionSummaryView = z.object({
  id: idSchema,
  version: z.string(),
  digest: z.string(),
  size: z.number().int(),
  artifactKind: z.string(),
  /** Always `module-like, no ABI`. */
  abi: z.string(),
  publishedAt: isoDate,
  publishedById: idSchema.nullable(),
  yanked: z.object({ at: isoDate, reason: z.string() }).nullable(),
});

export function toProgramView(p: Prisma.ProgramGetPayload<{ select: typeof programSelect }>): z.infer<typeof programView> {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    tags: p.tags,
    versions: p._count.versions,
    createdAt: iso(p.createdAt),
    updatedAt: iso(p.updatedAt),
  };
}

export function toVersionSummaryView(v: Prisma.ProgramVersionGetPayload<{ select: typeof versionSummarySelect }>): z.infer<typeof versionSummaryView> {
  const { yankedAt, yankReason, publishedAt, ...rest } = v;
  return { ...rest, publishedAt: iso(publishedAt), yanked: yankedAt ? { at: iso(yankedAt), reason: yankReason ?? '' } : null };
}

/** A version with its manifest and the verifier's report (never the artifact bytes). */
export const versionDetailView = versionSummaryView.extend({
  program: z.string(),
  manifest: z.unknown(),
  verifierReport: z.unknown(),
  /** Provider name → pinned major version (`{ "proc": 1 }`), for a script with provider probes. */
  providerPins: z.record(z.string(), z.number()),
});

export function toVersionDetailView(v: Prisma.ProgramVersionGetPayload<{ select: typeof versionDetailSelect }>): z.infer<typeof versionDetailView> {
  const { manifest, verifierReport, program, providerPins, ...summary } = v;
  return { ...toVersionSummaryView(summary), program: program.name, manifest, verifierReport, providerPins: (providerPins ?? {}) as Record<string, number> };
}
