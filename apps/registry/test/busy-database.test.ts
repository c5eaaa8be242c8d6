// Issue 13 (under load): `agent.enroll` waited for a transaction longer than Prisma allows (P2028)
// and ended in a 500. A busy database is now `unavailable`: 503 with Retry-After, in words, and
// the request may simply be sent again (the enrolment token is not spent). On PGlite every
// transaction waits for the one before it (one session); on PostgreSQL a row lock held elsewhere
// keeps the enrolment's transaction past its deadline.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readAdminCredential } from '../src/auth/admin-credential.js';
import { hashSecret } from '../src/auth/secrets.js';
import { postgresTransactionOptions } from '../src/db/open.js';
import { type RunningRegistry, startRegistry } from '../src/server/registry.js';
import { backends, createPostgresDatabase, pgliteTemplate, skipReason } from './harness.js';

async function post(url: string, procedure: string, body: unknown, token?: string) {
  const res = await fetch(`${url}/trpc/${procedure}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { result?: { data: Record<string, unknown> }; error?: { message: string; data: { code: string; registryCode?: string } } };
  return { status: res.status, retryAfter: res.headers.get('retry-after'), data: json.result?.data ?? {}, error: json.error };
}

describe.each(backends)('a busy database on %s', (backend) => {
  const skip = skipReason(backend);
  let dataDir: string;
  let databaseUrl: string | undefined;
  let registry: RunningRegistry;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    if (skip) return;
    dataDir = mkdtempSync(join(tmpdir(), `probeyard-busy-${backend}-`));
    if (backend === 'postgres') {
      const d = await createPostgresDatabase();
      databaseUrl = d.url;
      drop = d.drop;
    } else {
      cpSync(await pgliteTemplate(), join(dataDir, 'pglite'), { recursive: true });
    }
    registry = await startRegistry({ dataDir, databaseUrl, port: 0, logger: () => {} });
  }, 240_000);
  afterAll(async () => {
    await registry?.close();
    await drop?.();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it.skipIf(skip)(
    'answers agent.enroll with 503 and Retry-After when its transaction cannot run in time, and the same enrolment succeeds after',
    async () => {
      const admin = readAdminCredential(dataDir);
      const tenant = await post(registry.url, 'tenant.create', { name: `busy${backend}`, ownerEmail: `owner@busy${backend}.example` }, admin);
      expect(tenant.status).toBe(200);
      const ownerToken = String(tenant.data.ownerToken);
      const made = await post(registry.url, 'agent.createEnrollmentToken', {}, ownerToken);
      expect(made.status).toBe(200);
      const enrollmentToken = String(made.data.enrollmentToken);

      let busy: Awaited<ReturnType<typeof post>>;
      if (backend === 'pglite') {
        // One session: a transaction held open makes the enrolment's wait past its maxWait (10 s on PGlite).
        let release!: () => void;
        const held = new Promise<void>((r) => {
          release = r;
        });
        let inside!: () => void;
        const entered = new Promise<void>((r) => {
          inside = r;
        });
        const holder = registry.db.prisma.$transaction(
          async (tx) => {
            await tx.tenant.count();
            inside();
            await held;
          },
          { timeout: 60_000 },
        );
        // The enrolment goes once the transaction is open (a 100 ms sleep stood here: on a loaded
        // machine the transaction had not begun by then and the enrolment went through first).
        await entered;
        busy = await post(registry.url, 'agent.enroll', { enrollmentToken, hostname: 'node-1' });
        release();
        await holder;
      } else {
        // The token's row locked by another session past the enrolment transaction's deadline (15 s).
        const c = new pg.Client({ connectionString: databaseUrl });
        await c.connect();
        try {
          await c.query('BEGIN');
          await c.query('SELECT 1 FROM "EnrollmentToken" WHERE "hash" = $1 FOR UPDATE', [hashSecret(enrollmentToken)]);
          const pending = post(registry.url, 'agent.enroll', { enrollmentToken, hostname: 'node-1' });
          // Held 2 s past the enrolment's deadline (postgresTransactionOptions.timeout) from when it
          // waits on the lock (the answer comes once the lock is gone). Counted from the request
          // before: an enrolment slow to reach the lock on a loaded machine got it after the rollback.
          const watcher = new pg.Client({ connectionString: databaseUrl });
          await watcher.connect();
          try {
            const waitingOnLock = async () =>
              Number((await watcher.query("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n);
            await vi.waitFor(async () => expect(await waitingOnLock()).toBeGreaterThan(0), { timeout: 30_000, interval: 50 });
          } finally {
            await watcher.end();
          }
          await new Promise((r) => setTimeout(r, postgresTransactionOptions.timeout + 2000));
          await c.query('ROLLBACK');
          busy = await pending;
        } finally {
          await c.end();
        }
      }
      expect(busy.status).toBe(503);
      expect(busy.retryAfter).toBe('2');
      expect(busy.error?.data.code).toBe('SERVICE_UNAVAILABLE');
      expect(busy.error?.data.registryCode).toBe('unavailable');
      expect(busy.error?.message).toMatch(/^database busy: .*try again in 2 s$/);

      // Nothing was spent: the agent sends the same enrolment again and is enrolled.
      const again = await post(registry.url, 'agent.enroll', { enrollmentToken, hostname: 'node-1' });
      expect(again.status).toBe(200);
      expect((again.data.agent as { hostname?: string } | undefined)?.hostname).toBe('node-1');
    },
    60_000,
  );
});
