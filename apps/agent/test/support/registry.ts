// A real registry for the agent's integration tests: on PGlite in a temp data folder (or on the
// PostgreSQL server, a database of its own), a tenant with its owner token, the CLI run
// in-process against it, and a restart that keeps the data (chaos tests).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CliIo, run as runCli } from '@probeyard/cli';
import type { AppRouter } from '@probeyard/registry';
import { createTenantOffline, type RunningRegistry, startRegistry } from '@probeyard/registry/server';
import { createTRPCClient, httpLink, type TRPCClient } from '@trpc/client';
import { prepareDataFolder } from '@probeyard/registry/testing';
import pg from 'pg';

export interface OutputRow {
  targetId: string;
  sequence: number;
  kind: 'map_snapshot' | 'events' | 'counters';
  payload: Record<string, unknown>;
  eventsSeen: number;
  eventsLost: number;
}

export interface TestRegistry {
  url: string;
  dataDir: string;
  databaseUrl: string | undefined;
  ownerToken: string;
  tenantId: string;
  running: RunningRegistry | undefined;
  /** A typed client of the registry as the tenant's owner. */
  api(): TRPCClient<AppRouter>;
  /** Every output batch of a deployment, by sequence. */
  outputs(deploymentId: string, targetId?: string): Promise<OutputRow[]>;
  /** The CLI, in-process, as the tenant's owner: exit code and output. */
  cli(args: string[], options?: { local?: boolean }): Promise<{ code: number; out: string; err: string; last: string }>;
  /** Stops the registry (the data stays). */
  stop(): Promise<void>;
  /** Starts it again on the same data and port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export const postgresAdminUrl = process.env.PROBEYARD_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Why PostgreSQL is not usable here, or undefined. */
export async function postgresSkipReason(): Promise<string | undefined> {
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

async function createPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `probeyard_agent_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    drop: async () => {
      const c = new pg.Client({ connectionString: postgresAdminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export function bufferIo(): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: (t: string) => {
      io.out += t;
    },
    stderr: (t: string) => {
      io.err += t;
    },
    readStdin: async () => new Uint8Array(),
    readFile: async (path: string) => new Uint8Array(await (await import('node:fs/promises')).readFile(path)),
    writeFile: async (path: string, data: Uint8Array | string) => (await import('node:fs/promises')).writeFile(path, data),
  };
  return io;
}

export async function startTestRegistry(options: { postgres?: boolean } = {}): Promise<TestRegistry> {
  let databaseUrl: string | undefined;
  let drop: (() => Promise<void>) | undefined;
  let dataDir: string;
  if (options.postgres) {
    const db = await createPostgresDatabase();
    databaseUrl = db.url;
    drop = db.drop;
    dataDir = mkdtempSync(join(tmpdir(), 'probeyard-agent-registry-'));
  } else {
    dataDir = await prepareDataFolder('probeyard-agent-registry-');
  }
  const made = await createTenantOffline({ dataDir, databaseUrl, name: 'agents', ownerEmail: 'owner@agents.example' });
  let port = 0;
  const r: TestRegistry = {
    url: '',
    dataDir,
    databaseUrl,
    ownerToken: made.ownerToken,
    tenantId: made.tenant.id,
    running: undefined,
    api() {
      return createTRPCClient<AppRouter>({ links: [httpLink({ url: `${r.url}/trpc`, headers: () => ({ authorization: `Bearer ${r.ownerToken}` }) })] });
    },
    async outputs(deploymentId, targetId) {
      const api = r.api();
      const rows: OutputRow[] = [];
      let after: { sequence: number; targetId: string } | undefined;
      for (;;) {
        const page = await api.deployment.outputs.query({ id: deploymentId, ...(targetId ? { targetId } : {}), ...(after ? { after } : {}), limit: 500 });
        rows.push(...(page.batches as OutputRow[]));
        if (!page.nextCursor) return rows;
        after = page.nextCursor;
      }
    },
    async cli(args, options = {}) {
      const io = bufferIo();
      const code = await runCli(options.local ? args : [...args, '--registry', r.url, '--token', r.ownerToken], io);
      return { code, out: io.out, err: io.err, last: io.out.trimEnd().split('\n').at(-1) ?? '' };
    },
    async start() {
      r.running = await startRegistry({ dataDir, databaseUrl, port, host: '127.0.0.1', logger: () => {} });
      r.url = r.running.url;
      port = Number(new URL(r.url).port);
    },
    async stop() {
      await r.running?.close();
      r.running = undefined;
    },
    async close() {
      await r.stop();
      await drop?.();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  await r.start();
  return r;
}
