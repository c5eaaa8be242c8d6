import type { Db } from '../db/open.js';
import { notFound } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';

export const programSelect = {
  id: true,
  name: true,
  description: true,
  tags: true,
  createdAt: true,
  updatedAt: true,
  _count: { select: { versions: true } },
} as const satisfies Prisma.ProgramSelect;

/** A version as listings show it: never the artifact bytes. */
export const versionSummarySelect = {
  id: true,
  version: true,
  digest: true,
  size: true,
  artifactKind: true,
  abi: true,
  publishedAt: true,
  publishedById: true,
  yankedAt: true,
  yankReason: true,
} as const satisfies Prisma.ProgramVersionSelect;

export function listPrograms(db: Db, tenantId: string, filter: { tag?: string | undefined }) {
  return db.program.findMany({
    where: { tenantId, ...(filter.tag ? { tags: { has: filter.tag } } : {}) },
    orderBy: { name: 'asc' },
    select: programSelect,
  });
}

/** A program with its versions, newest first by semver precedence. */
export async function getProgram(db: Db, tenantId: string, name: string) {
  const p = await db.program.findUnique({
    where: { tenantId_name: { tenantId, name } },
    select: {
      ...programSelect,
      versions: { select: versionSummarySelect, orderBy: [{ major: 'desc' }, { minor: 'desc' }, { patch: 'desc' }, { prerelease: 'asc' }] },
    },
  });
  if (!p) throw notFound('program', name);
  return p;
}
