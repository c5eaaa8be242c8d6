// Test harness: a migrated registry database on PGlite (a temp data folder) or on the PostgreSQL
// server at 127.0.0.1:5432 (a database of its own per run, dropped after), and callers that go
// through the real context creation and router (`createCaller`).
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, vi } from 'vitest';
import pg from 'pg';
import { ensureAdminCredential } from '../src/auth/admin-credential.js';
import { LoginLimiter } from '../src/auth/rate-limit.js';
import { type Context, createContextFactory, createDeps, type RegistryDeps } from '../src/context.js';
import { type Database, openDatabase } from '../src/db/open.js';
import { createCaller } from '../src/router.js';
import { pgliteTemplate } from '../src/testing.js';

export { pgliteTemplate };

// Opening PGlite takes seconds, and much longer on a loaded 2-core machine: generous limits for
// every file that uses this harness.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 600_000 });

export type Backend = 'pglite' | 'postgres';

/** Where tests find PostgreSQL (a maintenance database to create and drop test databases from). */
export const postgresAdminUrl = process.env.PROBEYARD_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function probePostgres(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: postgresAdminUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (err) {
    return `PostgreSQL at ${postgresAdminUrl.replace(/\/\/[^@]*@/, '//')} does not answer (${(err as Error).message})`;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Why PostgreSQL tests skip, or undefined when the server answers. Printed once per file. */
export const postgresSkipReason = await probePostgres();
if (postgresSkipReason) console.warn(`skipping PostgreSQL tests: ${postgresSkipReason}`);

export const backends: Backend[] = ['pglite', 'postgres'];

export function skipReason(backend: Backend): string | undefined {
  return backend === 'postgres' ? postgresSkipReason : undefined;
}

export type Caller = ReturnType<typeof createCaller>;

export interface Harness {
  backend: Backend;
  db: Database;
  dataDir: string;
  deps: RegistryDeps;
  adminSecret: string;
  createContext: (auth?: string) => Promise<Context>;
  /** A caller authenticated by `secret` (anonymous when undefined). */
  caller(secret?: string, ip?: string): Promise<Caller>;
  admin(): Promise<Caller>;
  /** A new tenant with a unique name; returns its owner's token and caller. */
  tenant(prefix?: string): Promise<{ id: string; name: string; ownerToken: string; ownerId: string; owner: Caller }>;
  /** A member of `tenant` with `role` (invited, and the invitation accepted with `password` or a random one) and a token of that role. */
  member(tenantOwner: Caller, role: 'owner' | 'admin' | 'publisher' | 'viewer', password?: string): Promise<{ userId: string; email: string; token: string; caller: Caller }>;
  /** Row counts of every table, to assert that a refused request wrote nothing. */
  counts(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

let seq = 0;
export function unique(prefix: string): string {
  seq++;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${seq}`;
}

/** A fresh PostgreSQL database of its own (`probeyard_test_<pid>_<random>`); `drop` removes it. */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `probeyard_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => dropPostgresDatabase(name),
  };
}

/**
 * Drops a test database once the connections closed before it have left the server. `DROP ...
 * WITH (FORCE)` kills a backend that is still processing its client's goodbye, and the client
 * then reports that FATAL as an error of its own (an unhandled error that fails the run); the
 * FORCE is kept for connections a failed test left open, after the wait.
 */
async function dropPostgresDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  try {
    for (let i = 0; i < 50; i++) {
      const r = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
      if (r.rows[0]?.n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** A database of its own on `backend`, not yet migrated; `drop` removes it and its data folder. */
export async function openTestDatabase(backend: Backend, migrations?: string): Promise<{ db: Database; dataDir: string; drop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), `probeyard-registry-${backend}-`));
  let dbName: string | undefined;
  let db: Database;
  if (backend === 'postgres') {
    dbName = `probeyard_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${dbName}"`);
    await admin.end();
    const url = new URL(postgresAdminUrl);
    url.pathname = `/${dbName}`;
    db = await openDatabase({ dataDir, databaseUrl: url.toString(), ...(migrations ? { migrations } : {}) });
  } else {
    cpSync(await pgliteTemplate(), join(dataDir, 'pglite'), { recursive: true });
    // PROBEYARD_TEST_PGLITE_THREAD=worker: the database on its own thread, as the server runs it.
    db = await openDatabase({ dataDir, ...(migrations ? { migrations } : {}), ...(process.env.PROBEYARD_TEST_PGLITE_THREAD === 'worker' ? { pgliteThread: 'worker' as const } : {}) });
  }
  return {
    db,
    dataDir,
    async drop() {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
      if (dbName) await dropPostgresDatabase(dbName);
    },
  };
}

/** `deps`: what to give `createDeps` besides the database (e.g. an `UploadParser` with a short deadline). */
export async function openHarness(backend: Backend, deps_: Partial<Omit<RegistryDeps, 'db'>> = {}): Promise<Harness> {
  const { db, dataDir, drop } = await openTestDatabase(backend);
  await db.migrate();
  const adminSecret = await ensureAdminCredential(dataDir, db.prisma);
  const deps = createDeps(db.prisma, { loginLimiter: new LoginLimiter({ windowMs: 60_000 }), ...deps_ });
  const factory = createContextFactory(deps);
  const createContext = (auth?: string, ip?: string) => factory({ authorization: auth ? `Bearer ${auth}` : undefined, ip: ip ?? '10.0.0.1' });
  const caller = async (secret?: string, ip?: string) => createCaller(await createContext(secret, ip));
  const h: Harness = {
    backend,
    db,
    dataDir,
    deps,
    adminSecret,
    createContext,
    caller,
    admin: () => caller(adminSecret),
    async tenant(prefix = 'acme') {
      const name = unique(prefix).toLowerCase();
      const r = await (await h.admin()).tenant.create({ name, ownerEmail: `owner@${name}.example` });
      return { id: r.tenant.id, name, ownerToken: r.ownerToken, ownerId: r.owner.id, owner: await caller(r.ownerToken) };
    },
    async member(owner, role, password) {
      const email = `${unique(role)}@example.com`.toLowerCase();
      const { secret: invitation } = await owner.member.invite({ email, role });
      await (await caller()).auth.acceptInvitation({ secret: invitation, password: password ?? `harness password ${unique('pw')}` });
      const ctx = await owner.whoami();
      const member = { userId: (await db.prisma.user.findUniqueOrThrow({ where: { email }, select: { id: true } })).id };
      // A token of exactly that role for the member, made in the data layer.
      const { createToken } = await import('../src/data/tokens.js');
      const { secret } = await db.prisma.$transaction((tx) =>
        createToken(tx, { tenantId: ctx.tenant.id, userId: member.userId, kind: 'api', name: 'test', role, expiresAt: null }),
      );
      return { userId: member.userId, email, token: secret, caller: await caller(secret) };
    },
    async counts() {
      const p = db.prisma;
      const [tenants, users, memberships, tokens, audit, agents, enrollments, programs] = await Promise.all([
        p.tenant.count(),
        p.user.count(),
        p.membership.count(),
        p.apiToken.count(),
        p.auditEntry.count(),
        p.agent.count(),
        p.enrollmentToken.count(),
        p.program.count(),
      ]);
      const [versions, kernelProfiles, compatResults, compatJobs, providers, providerVersions] = await Promise.all([
        p.programVersion.count(),
        p.kernelProfile.count(),
        p.compatResult.count(),
        p.compatJob.count(),
        p.provider.count(),
        p.providerVersion.count(),
      ]);
      return { tenants, users, memberships, tokens, audit, agents, enrollments, programs, versions, kernelProfiles, compatResults, compatJobs, providers, providerVersions };
    },
    async close() {
      // The fleet state's timers (audit sync, last-seen flush) must not query a closing database.
      await deps.fleet.close();
      await deps.uploads.close();
      await deps.verifier.close();
      await drop();
    },
  };
  return h;
}

/**
 * The harness of one `describe.each(backends)` block: opened before its tests (unless `skip`, the
 * reason this backend is skipped, is set) and closed after them. `h` stands for the opened
 * harness from `beforeAll` on (reading it before then, or on a skipped backend, throws).
 * `deps` is called in `beforeAll`, so nothing it makes exists for a skipped backend.
 */
export function useHarness(backend: Backend, deps?: () => Partial<Omit<RegistryDeps, 'db'>>): { skip: string | undefined; h: Harness } {
  const skip = skipReason(backend);
  let opened: Harness | undefined;
  beforeAll(async () => {
    if (!skip) opened = await openHarness(backend, deps?.());
  });
  afterAll(async () => {
    await opened?.close();
  });
  const h = new Proxy({} as Harness, {
    get(_, key) {
      if (!opened) throw new Error(`harness on ${backend}: not open (${skip ?? 'read before beforeAll'})`);
      return Reflect.get(opened, key);
    },
  });
  return { skip, h };
}
