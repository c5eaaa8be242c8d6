// Compatibility results (version × kernel profile) and the background jobs that compute them.
//
// A job with a `profileId` covers every version of its tenant on that profile (a new profile); a
// job without one covers every (version, profile) pair of its tenant that has no current result
// (a new version). Both only compute what is missing, so a job that is run again after a crash,
// or two jobs that overlap, do no harm: results are upserted by (version, profile).
import {
  checkCompat,
  findProfileEvent,
  type KernelProfile,
  layoutOf,
  type LayoutField,
  type Manifest,
  type ProgramSpec,
  specFromJson,
  verdictSummary,
} from '@probeyard/compat';
import { type EventFormat, parseEventFormat } from '@probeyard/formats';
import type { Db } from '../db/open.js';
import { notFound } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { writeAudit } from './audit.js';
import type { Tx } from './tx.js';

/**
 * The engine that computed a result; results of another engine are recomputed. 2: profiles
 * complete or partial (`event-missing` is `incompatible` on a complete one) and
 * `signedness-changed`. A tenant's compat settings are part of it ({@link compatEngineOf}).
 */
export const compatEngine = 'probeyard-compat/2';

/** A tenant's compat settings (`Tenant.strictCharSign`: also refuse a plain `char` signedness change). */
export interface CompatSettings {
  strictCharSign: boolean;
}

/** The engine string of results computed with `settings`: a settings change recomputes the matrix. */
export function compatEngineOf(settings: CompatSettings): string {
  return settings.strictCharSign ? `${compatEngine}+strict-char-sign` : compatEngine;
}

/** A tenant's compat settings. */
export async function tenantCompatSettings(db: Db | Tx, tenantId: string): Promise<CompatSettings> {
  const t = await db.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { strictCharSign: true } });
  return { strictCharSign: t.strictCharSign };
}

/**
 * Marks every result of a profile stale (its completeness changed): they stay visible until the
 * next compat job of the profile computes them again.
 */
export async function staleProfileResults(tx: Tx, profileId: string): Promise<void> {
  await tx.compatResult.updateMany({ where: { profileId }, data: { engine: '' } });
}

/** One field a version reads whose layout on a kernel is not the one it was built for. */
export interface FieldDiff {
  /** `system/event` (or the bare event name). */
  event: string;
  field: string;
  /** What changed from the build-time field to the kernel's. */
  changes: ('removed' | 'event-missing' | 'moved' | 'resized' | 'signedness-changed' | 'became-dynamic' | 'became-static')[];
  /** The field as built (null when the program reads it by name without a build-time layout). */
  built: { byteOffset: number | null; size: number | null; signed: boolean | null; dataLoc: boolean } | null;
  /** The field on the kernel (null when the kernel lacks it). */
  kernel: LayoutField | null;
  text: string;
}

/** What `CompatResult.reasons` holds: the verdict's programs and reasons, and the field diffs behind them. */
export interface StoredReasons {
  programs: ReturnType<typeof verdictSummary>['programs'];
  reasons: ReturnType<typeof verdictSummary>['reasons'];
  fieldDiffs: FieldDiff[];
}

