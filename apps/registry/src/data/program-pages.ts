// Pages of programs and versions for listings (the web app's program list and program page):
// filtered and paginated in the database, each program with its newest version.
import type { Db } from '../db/open.js';
import { notFound } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { programSelect, versionSummarySelect } from './programs.js';

/** Newest first by semver precedence (a release before its pre-releases). */
export const semverDesc = [{ major: 'desc' }, { minor: 'desc' }, { patch: 'desc' }, { prerelease: 'asc' }, { id: 'desc' }] as const satisfies Prisma.ProgramVersionOrderByWithRelationInput[];

/**
 * Programs of the tenant by name, after `cursor` (the last name of the previous page), with
 * `tag` and a name/description substring `q`; each with its newest version.
 */
export async function listProgramsPage(db: Db, tenantId: string, q: { tag?: string | undefined; search?: string | undefined; cursor?: string | undefined; limit: number }) {
  const where: Prisma.ProgramWhereInput = {
    tenantId,
    ...(q.tag ? { tags: { has: q.tag } } : {}),
    ...(q.search ? { OR: [{ name: { contains: q.search, mode: 'insensitive' } }, { description: { contains: q.search, mode: 'insensitive' } }] } : {}),
    ...(q.cursor ? { name: { gt: q.cursor } } : {}),
  };
  const programs = await db.program.findMany({ where, orderBy: { name: 'asc' }, take: q.limit, select: programSelect });
  const versions = programs.length
    ? await db.programVersion.findMany({
        where: { tenantId, programId: { in: programs.map((p) => p.id) } },
        orderBy: semverDesc,
        select: { programId: true, ...versionSummarySelect },
      })
    : [];
  const latest = new Map<string, (typeof versions)[number]>();
  for (const v of versions) if (!latest.has(v.programId)) latest.set(v.programId, v);
  return programs.map((p) => ({ ...p, latest: latest.get(p.id) ?? null }));
}

/** A page of one program's versions, newest first, and how many it has. */
export async function listVersionsPage(db: Db, tenantId: string, name: string, page: { offset: number; limit: number }) {
  const p = await db.program.findUnique({ where: { tenantId_name: { tenantId, name } }, select: { id: true, name: true } });
  if (!p) throw notFound('program', name);
  const [versions, total] = await Promise.all([
    db.programVersion.findMany({ where: { tenantId, programId: p.id }, orderBy: semverDesc, skip: page.offset, take: page.limit, select: versionSummarySelect }),
    db.programVersion.count({ where: { tenantId, programId: p.id } }),
  ]);
  return { program: p.name, versions, total };
}

/** The stored spec (packages/compat `specToJson`) of a version: instructions, relocations, maps. */
export async function getVersionSpec(db: Db, tenantId: string, name: string, version: string) {
  const v = await db.programVersion.findFirst({ where: { tenantId, version, program: { tenantId, name } }, select: { spec: true, manifest: true } });
  if (!v) throw notFound('version', `${name}@${version}`);
  return v;
}
