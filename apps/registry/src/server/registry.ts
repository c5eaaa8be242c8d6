import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureAdminCredential } from '../auth/admin-credential.js';
import { hashSecret } from '../auth/secrets.js';
import { createDeps, type RegistryDeps, type RegistryHooks } from '../context.js';
import { envLiveCeilings, type LiveCeilings } from '../data/live-limits.js';
import { createTenantWithOwner } from '../data/tenants.js';
import { defaultUploadParseTimeoutMs, UploadParser, type UploadParserOptions } from '../data/upload-parser.js';
import { warmFleet } from '../fleet/warm.js';
import { lockHolderAlive, ownStartTime } from '../db/data-lock.js';
import { type Database, openDatabase } from '../db/open.js';
import { RegistryError } from '../errors.js';
import { CompatJobRunner } from '../jobs/compat-runner.js';
import { defaultOutputRetentionDays, envOutputRetentionDays, RetentionRunner } from '../jobs/retention-runner.js';
import { defaultVerifyTimeoutMs, VerifierPool, type VerifierPoolOptions } from '../jobs/verifier-pool.js';
import { tenantCreateInput } from '../procedures/tenant/create.js';
import { envTrustedProxies, TrustedProxies } from './client-address.js';
import { createHttpServer, type HttpServer } from './http.js';
import { jsonLogger, type Logger } from './log.js';

export const defaultPort = 4700;

/** Where the registry keeps its data: the data folder, and PostgreSQL when `databaseUrl` is set. */
export interface StoreOptions {
  /** Data folder: the PGlite database (unless `databaseUrl`), its lock, the admin credential. */
  dataDir: string;
  /** `postgres://…` to use PostgreSQL instead of PGlite. */
  databaseUrl?: string | undefined;
  /**
   * PGlite: the thread that runs the database (src/db/open.ts). The server's default is `worker`
   * (statements never hold its event loop), or `PROBEYARD_PGLITE_THREAD=main`.
   */
  pgliteThread?: 'main' | 'worker' | undefined;
}

export interface StartOptions extends StoreOptions {
  port?: number;
  host?: string;
  logger?: Logger;
  maxBodyBytes?: number;
  /**
   * Limits of the worker threads that parse uploaded tarballs and trace.dat files (deadline,
   * heap, decompressed size; src/data/upload-parser.ts). The deadline defaults to
   * `PROBEYARD_UPLOAD_PARSE_TIMEOUT_MS`, else 10 s.
   */
  uploads?: UploadParserOptions;
  /**
   * Peers whose `X-Forwarded-For` gives the client's address (the web app's server, a load
   * balancer): addresses or subnets. Defaults to `PROBEYARD_TRUSTED_PROXIES` (comma-separated),
   * else none: every request is its socket's address.
   */
  trustedProxies?: readonly string[];
  /**
   * Limits of the worker threads that verify published programs and compute compat cells
   * (deadline, heap, per-tenant fairness; src/jobs/verifier-pool.ts). The deadline defaults to
   * `PROBEYARD_VERIFY_TIMEOUT_MS`, else 30 s.
   */
  verifier?: VerifierPoolOptions;
  /**
   * Outputs (deployment output batches, ended live sessions) older than this many days are
   * deleted, each target's newest map snapshot kept (src/data/output-retention.ts); 0 keeps them
   * forever. Defaults to `PROBEYARD_OUTPUT_RETENTION_DAYS`, else 30.
   */
  outputRetentionDays?: number;
  /**
   * The most an admin may set each of their tenant's live limits to (`live.setLimits`). Defaults to
   * `PROBEYARD_LIVE_MAX_SESSIONS_CEILING` (16), `PROBEYARD_LIVE_DURATION_CEILING_SECONDS` (3600) and
   * `PROBEYARD_LIVE_CPU_CEILING_PERCENT` (50).
   */
  liveCeilings?: LiveCeilings;
  /** Test-only fault injection (see `RegistryHooks`). */
  hooks?: RegistryHooks;
}