/** Field-by-field differences between what a manifest was built against and a kernel profile. */
export function fieldDiffsOf(manifest: Manifest, profile: KernelProfile): FieldDiff[] {
  const out: FieldDiff[] = [];
  const seen = new Set<string>();
  for (const f of manifest.fields) {
    const key = `${f.event}.${f.field}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const slash = f.event.indexOf('/');
    const found = findProfileEvent(profile, slash < 0 ? f.event : f.event.slice(slash + 1), slash < 0 ? undefined : f.event.slice(0, slash));
    const built = { byteOffset: f.byteOffset ?? null, size: f.size ?? null, signed: f.signed ?? null, dataLoc: f.dataLoc };
    const hasBuilt = f.byteOffset !== undefined;
    if (!found) {
      out.push({ event: f.event, field: f.field, changes: ['event-missing'], built: hasBuilt ? built : null, kernel: null, text: `${f.event}: not in this kernel` });
      continue;
    }
    const kernel = layoutOf(found.format).fields.find((x) => x.name === f.field) ?? null;
    if (!kernel) {
      out.push({ event: f.event, field: f.field, changes: ['removed'], built: hasBuilt ? built : null, kernel: null, text: `${f.event}.${f.field}: no such field in this kernel` });
      continue;
    }
    const changes: FieldDiff['changes'] = [];
    const parts: string[] = [];
    if (f.dataLoc !== (kernel.dynamic !== undefined)) {
      changes.push(kernel.dynamic ? 'became-dynamic' : 'became-static');
      parts.push(kernel.dynamic ? `became __${kernel.dynamic}` : 'no longer __data_loc');
    }
    // Offsets and sizes say nothing once a field turned from inline to `__data_loc` (or back).
    if (hasBuilt && changes.length === 0) {
      // A manifest field's offset includes the addend inside the field (an array element); compare the field start.
      if (f.kind === 'byte-offset' && f.byteOffset !== undefined && (f.byteOffset < kernel.byteOffset || f.byteOffset >= kernel.byteOffset + kernel.size)) {
        changes.push('moved');
        parts.push(`offset ${f.byteOffset} → ${kernel.byteOffset}`);
      }
      if (f.kind !== 'byte-offset' && f.size !== undefined && f.size !== kernel.size) {
        changes.push('resized');
        parts.push(`size ${f.size} → ${kernel.size}`);
      } else if (f.kind === 'byte-offset' && f.size !== undefined && f.size > kernel.size) {
        changes.push('resized');
        parts.push(`read of ${f.size} bytes, field is ${kernel.size}`);
      }
      if (f.signed !== undefined && f.signed !== kernel.signed) {
        changes.push('signedness-changed');
        parts.push(kernel.signed ? 'now signed' : 'now unsigned');
      }
    }
    if (changes.length > 0) out.push({ event: f.event, field: f.field, changes, built: hasBuilt ? built : null, kernel, text: `${f.event}.${f.field}: ${parts.join(', ')}` });
  }
  return out;
}

/** Events (bare names) a spec reads or attaches to: the only formats of a profile a verdict needs. */
function eventsOfSpec(spec: ProgramSpec): Set<string> {
  const names = new Set<string>();
  for (const p of spec.programs) {
    if (p.attach.kind === 'tracepoint') names.add(p.attach.event);
    for (const r of p.fieldRelocations) names.add(r.event);
  }
  return names;
}

/**
 * A stored kernel profile as packages/compat's `KernelProfile`, with only the formats of `events`
 * (bare event names) parsed: the others are left out, which no verdict on those events can tell.
 */
export async function loadCompatProfile(db: Db | Tx, profileId: string, events: Set<string> | undefined): Promise<KernelProfile> {
  const p = await db.kernelProfile.findUniqueOrThrow({
    where: { id: profileId },
    select: {
      release: true,
      machine: true,
      complete: true,
      contentHash: true,
      formats: {
        where: events ? { event: { in: [...events] } } : {},
        select: { system: true, event: true, formatHash: true, format: { select: { text: true } } },
      },
    },
  });
  const eventsMap = new Map<string, string>();
  const formats = new Map<string, EventFormat>();
  const errors: KernelProfile['errors'] = [];
  let wordSize: 4 | 8 | undefined;
  for (const f of p.formats.sort((a, b) => (`${a.system}/${a.event}` < `${b.system}/${b.event}` ? -1 : 1))) {
    const key = `${f.system}/${f.event}`;
    try {
      if (!formats.has(f.formatHash)) {
        const parsed = parseEventFormat(f.format.text, { system: f.system });
        formats.set(f.formatHash, parsed);
        wordSize ??= parsed.longSize;
      }
      eventsMap.set(key, f.formatHash);
    } catch (err) {
      errors.push({ path: `${key}/format`, message: (err as Error).message });
    }
  }
  // Only the spec's events were loaded; an event missing from them is missing from the stored
  // profile too, so its completeness holds for them.
  return { release: p.release, arch: p.machine, wordSize, hash: p.contentHash, source: 'json', complete: p.complete, events: eventsMap, formats, errors };
}

/** The verdict of one spec on one profile, as stored. */
export function computeCell(
  spec: ProgramSpec,
  manifest: Manifest,
  profile: KernelProfile,
  settings: CompatSettings = { strictCharSign: false },
): { verdict: 'compatible' | 'relocated' | 'incompatible' | 'unknown'; reasons: StoredReasons } {
  const summary = verdictSummary(checkCompat(spec, profile, { strictCharSign: settings.strictCharSign }));
  return { verdict: summary.status, reasons: { programs: summary.programs, reasons: summary.reasons, fieldDiffs: fieldDiffsOf(manifest, profile) } };
}

/**
 * Queues a tenant-wide job for every tenant holding results of another engine than its settings'
 * (an upgrade of packages/compat, e.g. `probeyard-compat/1` from before profiles knew their
 * completeness), unless one is queued or running already. Run at start-up; returns the jobs queued.
 */
export async function enqueueStaleCompatJobs(db: Db): Promise<number> {
  const stale = await db.tenant.findMany({
    where: {
      OR: [
        { strictCharSign: false, compatResults: { some: { engine: { not: compatEngineOf({ strictCharSign: false }) } } } },
        { strictCharSign: true, compatResults: { some: { engine: { not: compatEngineOf({ strictCharSign: true }) } } } },
      ],
      compatJobs: { none: { profileId: null, status: { in: ['queued', 'running'] } } },
    },
    select: { id: true },
  });
  for (const t of stale) await db.$transaction((tx) => enqueueCompatJob(tx, t.id, null));
  return stale.length;
}

/** Queues a compat job in the transaction that made the version or profile (so neither exists without its job). */
export async function enqueueCompatJob(tx: Tx, tenantId: string, profileId: string | null): Promise<{ id: string }> {
  return tx.compatJob.create({ data: { tenantId, profileId }, select: { id: true } });
}

export const compatJobSelect = {
  id: true,
  status: true,
  total: true,
  done: true,
  error: true,
  createdAt: true,
  finishedAt: true,
  profile: { select: { name: true } },
} as const satisfies Prisma.CompatJobSelect;

export async function getCompatJob(db: Db, tenantId: string, id: string) {
  const job = await db.compatJob.findFirst({ where: { id, tenantId }, select: compatJobSelect });
  if (!job) throw notFound('compat job', id);
  return job;
}

export function listCompatJobs(db: Db, tenantId: string, opts: { limit: number; active: boolean }) {
  return db.compatJob.findMany({
    where: { tenantId, ...(opts.active ? { status: { in: ['queued', 'running'] } } : {}) },
    orderBy: { id: 'desc' },
    take: opts.limit,
    select: compatJobSelect,
  });
}

/**
 * How long a claimed job is its runner's without a sign of life. The runner renews it at every
 * step (one version × profile pair: milliseconds), so only a runner that died lets it lapse.
 */
export const compatJobLeaseMs = 60_000;

/** Clock and lease of the job functions (tests move the clock). */
export interface JobClock {
  now?: () => Date;
  leaseMs?: number;
}

function leaseFrom(clock: JobClock): Date {
  return new Date((clock.now?.() ?? new Date()).getTime() + (clock.leaseMs ?? compatJobLeaseMs));
}

/**
 * Takes the oldest job that is queued, or running under a lease that lapsed (its runner died, on
 * this replica or another), and leases it to the caller; undefined when there is none. The take
 * is one conditional update, so of two runners only one gets a job.
 */
export async function claimCompatJob(db: Db, clock: JobClock = {}): Promise<string | undefined> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = clock.now?.() ?? new Date();
    const free: Prisma.CompatJobWhereInput = { OR: [{ status: 'queued' }, { status: 'running', OR: [{ leaseUntil: null }, { leaseUntil: { lt: now } }] }] };
    const next = await db.compatJob.findFirst({ where: free, orderBy: { id: 'asc' }, select: { id: true } });
    if (!next) return undefined;
    const claimed = await db.compatJob.updateMany({ where: { id: next.id, ...free }, data: { status: 'running', leaseUntil: leaseFrom(clock) } });
    if (claimed.count === 1) return next.id;
  }
  return undefined;
}

/**
 * At the start of the only process on a database (PGlite: the data folder is locked to one
 * process), every running job is one a previous process left behind: back to the queue at once.
 * On a shared PostgreSQL another replica may be running them; their leases say when they are free.
 */
export async function requeueRunningJobs(db: Db): Promise<number> {
  return (await db.compatJob.updateMany({ where: { status: 'running' }, data: { status: 'queued', leaseUntil: null } })).count;
}

/**
 * Runs one claimed job to its end: every pair of its scope without a current result is computed
 * and upserted; `done`/`total` show progress, and each step renews the lease. `shouldStop` is
 * asked between pairs: a stopped job goes back to the queue for any runner to finish.
 */
export async function runCompatJob(db: Db, jobId: string, shouldStop: () => boolean = () => false, clock: JobClock = {}): Promise<'done' | 'failed' | 'stopped'> {
  const job = await db.compatJob.findUniqueOrThrow({ where: { id: jobId }, select: { tenantId: true, profileId: true } });
  const stopped = async (): Promise<'stopped'> => {
    await db.compatJob.updateMany({ where: { id: jobId, status: 'running' }, data: { status: 'queued', leaseUntil: null } });
    return 'stopped';
  };
  try {
    const profiles = await db.kernelProfile.findMany({
      where: { tenantId: job.tenantId, ...(job.profileId ? { id: job.profileId } : {}) },
      orderBy: { id: 'asc' },
      select: { id: true },
    });
    const versions = await db.programVersion.findMany({ where: { tenantId: job.tenantId }, orderBy: { id: 'asc' }, select: { id: true } });
    const settings = await tenantCompatSettings(db, job.tenantId);
    const engine = compatEngineOf(settings);
    const current = await db.compatResult.findMany({
      where: { tenantId: job.tenantId, engine, ...(job.profileId ? { profileId: job.profileId } : {}) },
      select: { versionId: true, profileId: true },
    });
    const have = new Set(current.map((r) => `${r.versionId}:${r.profileId}`));
    const total = profiles.length * versions.length;
    const todo: { versionId: string; profileId: string }[] = [];
    for (const v of versions) for (const p of profiles) if (!have.has(`${v.id}:${p.id}`)) todo.push({ versionId: v.id, profileId: p.id });
    let done = total - todo.length;
    await db.compatJob.update({ where: { id: jobId }, data: { total, done, leaseUntil: leaseFrom(clock) }, select: { id: true } });
    // Versions in the outer loop: one spec parsed at a time, each profile loaded with that spec's events.
    const byVersion = new Map<string, string[]>();
    for (const t of todo) byVersion.set(t.versionId, [...(byVersion.get(t.versionId) ?? []), t.profileId]);
    for (const [versionId, profileIds] of byVersion) {
      if (shouldStop()) return await stopped();
      const v = await db.programVersion.findUnique({ where: { id: versionId }, select: { spec: true, manifest: true } });
      if (v) {
        const spec = specFromJson(v.spec);
        const manifest = v.manifest as unknown as Manifest;
        const events = eventsOfSpec(spec);
        for (const profileId of profileIds) {
          if (shouldStop()) return await stopped();
          const exists = await db.kernelProfile.findUnique({ where: { id: profileId }, select: { id: true } });
          if (exists) {
            const cell = computeCell(spec, manifest, await loadCompatProfile(db, profileId, events), settings);
            const data = { verdict: cell.verdict, reasons: cell.reasons as unknown as Prisma.InputJsonValue, engine, computedAt: new Date() };
            try {
              await db.compatResult.upsert({
                where: { versionId_profileId: { versionId, profileId } },
                create: { tenantId: job.tenantId, versionId, profileId, ...data },
                update: data,
                select: { id: true },
              });
            } catch (err) {
              // The version or profile was deleted meanwhile: nothing to store.
              if ((err as { code?: unknown }).code !== 'P2003') throw err;
            }
          }
          done++;
          await db.compatJob.update({ where: { id: jobId }, data: { done, leaseUntil: leaseFrom(clock) }, select: { id: true } });
        }
      } else {
        done += profileIds.length;
      }
    }
    await db.$transaction(async (tx) => {
      await tx.compatJob.update({ where: { id: jobId }, data: { status: 'done', done, finishedAt: new Date(), leaseUntil: null }, select: { id: true } });
      await writeAudit(tx, {
        tenantId: job.tenantId,
        actor: { kind: 'system', id: null },
        action: 'compat.job',
        targetType: 'compat_job',
        targetId: jobId,
        detail: { profileId: job.profileId, total, computed: todo.length },
      });
    });
    return 'done';
  } catch (err) {
    await db.compatJob.update({
      where: { id: jobId },
      data: { status: 'failed', error: `compat job: ${(err as Error).message}`.slice(0, 2000), finishedAt: new Date(), leaseUntil: null },
      select: { id: true },
    });
    return 'failed';
  }
}

/** The matrix of a tenant: its versions (optionally of one program, one version) × its profiles. */
export async function compatMatrix(db: Db, tenantId: string, filter: { program?: string | undefined; version?: string | undefined; profile?: string | undefined }) {
  let programId: string | undefined;
  if (filter.program !== undefined) {
    const p = await db.program.findUnique({ where: { tenantId_name: { tenantId, name: filter.program } }, select: { id: true } });
    if (!p) throw notFound('program', filter.program);
    programId = p.id;
  }
  const versions = await db.programVersion.findMany({
    where: { tenantId, ...(programId ? { programId } : {}), ...(filter.version !== undefined ? { version: filter.version } : {}) },
    orderBy: [{ program: { name: 'asc' } }, { major: 'desc' }, { minor: 'desc' }, { patch: 'desc' }, { prerelease: 'asc' }],
    select: { id: true, version: true, yankedAt: true, program: { select: { name: true } } },
  });
  if (filter.program !== undefined && filter.version !== undefined && versions.length === 0) throw notFound('version', `${filter.program}@${filter.version}`);
  const profiles = await db.kernelProfile.findMany({
    where: { tenantId, ...(filter.profile !== undefined ? { name: filter.profile } : {}) },
    orderBy: { name: 'asc' },
    select: { id: true, name: true, release: true, complete: true },
  });
  if (filter.profile !== undefined && profiles.length === 0) throw notFound('kernel profile', filter.profile);
  const cells = await db.compatResult.findMany({
    where: { tenantId, versionId: { in: versions.map((v) => v.id) }, profileId: { in: profiles.map((p) => p.id) } },
    select: { versionId: true, profileId: true, verdict: true, reasons: true, engine: true, computedAt: true },
  });
  const pendingJobs = await db.compatJob.count({ where: { tenantId, status: { in: ['queued', 'running'] } } });
  return { versions, profiles, cells, pendingJobs };
}
