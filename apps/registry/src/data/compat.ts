// Compatibility results (version × kernel profile) and the background jobs that compute them.
//
// A job with a `profileId` covers every version of its tenant on that profile (a new profile); a
// job without one covers every (version, profile) pair of its tenant that has no current result
// (a new version). Both only compute what is missing, so a job that is run again after a crash,
// or two jobs that overlap, do no harm: results are upserted by (version, profile).
import { type Manifest, type ProgramSpec, type ProgramSpecJson, type ProviderDefinition, setRodata, specFromJson, specToJson } from '@probeyard/compat';
import type { Db } from '../db/open.js';
import { busyDatabaseError, notFound } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { writeAudit } from './audit.js';
import { optionValue } from './deployments.js';
import { type CompatCell, type CompatProfileRows, type CompatSettings, compatProfileOf, computeCell, computeProviderCell } from './compat-cell.js';
import { resolveProviders } from './providers.js';
import type { Tx } from './tx.js';

export type { CompatCell, CompatProfileRows, CompatSettings, FieldDiff, StoredReasons } from './compat-cell.js';

/**
 * The engine that computed a result; results of another engine are recomputed. 2: profiles
 * complete or partial (`event-missing` is `incompatible` on a complete one) and
 * `signedness-changed`. A tenant's compat settings are part of it ({@link compatEngineOf}).
 */
export const compatEngine = 'probeyard-compat/2';


/** The engine string of results computed with `settings`: a settings change recomputes the matrix. */
export function compatEngineOf(settings: CompatSettings): string {
  return settings.strictCharSign ? `${compatEngine}+strict-char-sign` : compatEngine;
}

/** A tenant's compat settings. */
export async function tenantCompatSettings(db: Db | Tx, tenantId: string): Promise<CompatSettings> {
  const t = await db.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { strictCharSign: true } });
  return { strictCharSign: t.strictCharSign };
}

/** At most this many kernels a preview computes with a deployment's options (the rest: not computed). */
export const maxOptionCells = 16;
/** A preview starts no new cell with options after this long (each cell has the verifier pool's own deadline). */
export const optionCellsBudgetMs = 10_000;

/**
 * The cells of a version with `.rodata` options set (a deployment's, before it is made), on each
 * of `profileIds` (the first {@link maxOptionCells}): the stored matrix holds the verdicts with the
 * object's own defaults, and a read an option guards is dead code while the option is off, so an
 * option can turn a verdict either way. Computed by `cellOf` (the server's verifier pool, with
 * its deadline and per-tenant fairness); nothing is stored. `options` are checked already
 * (`checkOptions`). A version that pins providers is not computed here (its cells go through the
 * pinned releases): `note` says so and the map is empty.
 */
export async function cellsWithOptions(
  db: Db,
  tenantId: string,
  versionId: string,
  options: Record<string, string>,
  profileIds: readonly string[],
  cellOf: CellComputer,
): Promise<{ cells: Map<string, CompatCell>; note: string | null }> {
  const v = await db.programVersion.findFirstOrThrow({ where: { id: versionId, tenantId }, select: { spec: true, manifest: true, providerPins: true } });
  const cells = new Map<string, CompatCell>();
  if (Object.keys((v.providerPins ?? {}) as Record<string, number>).length > 0) {
    return { cells, note: 'verdicts without the options: this version pins providers, and its cells with options are computed by each agent before it runs' };
  }
  const values = Object.fromEntries(Object.entries(options).map(([k, t]) => [k, optionValue(t)]));
  const base = specFromJson(v.spec);
  const spec = specToJson(setRodata(base, values));
  const events = eventsOfSpec(base);
  const settings = await tenantCompatSettings(db, tenantId);
  // no new cell after the preview's time budget: the request answers with what it has
  const until = Date.now() + optionCellsBudgetMs;
  for (const profileId of profileIds.slice(0, maxOptionCells)) {
    if (cells.size > 0 && Date.now() > until) break;
    cells.set(profileId, await cellOf(tenantId, spec, v.manifest as unknown as Manifest, await loadCompatProfileRows(db, profileId, events), settings));
  }
  const left = profileIds.length - cells.size;
  return {
    cells,
    note:
      left > 0
        ? `verdicts with the options on ${cells.size} kernels; ${left} more not computed (a preview computes at most ${maxOptionCells}, for ${optionCellsBudgetMs / 1000} s; each agent checks on its own kernel before it runs)`
        : null,
  };
}

/**
 * Marks every result of a profile stale (its completeness changed): they stay visible until the
 * next compat job of the profile computes them again.
 */
export async function staleProfileResults(tx: Tx, profileId: string): Promise<void> {
  await tx.compatResult.updateMany({ where: { profileId }, data: { engine: '' } });
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
 * A stored kernel profile's rows as the verifier worker takes them (src/data/compat-cell.ts
 * `compatProfileOf`), with only the formats of `events` (bare event names): the others are left
 * out, which no verdict on those events can tell.
 */
export async function loadCompatProfileRows(db: Db | Tx, profileId: string, events: Set<string> | undefined): Promise<CompatProfileRows> {
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
  return {
    release: p.release,
    machine: p.machine,
    complete: p.complete,
    contentHash: p.contentHash,
    formats: p.formats.map((f) => ({ system: f.system, event: f.event, formatHash: f.formatHash, text: f.format.text })),
  };
}