export interface RunningRegistry {
  url: string;
  db: Database;
  deps: RegistryDeps;
  http: HttpServer;
  /** Stops accepting, finishes in-flight requests, closes the database, releases the lock. */
  close(): Promise<void>;
}

/** The file a running registry leaves in its data folder so that local tools can find it. */
export const runningFileName = 'registry.json';

/** The URL of the registry running on `dataDir`, if its process is alive. */
export function readRunningRegistry(dataDir: string): { url: string; pid: number } | undefined {
  const path = join(dataDir, runningFileName);
  if (!existsSync(path)) return undefined;
  try {
    const info = JSON.parse(readFileSync(path, 'utf8')) as { url: string; pid: number; startTime?: string };
    // the same process that wrote it (not a zombie, not a reused pid), as the data folder's lock
    if (!lockHolderAlive(info.pid, info.startTime || undefined)) return undefined;
    return { url: info.url, pid: info.pid };
  } catch {
    return undefined;
  }
}

function envTimeoutMs(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const ms = Number(raw);
  if (!(Number.isFinite(ms) && ms > 0)) throw new RegistryError('bad_request', `${name}: not a positive number of milliseconds: ${raw}`);
  return ms;
}

function envPgliteThread(): 'main' | 'worker' | undefined {
  const raw = process.env.PROBEYARD_PGLITE_THREAD;
  if (raw === undefined || raw === '') return undefined;
  if (raw !== 'main' && raw !== 'worker') throw new RegistryError('bad_request', `PROBEYARD_PGLITE_THREAD: main or worker, not ${raw}`);
  return raw;
}

async function openAndMigrate(opts: StoreOptions, logger: Logger): Promise<Database> {
  const { dataDir, databaseUrl, pgliteThread } = opts;
  const db = await openDatabase({ dataDir, ...(databaseUrl ? { databaseUrl } : {}), ...(pgliteThread ? { pgliteThread } : {}) });
  try {
    const applied = await db.migrate();
    for (const name of applied) logger({ level: 'info', msg: 'migration applied', migration: name });
    return db;
  } catch (err) {
    await db.close();
    throw err;
  }
}

