import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RegistryError } from '../errors.js';

/** The SQL a migration runner needs from a driver: plain statements, in one transaction at a time. */
export interface MigrationDriver {
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: MigrationTx) => Promise<T>): Promise<T>;
}
export interface MigrationTx {
  /** Runs a script of several statements (no parameters). */
  exec(sql: string): Promise<void>;
  query<R>(sql: string, params?: unknown[]): Promise<R[]>;
}

/** One `migrations/<name>/migration.sql`. */
export interface Migration {
  name: string;
  sql: string;
  /** Prisma's checksum: sha256 (hex) of the file's bytes. */
  checksum: string;
}

export function readMigrations(dir: string): Migration[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(dir, e.name, 'migration.sql')))
    .map((e) => e.name)
    .sort()
    .map((name) => {
      const bytes = readFileSync(join(dir, name, 'migration.sql'));
      return { name, sql: bytes.toString('utf8'), checksum: createHash('sha256').update(bytes).digest('hex') };
    });
}

// Prisma's own bookkeeping table, column for column, so `prisma migrate status` agrees with us.
const createTable = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;
// Prisma's advisory lock key: replicas starting together apply each migration once.
const lockKey = 72707369;

interface Applied {
  migration_name: string;
  checksum: string;
}

/** Names of the migrations in `migrations` not yet applied (or not all applied). */
export async function pendingMigrations(driver: MigrationDriver, migrations: Migration[]): Promise<string[]> {
  const applied = await driver.transaction(async (tx) => {
    const exists = await tx.query<{ t: string | null }>(`SELECT to_regclass('"_prisma_migrations"')::text AS t`);
    if (!exists[0]?.t) return [];
    return tx.query<Applied>(`SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`);
  });
  const names = new Set(applied.map((a) => a.migration_name));
  return migrations.filter((m) => !names.has(m.name)).map((m) => m.name);
}

/**
 * Applies each pending migration in its own transaction and records it as Prisma does. A failing
 * migration rolls back, is not recorded, and throws `migration_failed`; an applied migration whose
 * file changed since throws too. Returns the names applied now.
 */
export async function applyMigrations(driver: MigrationDriver, migrations: Migration[]): Promise<string[]> {
  await driver.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [lockKey]);
    await tx.exec(createTable);
  });
  const done: string[] = [];
  for (const m of migrations) {
    const applied = await driver.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [lockKey]);
      const rows = await tx.query<Applied>(
        `SELECT migration_name, checksum FROM "_prisma_migrations" WHERE migration_name = $1 AND finished_at IS NOT NULL AND rolled_back_at IS NULL`,
        [m.name],
      );
      if (rows[0]) {
        if (rows[0].checksum !== m.checksum) {
          throw new RegistryError('migration_failed', `migration ${m.name}: changed after it was applied (checksum ${rows[0].checksum}, file ${m.checksum})`, { migration: m.name });
        }
        return false;
      }
      try {
        await tx.exec(m.sql);
      } catch (err) {
        throw new RegistryError('migration_failed', `migration ${m.name}: ${(err as Error).message}`, { migration: m.name }, { cause: err });
      }
      await tx.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), now(), 1)`,
        [randomUUID(), m.checksum, m.name],
      );
      return true;
    });
    if (applied) done.push(m.name);
  }
  return done;
}
