import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { FleetGate, fleetGateLimits, setFleetGate } from '../data/fleet-gate.js';
import { RegistryError } from '../errors.js';
import { PrismaClient } from '../generated/prisma/client.js';
import { secureDataFolder } from './data-folder.js';
import { type DataLock, lockDataFolder } from './data-lock.js';
import { PgliteThread } from './pglite-thread.js';
import { applyMigrations, type MigrationDriver, pendingMigrations, readMigrations } from './migrate.js';

/** The committed migrations of the registry's schema. */
export const migrationsDir = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));

export type Db = PrismaClient;

/** An open registry database: Prisma over PGlite (in the data folder) or over PostgreSQL. */
export interface Database {
  readonly prisma: Db;
  readonly kind: 'pglite' | 'postgres';
  /** Where the data is, for logs (no password). */
  readonly where: string;
  readonly migrationDriver: MigrationDriver;
  /** How many fleet transactions (enrolments, relabels, deployments) of one tenant, and of all, hold a connection at once (src/data/fleet-gate.ts). */
  readonly fleetGate: FleetGate;
  /** Applies pending migrations; returns the names applied now. */
  migrate(): Promise<string[]>;
  /** Names of migrations in the folder that the database lacks. */
  pending(): Promise<string[]>;
  /** Closes the client and the database and releases the data-folder lock. Idempotent. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** The data folder (locked while open). Required for PGlite. */
  dataDir?: string;
  /** `postgres://…` selects PostgreSQL; otherwise PGlite in `dataDir`. */
  databaseUrl?: string;
  /** The migrations folder; the registry's own by default. */
  migrations?: string;
  /**
   * PGlite only: which thread runs the database. `worker` (what the server uses): a thread of its
   * own (src/db/pglite-thread.ts), so statements never hold the server's event loop; `main`
   * (default: tests, tools): this thread.
   */
  pgliteThread?: 'main' | 'worker';
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparsable url)';
  }
}

/** How long a transaction on PGlite may wait for the ones before it (Prisma's default is 2 s). */
export const pgliteTransactionMaxWaitMs = 10_000;

/**
 * PostgreSQL's interactive transactions (Prisma's defaults: 2 s to get a connection, 5 s to run).
 * A burst that matches agents against deployments (24 enrolments racing 4 deployments of one
 * tenant) queues on the tenant's fleet lock (`lockTenantFleet`), and on a loaded 2-core host the
 * defaults turned such a burst into 503s ("database busy"). Past these it is still P2028: a 503
 * with Retry-After. The fleet gate waits the same `maxWait` before a fleet transaction asks for a
 * connection.
 */
export const postgresTransactionOptions = { maxWait: 10_000, timeout: 15_000 } as const;

/**
 * Connections of a registry process to PostgreSQL (node-postgres's default, made explicit: the
 * fleet gate's shares are of this). Each replica has its own pool.
 */
export const postgresPoolSize = 10;

/** Opens (and for PGlite, locks) the database. Does not migrate: call `migrate()`. */
export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  const migrations = readMigrations(opts.migrations ?? migrationsDir);
  const url = opts.databaseUrl;
  if (url && /^postgres(ql)?:\/\//.test(url)) {
    // The folder keeps the admin credential: private too.
    if (opts.dataDir) secureDataFolder(opts.dataDir);
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: postgresPoolSize }), transactionOptions: postgresTransactionOptions });
    // One tenant's fleet transactions hold at most 2 of the 10 connections (all tenants' at most 5).
    const fleetGate = new FleetGate(fleetGateLimits(postgresPoolSize, postgresTransactionOptions.maxWait));
    setFleetGate(prisma, fleetGate);
    const driver = pgMigrationDriver(url);
    let closed = false;
    return {
      prisma,
      kind: 'postgres',
      where: redact(url),
      migrationDriver: driver,
      fleetGate,
      migrate: () => applyMigrations(driver, migrations),
      pending: () => pendingMigrations(driver, migrations),
      async close() {
        if (closed) return;
        closed = true;
        await prisma.$disconnect();
        await driver.end();
      },
    };
  }
  if (url) throw new RegistryError('bad_request', `database url: only postgres:// urls are supported, got ${redact(url)}`);
  if (!opts.dataDir) throw new RegistryError('bad_request', 'database: a data folder or a postgres:// url is needed');
  secureDataFolder(opts.dataDir);
  const lock: DataLock = lockDataFolder(opts.dataDir);
  let pglite: PGlite;
  let opened: PGlite | undefined;
  try {
    opened = opts.pgliteThread === 'worker' ? (await PgliteThread.create(join(opts.dataDir, 'pglite'))).asPGlite() : await PGlite.create(join(opts.dataDir, 'pglite'));
    pglite = opened;
    // PGlite made files 0666 as it opened (a fresh cluster: all of them).
    secureDataFolder(opts.dataDir);
  } catch (err) {
    await opened?.close().catch(() => {});
    lock.release();
    throw err;
  }
  // One session: every transaction waits for the one before it, so a burst (24 enrolments racing 4
  // deployments) queues longer than Prisma's default 2 s maxWait, the more so with each statement a
  // hop to the database's thread. Past this wait it is still P2028: a 503 with Retry-After.
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite), transactionOptions: { maxWait: pgliteTransactionMaxWaitMs } });
  // One session, a pool of one: one fleet transaction at a time, and the next asks for the session
  // only when it is done, so another tenant's request asking meanwhile goes between them instead
  // of behind the whole burst (PGlite hands its session over first come, first served).
  const fleetGate = new FleetGate(fleetGateLimits(1, pgliteTransactionMaxWaitMs));
  setFleetGate(prisma, fleetGate);
  const driver = pgliteMigrationDriver(pglite);
  let closed = false;
  return {
    prisma,
    kind: 'pglite',
    where: `pglite:${opts.dataDir}${opts.pgliteThread === 'worker' ? ' (own thread)' : ''}`,
    migrationDriver: driver,
    fleetGate,
    migrate: () => applyMigrations(driver, migrations),
    pending: () => pendingMigrations(driver, migrations),
    async close() {
      if (closed) return;
      closed = true;
      try {
        await prisma.$disconnect();
        await pglite.close();
      } finally {
        lock.release();
      }
    },
  };
}

function pgliteMigrationDriver(db: PGlite): MigrationDriver {
  return {
    transaction: (fn) =>
      db.transaction((tx) =>
        fn({
          exec: async (sql) => {
            await tx.exec(sql);
          },
          query: async <R>(sql: string, params?: unknown[]) => (await tx.query<R>(sql, params)).rows,
        }),
      ),
  };
}

function pgMigrationDriver(url: string): MigrationDriver & { end(): Promise<void> } {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  return {
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn({
          exec: async (sql) => {
            await client.query(sql);
          },
          query: async <R>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as R[],
        });
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    end: () => pool.end(),
  };
}