/** Opens the database, applies migrations, makes the admin credential, and serves the API. */
export async function startRegistry(opts: StartOptions): Promise<RunningRegistry> {
  const logger = opts.logger ?? jsonLogger;
  // Checked before the database opens: a typo in an address fails the start at once.
  const proxies = opts.trustedProxies ?? envTrustedProxies();
  const trustedProxies = proxies.length > 0 ? new TrustedProxies(proxies) : undefined;
  const retentionDays = opts.outputRetentionDays ?? envOutputRetentionDays() ?? defaultOutputRetentionDays;
  const liveCeilings = opts.liveCeilings ?? envLiveCeilings();
  const db = await openAndMigrate({ ...opts, pgliteThread: opts.pgliteThread ?? envPgliteThread() ?? 'worker' }, logger);
  let http: HttpServer | undefined;
  let runner: CompatJobRunner | undefined;
  let parser: UploadParser | undefined;
  let verifierPool: VerifierPool | undefined;
  try {
    await ensureAdminCredential(opts.dataDir, db.prisma);
    // One verifier worker is kept loaded: a live session's Run must reach the agent within 2 s,
    // and a cold worker alone took 2.4 s (built) to 5 s (loaded machine).
    const verifier = new VerifierPool({ timeoutMs: envTimeoutMs('PROBEYARD_VERIFY_TIMEOUT_MS') ?? defaultVerifyTimeoutMs, keepIdle: 1, ...opts.verifier });
    verifierPool = verifier;
    // Compat jobs left queued or running by a previous process are picked up again: at once on
    // PGlite (this process is the only one), when their lease lapses on a shared PostgreSQL.
    const jobs = new CompatJobRunner(db.prisma, logger, {
      exclusive: db.kind === 'pglite',
      computeCellOf: (tenantId, spec, manifest, profile, settings) => verifier.compatCell(tenantId, spec, manifest, profile, settings),
      computeProviderCellOf: (tenantId, artifact, manifest, providers, pins, profile, settings) => verifier.providerCell(tenantId, artifact, manifest, providers, pins, profile, settings),
    });
    runner = jobs;
    const uploads = new UploadParser({ timeoutMs: envTimeoutMs('PROBEYARD_UPLOAD_PARSE_TIMEOUT_MS') ?? defaultUploadParseTimeoutMs, ...opts.uploads });
    parser = uploads;
    const deps = createDeps(db.prisma, {
      uploads,
      verifier,
      compatJobs: jobs,
      liveCeilings,
      hooks: opts.hooks,
      isReady: async () => {
        await db.prisma.$queryRaw`SELECT 1`;
        return (await db.pending()).length === 0;
      },
    });
    // Agent credentials and assignments in memory before the first poll.
    await warmFleet(deps);
    const server = createHttpServer({ deps, logger, trustedProxies, ...(opts.maxBodyBytes ? { maxBodyBytes: opts.maxBodyBytes } : {}) });
    http = server;
    await server.listen(opts.port ?? defaultPort, opts.host ?? '127.0.0.1');
    const url = server.url();
    const runningFile = join(opts.dataDir, runningFileName);
    writeFileSync(runningFile, JSON.stringify({ url, pid: process.pid, startTime: ownStartTime() }), { mode: 0o600 });
    await jobs.start();
    const retention = new RetentionRunner(db.prisma, logger, { days: retentionDays });
    retention.start();
    void verifier.warm();
    logger({ level: 'info', msg: 'registry listening', url, database: db.where });
    let closing: Promise<void> | undefined;
    return {
      url,
      db,
      deps,
      http: server,
      close() {
        closing ??= (async () => {
          rmSync(runningFile, { force: true });
          await server.close();
          await uploads.close();
          // The runner stops between cells; a cell on a worker now ends with the verifier's close,
          // and its job goes back to the queue.
          const stopping = jobs.stop();
          await verifier.close();
          await stopping;
          await retention.stop();
          // Batched agent last-seen times are written before the database closes.
          await deps.fleet.close().catch((err: Error) => logger({ level: 'error', msg: 'last-seen flush failed', error: err.message }));
          await db.close();
          logger({ level: 'info', msg: 'registry stopped' });
        })();
        return closing;
      },
    };
  } catch (err) {
    await http?.close(0);
    await parser?.close();
    await runner?.stop();
    await verifierPool?.close();
    await db.close();
    throw err;
  }
}

/** Closes the registry on SIGINT/SIGTERM (a second signal exits at once). */
export function closeOnSignals(registry: RunningRegistry, onClosed: () => void = () => process.exit(0)): void {
  let stopping = false;
  const handler = () => {
    if (stopping) process.exit(1);
    stopping = true;
    registry.close().then(onClosed, (err: Error) => {
      process.stderr.write(`registry: shutdown failed: ${err.message}\n`);
      process.exit(1);
    });
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

/**
 * `probeyard admin create-tenant` when no registry runs: opens the database itself (taking the
 * data-folder lock), migrates, and makes the tenant as the instance admin.
 */
export async function createTenantOffline(opts: StoreOptions & { name: string; ownerEmail: string; logger?: Logger }) {
  const parsed = tenantCreateInput.safeParse({ name: opts.name, ownerEmail: opts.ownerEmail });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new RegistryError('bad_request', `create tenant: ${issues}`);
  }
  const db = await openAndMigrate(opts, opts.logger ?? (() => {}));
  try {
    const secret = await ensureAdminCredential(opts.dataDir, db.prisma);
    const cred = await db.prisma.instanceCredential.findUniqueOrThrow({ where: { hash: hashSecret(secret) }, select: { id: true } });
    const r = await createTenantWithOwner(db.prisma, { kind: 'admin', id: cred.id }, parsed.data);
    return { tenant: { id: r.tenant.id, name: r.tenant.name }, owner: r.owner, ownerToken: r.secret };
  } finally {
    await db.close();
  }
}