/** Computes one (version, profile) cell: on a verifier worker in the server (its verdict verifies the relocated programs), in this thread by default. */
export type CellComputer = (tenantId: string, spec: ProgramSpecJson, manifest: Manifest, profile: CompatProfileRows, settings: CompatSettings) => Promise<CompatCell>;

/** The cell computed in this thread (tests and tools; the server's runner uses its verifier pool). */
export const computeCellHere: CellComputer = async (_tenantId, spec, manifest, profile, settings) => computeCell(specFromJson(spec), manifest, compatProfileOf(profile), settings);

/** Computes the cell of a script with provider probes: its artifact, manifest, the pinned releases' definitions and the pins. */
export type ProviderCellComputer = (
  tenantId: string,
  artifact: Uint8Array,
  manifest: Manifest,
  providers: ProviderDefinition[],
  pins: Record<string, number>,
  profile: CompatProfileRows,
  settings: CompatSettings,
) => Promise<CompatCell>;

/** A provider cell computed in this thread (tests and tools; the server's runner uses its verifier pool). */
export const computeProviderCellHere: ProviderCellComputer = (_tenantId, artifact, manifest, providers, pins, profile, settings) => computeProviderCell(artifact, manifest, providers, pins, profile, settings);

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

/** How long a job stays put after the database said it was too busy, before a runner retries it. */
export const compatJobBusyRetryMs = 10_000;

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
export async function runCompatJob(
  db: Db,
  jobId: string,
  shouldStop: () => boolean = () => false,
  clock: JobClock = {},
  computeCellOf: CellComputer = computeCellHere,
  computeProviderCellOf: ProviderCellComputer = computeProviderCellHere,
): Promise<'done' | 'failed' | 'stopped' | 'busy'> {
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
      const v = await db.programVersion.findUnique({ where: { id: versionId }, select: { spec: true, manifest: true, providerPins: true, artifact: true } });
      const pins = (v?.providerPins ?? {}) as Record<string, number>;
      if (v && Object.keys(pins).length > 0) {
        // a script with provider probes: resolved through the newest release of each pinned major, per profile
        const providers = await resolveProviders(db, job.tenantId, pins);
        const events = new Set([...eventsOfSpec(specFromJson(v.spec as unknown as ProgramSpecJson)), ...eventsOfProviders(providers)]);
        for (const profileId of profileIds) {
          if (shouldStop()) return await stopped();
          const exists = await db.kernelProfile.findUnique({ where: { id: profileId }, select: { id: true } });
          if (exists) {
            const cell = await computeProviderCellOf(job.tenantId, v.artifact, v.manifest as unknown as Manifest, providers, pins, await loadCompatProfileRows(db, profileId, events), settings);
            await storeCell(db, job.tenantId, versionId, profileId, cell, engine);
          }
          done++;
          await db.compatJob.update({ where: { id: jobId }, data: { done, leaseUntil: leaseFrom(clock) }, select: { id: true } });
        }
      } else if (v) {
        const specJson = v.spec as unknown as ProgramSpecJson;
        const spec = specFromJson(specJson);
        const manifest = v.manifest as unknown as Manifest;
        const events = eventsOfSpec(spec);
        for (const profileId of profileIds) {
          if (shouldStop()) return await stopped();
          const exists = await db.kernelProfile.findUnique({ where: { id: profileId }, select: { id: true } });
          if (exists) {
            const cell = await computeCellOf(job.tenantId, specJson, manifest, await loadCompatProfileRows(db, profileId, events), settings);
            await storeCell(db, job.tenantId, versionId, profileId, cell, engine);
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
    // Stopped while a cell was on a worker (the registry is shutting down): back to the queue.
    if (shouldStop()) return await stopped();
    if (busyDatabaseError(err) !== undefined) {
      // The database was too busy (P2028/P2024), not the job wrong: the cells stored so far stay,
      // and the job stays claimed under a short lease, after which any runner takes it up again.
      await db.compatJob
        .updateMany({ where: { id: jobId, status: 'running' }, data: { leaseUntil: new Date((clock.now?.() ?? new Date()).getTime() + compatJobBusyRetryMs) } })
        .catch(() => {});
      return 'busy';
    }
    await db.compatJob.update({
      where: { id: jobId },
      data: { status: 'failed', error: `compat job: ${(err as Error).message}`.slice(0, 2000), finishedAt: new Date(), leaseUntil: null },
      select: { id: true },
    });
    return 'failed';
  }
}

/** Upserts one computed cell (a version or profile deleted meanwhile: nothing to store). */
async function storeCell(db: Db, tenantId: string, versionId: string, profileId: string, cell: CompatCell, engine: string): Promise<void> {
  const data = { verdict: cell.verdict, reasons: cell.reasons as unknown as Prisma.InputJsonValue, engine, computedAt: new Date() };
  try {
    await db.compatResult.upsert({
      where: { versionId_profileId: { versionId, profileId } },
      create: { tenantId, versionId, profileId, ...data },
      update: data,
      select: { id: true },
    });
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'P2003') throw err;
  }
}

/** Bare event names every implementation of some providers attaches to. */
function eventsOfProviders(providers: readonly ProviderDefinition[]): Set<string> {
  const out = new Set<string>();
  for (const p of providers) for (const probe of p.probes) for (const i of probe.implementations) out.add(i.event);
  return out;
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
