// The start-up migration runner on PGlite and PostgreSQL: applies what is pending in one transaction
// each, records it as Prisma does, is idempotent, and leaves no trace of a failing migration.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationsDir } from '../src/db/open.js';
import { readMigrations } from '../src/db/migrate.js';
import { backends, openTestDatabase, skipReason } from './harness.js';

function folder(migrations: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'probeyard-migrations-'));
  for (const [name, sql] of Object.entries(migrations)) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

async function tables(q: (sql: string) => Promise<{ t: string }[]>): Promise<string[]> {
  return (await q(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`)).map((r) => r.t);
}

describe('readMigrations', () => {
  it('reads the committed folder in order with sha256 checksums of the bytes', () => {
    const ms = readMigrations(migrationsDir);
    expect(ms.length).toBeGreaterThan(0);
    expect(ms.map((m) => m.name)).toEqual([...ms.map((m) => m.name)].sort());
    const first = ms[0];
    if (!first) throw new Error('no migration');
    const bytes = readFileSync(join(migrationsDir, first.name, 'migration.sql'));
    expect(first.checksum).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(first.checksum).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe.each(backends)('migrations on %s', (backend) => {
  const skip = skipReason(backend);
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0)) await c();
  });
  async function open(migrations?: string) {
    const t = await openTestDatabase(backend, migrations);
    cleanup.push(t.drop);
    const q = <R>(sql: string, params?: unknown[]) => t.db.migrationDriver.transaction((tx) => tx.query<R>(sql, params));
    return { ...t, q };
  }

  it.skipIf(skip)('applies the committed migrations once, as Prisma records them', async () => {
    const { db, q } = await open();
    const expected = readMigrations(migrationsDir);
    expect(await db.pending()).toEqual(expected.map((m) => m.name));
    expect(await db.migrate()).toEqual(expected.map((m) => m.name));
    expect(await db.pending()).toEqual([]);
    expect(await db.migrate()).toEqual([]);
    const rows = await q<Record<string, unknown>>(`SELECT * FROM "_prisma_migrations" ORDER BY migration_name`);
    expect(rows.map((r) => [r.migration_name, r.checksum, r.applied_steps_count, r.rolled_back_at, r.logs])).toEqual(
      expected.map((m) => [m.name, m.checksum, 1, null, null]),
    );
    expect(rows.every((r) => r.finished_at instanceof Date && r.started_at instanceof Date)).toBe(true);
    // Prisma's own columns, in Prisma's order.
    const cols = await q<{ c: string; d: string }>(
      `SELECT column_name AS c, data_type AS d FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(cols.map((c) => `${c.c} ${c.d}`)).toEqual([
      'id character varying',
      'checksum character varying',
      'finished_at timestamp with time zone',
      'migration_name character varying',
      'logs text',
      'rolled_back_at timestamp with time zone',
      'started_at timestamp with time zone',
      'applied_steps_count integer',
    ]);
    const all = await tables(q);
    for (const t of ['Tenant', 'User', 'Membership', 'ApiToken', 'Program', 'ProgramVersion', 'KernelProfile', 'EventFormat', 'KernelProfileFormat', 'CompatResult', 'Agent', 'EnrollmentToken', 'Deployment', 'DeploymentTarget', 'OutputBatch', 'AuditEntry']) {
      expect(all).toContain(t);
    }
  });

  it.skipIf(skip)('rolls a failing migration back whole and does not record it', async () => {
    const dir = folder({
      '20260101000000_one': 'CREATE TABLE "One" (id int PRIMARY KEY);',
      '20260102000000_two': 'CREATE TABLE "Two" (id int PRIMARY KEY);\nINSERT INTO "One" VALUES (1);\nSELECT no_such_function();',
      '20260103000000_three': 'CREATE TABLE "Three" (id int PRIMARY KEY);',
    });
    try {
      const { db, q } = await open(dir);
      const err = await db.migrate().catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'migration_failed', context: { migration: '20260102000000_two' } });
      expect((err as Error).message).toMatch(/^migration 20260102000000_two: .*no_such_function/);
      expect(await tables(q)).toEqual(['One', '_prisma_migrations']);
      expect(await q(`SELECT count(*)::int AS n FROM "One"`)).toEqual([{ n: 0 }]);
      expect((await q<{ migration_name: string }>(`SELECT migration_name FROM "_prisma_migrations"`)).map((r) => r.migration_name)).toEqual(['20260101000000_one']);
      expect(await db.pending()).toEqual(['20260102000000_two', '20260103000000_three']);
      // Fixed, it applies on the next start.
      writeFileSync(join(dir, '20260102000000_two', 'migration.sql'), 'CREATE TABLE "Two" (id int PRIMARY KEY);');
      const again = await openFresh(db, dir);
      expect(await again.migrate()).toEqual(['20260102000000_two', '20260103000000_three']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(skip)('refuses a migration changed after it was applied', async () => {
    const dir = folder({ '20260101000000_one': 'CREATE TABLE "One" (id int PRIMARY KEY);' });
    try {
      const { db } = await open(dir);
      expect(await db.migrate()).toEqual(['20260101000000_one']);
      writeFileSync(join(dir, '20260101000000_one', 'migration.sql'), 'CREATE TABLE "One" (id bigint PRIMARY KEY);');
      const changed = await openFresh(db, dir);
      await expect(changed.migrate()).rejects.toMatchObject({ code: 'migration_failed', message: expect.stringMatching(/changed after it was applied/) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// The same open database with the migrations folder re-read (as a restart would).
async function openFresh(db: Awaited<ReturnType<typeof openTestDatabase>>['db'], dir: string) {
  const { applyMigrations, pendingMigrations } = await import('../src/db/migrate.js');
  const ms = readMigrations(dir);
  return { migrate: () => applyMigrations(db.migrationDriver, ms), pending: () => pendingMigrations(db.migrationDriver, ms) };
}
