// The registry over real HTTP on an ephemeral port: health and readiness, the typed tRPC client,
// bad requests (invalid JSON, oversized bodies), one log line per request, graceful shutdown.
import { cpSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCredentialPath, readAdminCredential } from '../src/auth/admin-credential.js';
import type { AppRouter } from '../src/index.js';
import { type RunningRegistry, readRunningRegistry, startRegistry } from '../src/server/registry.js';
import { createPostgresDatabase, pgliteTemplate, postgresSkipReason } from './harness.js';

const maxBodyBytes = 64 * 1024;

function client(url: string, token?: string) {
  return createTRPCClient<AppRouter>({
    links: [httpLink({ url: `${url}/trpc`, headers: () => (token ? { authorization: `Bearer ${token}` } : {}) })],
  });
}

/** A raw request (fetch cannot send a lying content-length). */
function raw(url: string, opts: { method: string; path: string; headers?: Record<string, string>; body?: string | Buffer }) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(`${url}${opts.path}`, { method: opts.method, headers: opts.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('registry over HTTP (PGlite)', () => {
  let dataDir: string;
  let registry: RunningRegistry;
  const lines: Record<string, unknown>[] = [];
  let admin: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'probeyard-http-'));
    cpSync(await pgliteTemplate(), join(dataDir, 'pglite'), { recursive: true });
    registry = await startRegistry({ dataDir, port: 0, logger: (l) => lines.push(l), maxBodyBytes });
    admin = readAdminCredential(dataDir) ?? '';
  });
  afterAll(async () => {
    await registry?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the admin credential in the data folder, readable only by its owner', () => {
    expect(admin).toMatch(/^pyi_/);
    expect(statSync(adminCredentialPath(dataDir)).mode & 0o777).toBe(0o600);
    expect(readRunningRegistry(dataDir)).toEqual({ url: registry.url, pid: process.pid });
  });

  it('answers /healthz and /readyz', async () => {
    expect(await (await fetch(`${registry.url}/healthz`)).json()).toEqual({ ok: true });
    const ready = await fetch(`${registry.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true });
    expect((await fetch(`${registry.url}/nope`)).status).toBe(404);
  });

  it('serves the typed client and logs one line per request with tenant, procedure, status, duration', async () => {
    const created = await client(registry.url, admin).tenant.create.mutate({ name: 'http-acme', ownerEmail: 'owner@http.example' });
    lines.length = 0;
    const me = await client(registry.url, created.ownerToken).whoami.query();
    expect(me.tenant.name).toBe('http-acme');
    const line = lines.find((l) => l.procedure === 'whoami');
    expect(line).toMatchObject({ level: 'info', msg: 'request', method: 'GET', tenant: 'http-acme', status: 200 });
    expect(typeof line?.durationMs).toBe('number');
    expect(lines.filter((l) => l.msg === 'request')).toHaveLength(1);
  });

  it('answers UNAUTHORIZED with 401 and a clear message', async () => {
    const err = await client(registry.url, 'pyt_revoked-or-made-up').whoami.query().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCClientError);
    expect((err as TRPCClientError<AppRouter>).data?.httpStatus).toBe(401);
    expect((err as Error).message).toBe('unauthorized: unknown token');
  });

  it('refuses invalid JSON with 400 and writes nothing', async () => {
    const before = await registry.db.prisma.tenant.count();
    const r = await raw(registry.url, {
      method: 'POST',
      path: '/trpc/tenant.create',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: '{"name": "broken", ',
    });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).error).toMatchObject({ data: { code: 'BAD_REQUEST' } });
    expect(JSON.parse(r.body).error.message).toMatch(/json/i);
    expect(await registry.db.prisma.tenant.count()).toBe(before);
  });

  it('refuses unknown fields with 400 naming them', async () => {
    const r = await raw(registry.url, {
      method: 'POST',
      path: '/trpc/tenant.create',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'extra', ownerEmail: 'a@example.com', isAdmin: true }),
    });
    expect(r.status).toBe(400);
    expect(r.body).toContain('isAdmin');
  });

  it.each([
    ['a declared content-length', true],
    ['a chunked body', false],
  ])('refuses an oversized request with 413 (%s) and writes nothing', async (_, declared) => {
    const before = await registry.db.prisma.tenant.count();
    const body = JSON.stringify({ name: 'huge', ownerEmail: 'a@example.com', pad: 'x'.repeat(maxBodyBytes) });
    const r = await raw(registry.url, {
      method: 'POST',
      path: '/trpc/tenant.create',
      headers: {
        authorization: `Bearer ${admin}`,
        'content-type': 'application/json',
        ...(declared ? { 'content-length': String(Buffer.byteLength(body)) } : { 'transfer-encoding': 'chunked' }),
      },
      body,
    });
    expect(r.status).toBe(413);
    expect(r.body).toMatch(/too large/i);
    expect(await registry.db.prisma.tenant.count()).toBe(before);
  });

  it('gives the typed client a readable 413', async () => {
    const before = await registry.db.prisma.tenant.count();
    const huge = client(registry.url, admin).tenant.create.mutate({ name: 'huge', ownerEmail: 'a@example.com', pad: 'x'.repeat(maxBodyBytes) } as never);
    await expect(huge).rejects.toMatchObject({ message: expect.stringMatching(/^request too large: \d+ bytes, the limit is \d+$/), data: { code: 'PAYLOAD_TOO_LARGE', httpStatus: 413 } });
    expect(await registry.db.prisma.tenant.count()).toBe(before);
  });
});

describe('graceful shutdown', () => {
  it('finishes an in-flight request, then stops accepting and releases the data folder', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'probeyard-http-stop-'));
    cpSync(await pgliteTemplate(), join(dataDir, 'pglite'), { recursive: true });
    try {
      const registry = await startRegistry({ dataDir, port: 0, logger: () => {} });
      const admin = readAdminCredential(dataDir) ?? '';
      // tenant.create with a password runs scrypt: long enough to be in flight when close starts.
      const arrived = new Promise((r) => registry.http.server.once('request', r));
      const inFlight = client(registry.url, admin).tenant.create.mutate({ name: 'late', ownerEmail: 'o@late.example', ownerPassword: 'a long enough password' });
      await arrived;
      const closing = registry.close();
      await expect(inFlight).resolves.toMatchObject({ tenant: { name: 'late' } });
      await closing;
      await expect(fetch(`${registry.url}/healthz`)).rejects.toThrow();
      expect(existsSync(join(dataDir, 'registry.lock'))).toBe(false);
      expect(readRunningRegistry(dataDir)).toBeUndefined();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(postgresSkipReason)('registry over HTTP (PostgreSQL)', () => {
  it('migrates a fresh database at start, serves the API, and reports ready', async () => {
    const pgdb = await createPostgresDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), 'probeyard-http-pg-'));
    const lines: Record<string, unknown>[] = [];
    try {
      const registry = await startRegistry({ dataDir, databaseUrl: pgdb.url, port: 0, logger: (l) => lines.push(l) });
      try {
        expect(lines.filter((l) => l.msg === 'migration applied').length).toBeGreaterThan(0);
        expect(await (await fetch(`${registry.url}/readyz`)).json()).toEqual({ ready: true });
        const admin = readAdminCredential(dataDir) ?? '';
        const made = await client(registry.url, admin).tenant.create.mutate({ name: 'pg-acme', ownerEmail: 'owner@pg.example' });
        const me = await client(registry.url, made.ownerToken).whoami.query();
        expect(me).toMatchObject({ role: 'owner', tenant: { name: 'pg-acme' } });
        // No PGlite, so no lock: the folder keeps only the admin credential and the URL file.
        expect(existsSync(join(dataDir, 'registry.lock'))).toBe(false);
        expect(existsSync(join(dataDir, 'pglite'))).toBe(false);
      } finally {
        await registry.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      await pgdb.drop();
    }
  });
});
