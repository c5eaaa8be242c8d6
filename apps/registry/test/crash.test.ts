// Crash safety of output ingest: the registry process is SIGKILLed while an output upload is inside
// its transaction (held there by a fault-injection pause); after a restart none of that request's
// batches exist, and the retried request lands exactly once. On PGlite and on PostgreSQL.
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTRPCClient, httpLink } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureAdminCredential } from '../src/auth/admin-credential.js';
import { createTenantWithOwner } from '../src/data/tenants.js';
import { openDatabase } from '../src/db/open.js';
import type { AppRouter } from '../src/index.js';
import { backends, createPostgresDatabase, pgliteTemplate, skipReason } from './harness.js';
import { insertVersion } from './support/fleet.js';

// The tsx loader in this very process (not the tsx CLI, which runs the script in a grandchild
// that a SIGKILL of its parent would not reach).
const tsxLoader = new URL('../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const fixture = fileURLToPath(new URL('fixtures/serve-registry.ts', import.meta.url));

function client(url: string, token?: string) {
  return createTRPCClient<AppRouter>({
    links: [httpLink({ url: `${url}/trpc`, headers: () => (token ? { authorization: `Bearer ${token}` } : {}) })],
  });
}

interface Served {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  exited: Promise<NodeJS.Signals | number | null>;
}

/** Starts the registry in a child process; resolves once it prints its URL. */
function serve(dataDir: string, databaseUrl: string | undefined, env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, ['--import', tsxLoader, '--conditions=@probeyard/source', fixture, dataDir, databaseUrl ?? ''], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  child.stderr?.on('data', (c) => {
    err += c;
  });
  const exited = new Promise<NodeJS.Signals | number | null>((r) => child.once('exit', (code, signal) => r(signal ?? code)));
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (c) => {
      out += c;
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve({ child, url: line.trim(), stderr: () => err, exited });
    });
    exited.then((code) => reject(new Error(`registry exited (${code}) before serving: ${err}`)));
  });
}

async function waitFor(what: string, check: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.each(backends)('output ingest survives a SIGKILL on %s', (backend) => {
  const skip = skipReason(backend);
  let dataDir: string;
  let databaseUrl: string | undefined;
  let drop: (() => Promise<void>) | undefined;
  let ownerToken: string;
  let running: Served | undefined;
  beforeAll(async () => {
    if (skip) return;
    dataDir = mkdtempSync(join(tmpdir(), `probeyard-crash-${backend}-`));
    if (backend === 'postgres') {
      const pgdb = await createPostgresDatabase();
      databaseUrl = pgdb.url;
      drop = pgdb.drop;
    } else {
      cpSync(await pgliteTemplate(), join(dataDir, 'pglite'), { recursive: true });
    }
    // The tenant and a published version, made before the registry process takes the data folder.
    const db = await openDatabase({ dataDir, ...(databaseUrl ? { databaseUrl } : {}) });
    try {
      await db.migrate();
      const secret = await ensureAdminCredential(dataDir, db.prisma);
      expect(secret).toMatch(/^pyi_/);
      const t = await createTenantWithOwner(db.prisma, { kind: 'system', id: null }, { name: 'crash', ownerEmail: 'owner@crash.example' });
      ownerToken = t.secret;
      await insertVersion(db.prisma, t.tenant.id, 'p', '1.0.0');
    } finally {
      await db.close();
    }
  });
  afterAll(async () => {
    if (running && running.child.exitCode === null) {
      running.child.kill('SIGTERM');
      await running.exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await drop?.();
  });

  it.skipIf(skip)('leaves nothing half-written, and the retry lands exactly once', async () => {
    const first = await serve(dataDir, databaseUrl, { PROBEYARD_FAULT_INGEST_PAUSE_MS: '60000' });
    running = first;
    const owner = client(first.url, ownerToken);
    const { enrollmentToken } = await owner.agent.createEnrollmentToken.mutate({ labels: { env: 'prod' } });
    const enrolled = await client(first.url).agent.enroll.mutate({ enrollmentToken, hostname: 'crash-node' });
    const { deployment } = await owner.deployment.create.mutate({ name: 'p', version: '1.0.0', selector: 'env=prod' });
    const poll = await client(first.url, enrolled.credential).agent.poll.query({});
    const targetId = (!poll.notModified && poll.assignments[0]?.targetId) || '';
    const batches = Array.from({ length: 20 }, (_, sequence) => ({ targetId, sequence, kind: 'events' as const, payload: { sequence, events: Array.from({ length: 50 }, (_, i) => ({ pid: i, comm: `c${i}` })) }, eventsSeen: 50 }));

    const upload = client(first.url, enrolled.credential).agent.uploadOutputs.mutate({ batches });
    const failed = upload.then(
      () => 'answered',
      () => 'failed',
    );
    // The batches are inserted and the transaction is open: kill the process there.
    await waitFor('the ingest to pause inside its transaction', () => first.stderr().includes('fault: output ingest paused inside its transaction'));
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(await failed).toBe('failed');

    const second = await serve(dataDir, databaseUrl);
    running = second;
    const owner2 = client(second.url, ownerToken);
    const agent2 = client(second.url, enrolled.credential);
    expect((await owner2.deployment.outputs.query({ id: deployment.id })).batches).toEqual([]);
    expect(await agent2.agent.uploadOutputs.mutate({ batches })).toEqual({ accepted: 20, duplicates: 0 });
    expect(await agent2.agent.uploadOutputs.mutate({ batches })).toEqual({ accepted: 0, duplicates: 20 });
    const stored = await owner2.deployment.outputs.query({ id: deployment.id, limit: 500 });
    expect(stored.batches.map((b) => b.sequence)).toEqual(batches.map((b) => b.sequence));
    expect(stored.batches.map((b) => b.payload)).toEqual(batches.map((b) => b.payload));
    // What was committed before the crash is intact.
    expect((await owner2.deployment.get.query({ id: deployment.id })).targets.map((t) => t.hostname)).toEqual(['crash-node']);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
