// The compatibility matrix as the web app draws it: versions × kernel profiles with one verdict
// letter per cell (20,000 cells are ~20 KB), and one cell's reasons and field diffs on demand.
import type { Db } from '../db/open.js';
import { notFound } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { semverDesc } from './program-pages.js';

/** One letter per verdict in `compat.grid` rows; `.` for a pair not computed yet. */
export const verdictLetters = { compatible: 'c', relocated: 'r', incompatible: 'i', unknown: 'u' } as const;

export interface GridFilter {
  program?: string | undefined;
  /** Kernel release contains this (`6.1`, `android`). */
  release?: string | undefined;
  /** Kernel machine (`x86_64`, `aarch64`) exactly. */
  machine?: string | undefined;
  offset: number;
  limit: number;
}

export async function compatGrid(db: Db, tenantId: string, f: GridFilter) {
  const versionWhere: Prisma.ProgramVersionWhereInput = { tenantId, ...(f.program ? { program: { tenantId, name: f.program } } : {}) };
  const profileWhere: Prisma.KernelProfileWhereInput = {
    tenantId,
    ...(f.release ? { release: { contains: f.release, mode: 'insensitive' } } : {}),
    ...(f.machine ? { machine: f.machine } : {}),
  };
  const [versions, totalVersions, profiles, machines, pendingJobs] = await Promise.all([
    db.programVersion.findMany({
      where: versionWhere,
      orderBy: [{ program: { name: 'asc' } }, ...semverDesc],
      skip: f.offset,
      take: f.limit,
      select: { id: true, version: true, yankedAt: true, program: { select: { name: true } } },
    }),
    db.programVersion.count({ where: versionWhere }),
    db.kernelProfile.findMany({ where: profileWhere, orderBy: { name: 'asc' }, take: 2000, select: { id: true, name: true, release: true, machine: true, complete: true } }),
    db.kernelProfile.findMany({ where: { tenantId }, distinct: ['machine'], select: { machine: true }, orderBy: { machine: 'asc' } }),
    db.compatJob.count({ where: { tenantId, status: { in: ['queued', 'running'] } } }),
  ]);
  const cells = versions.length && profiles.length
    ? await db.compatResult.findMany({
        where: { tenantId, versionId: { in: versions.map((v) => v.id) }, ...(f.release || f.machine ? { profileId: { in: profiles.map((p) => p.id) } } : {}) },
        select: { versionId: true, profileId: true, verdict: true },
      })
    : [];
  const col = new Map(profiles.map((p, i) => [p.id, i]));
  const rows = new Map(versions.map((v) => [v.id, Array.from({ length: profiles.length }, () => '.')]));
  for (const c of cells) {
    const i = col.get(c.profileId);
    const row = rows.get(c.versionId);
    if (i !== undefined && row) row[i] = verdictLetters[c.verdict];
  }
  return {
    versions: versions.map((v) => ({ id: v.id, program: v.program.name, version: v.version, yanked: v.yankedAt !== null })),
    totalVersions,
    profiles,
    machines: machines.map((m) => m.machine).filter(Boolean),
    verdicts: versions.map((v) => rows.get(v.id)!.join('')),
    pendingJobs,
  };
}

/** One cell: the version's verdict on the profile with its reasons and field diffs. */
export async function compatCell(db: Db, tenantId: string, versionId: string, profileId: string) {
  const [version, profile] = await Promise.all([
    db.programVersion.findFirst({ where: { id: versionId, tenantId }, select: { id: true, version: true, program: { select: { name: true } } } }),
    db.kernelProfile.findFirst({ where: { id: profileId, tenantId }, select: { id: true, name: true, release: true, machine: true, complete: true } }),
  ]);
  if (!version) throw notFound('program version', versionId);
  if (!profile) throw notFound('kernel profile', profileId);
  const result = await db.compatResult.findFirst({
    where: { tenantId, versionId, profileId },
    select: { versionId: true, profileId: true, verdict: true, reasons: true, engine: true, computedAt: true },
  });
  return { version, profile, result };
}
