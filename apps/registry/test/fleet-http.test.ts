// The fleet over real HTTP (a registry on an ephemeral port, the typed tRPC client), on PGlite and
// on PostgreSQL: deploy, poll with ETags (GET), report status, upload outputs, read them back,
// stop; statuses of refusals; last-seen times written when the registry closes.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAdminCredential } from '../src/auth/admin-credential.js';
import type { AppRouter } from '../src/index.js';
import { type RunningRegistry, startRegistry } from '../src/server/registry.js';
import { backends, createPostgresDatabase, pgliteTemplate, skipReason } from './harness.js';
import { insertVersion } from './support/fleet.js';

function client(url: string, token?: string) {
  return createTRPCClient<AppRouter>({
    links: [httpLink({ url: `${url}/trpc`, headers: () => (token ? { authorization: `Bearer ${token}` } : {}) })],
  });
}

async function httpStatus(p: Promise<unknown>): Promise<number | undefined> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TRPCClientError);
  return (err as TRPCClientError<AppRouter>).data?.httpStatus;
}

describe.each(backends)('fleet over HTTP on %s', (backend) => {
  const skip = skipReason(backend);
  let dataDir: string;
  let registry: RunningRegistry;
  let drop: (() => Promise<void>) | undefined;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    if (skip) return;
    dataDir = mkdtempSync(join(tmpdir(), `probeyard-fleet-http-${backend}-`));
    let databaseUrl: string | undefined;
    if (backend === 'postgres') {
      const pgdb = await createPostgresDatabase();
      databaseUrl = pgdb.url;
      drop = pgdb.drop;
    } else {
      cpSync(await pgliteTemplate(), join(dataDir, 'pglite'), { recursive: true });
    }
    registry = await startRegistry({ dataDir, databaseUrl, port: 0, logger: (l) => lines.push(l), maxBodyBytes: 1024 * 1024 });
  });
  afterAll(async () => {
    await registry?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await drop?.();
  });

  it.skipIf(skip)('deploys, polls with ETags, takes status and outputs, and stops', async () => {
    const admin = client(registry.url, readAdminCredential(dataDir) ?? '');
    const made = await admin.tenant.create.mutate({ name: 'fleet-http', ownerEmail: 'owner@fleet.example' });
    const other = await admin.tenant.create.mutate({ name: 'fleet-other', ownerEmail: 'owner@other.example' });
    const owner = client(registry.url, made.ownerToken);
    const v = await insertVersion(registry.db.prisma, made.tenant.id, 'runqlat', '0.3.1');
    const { enrollmentToken } = await owner.agent.createEnrollmentToken.mutate({ labels: { env: 'prod' } });
    const enrolled = await client(registry.url).agent.enroll.mutate({ enrollmentToken, hostname: 'node-http' });
    const agent = client(registry.url, enrolled.credential);

    const { deployment } = await owner.deployment.create.mutate({ name: 'runqlat', version: '0.3.1', selector: 'env=prod' });
    expect(deployment.targets.total).toBe(1);

    lines.length = 0;
    const first = await agent.agent.poll.query({});
    if (first.notModified) throw new Error('expected assignments');
    expect(first.assignments).toMatchObject([{ deploymentId: deployment.id, digest: v.digest, desiredState: 'running' }]);
    const again = await agent.agent.poll.query({ etag: first.etag });
    expect(again).toEqual({ notModified: true, etag: first.etag, pollAfterSeconds: 10 });
    expect(lines.filter((l) => l.procedure === 'agent.poll').map((l) => [l.method, l.status])).toEqual([
      ['GET', 200],
      ['GET', 200],
    ]);
    // The plain GET (the server's direct path) answers; a batched GET is refused (batching is off:
    // one request is one call), and bad input gets the generic handler's 400.
    const auth = { authorization: `Bearer ${enrolled.credential}` };
    const input = encodeURIComponent(JSON.stringify({ etag: first.etag }));
    const plain = await fetch(`${registry.url}/trpc/agent.poll?input=${input}`, { headers: auth });
    const batched = await fetch(`${registry.url}/trpc/agent.poll?batch=1&input=${encodeURIComponent(JSON.stringify({ 0: { etag: first.etag } }))}`, { headers: auth });
    expect(plain.status).toBe(200);
    expect(await plain.json()).toMatchObject({ result: { data: { etag: first.etag, notModified: true } } });
    expect(batched.status).toBe(400);
    for (const bad of ['%7Bnot-json', encodeURIComponent(JSON.stringify({ etag: 42 }))]) {
      const r = await fetch(`${registry.url}/trpc/agent.poll?input=${bad}`, { headers: auth });
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ error: { data: { code: expect.stringMatching(/^(BAD_REQUEST|PARSE_ERROR)$/) } } });
    }
    const targetId = first.assignments[0]?.targetId ?? '';
    const art = await agent.agent.artifact.query({ targetId });
    expect(art.digest).toBe(v.digest);

    await agent.agent.reportStatus.mutate({ targets: [{ targetId, status: 'running', counters: { eventsSeen: 5 } }] });
    const batches = [0, 1, 2].map((sequence) => ({ targetId, sequence, kind: 'events' as const, payload: [{ seq: sequence, comm: 'bash' }], eventsSeen: 1 }));
    expect(await agent.agent.uploadOutputs.mutate({ batches })).toEqual({ accepted: 3, duplicates: 0 });
    expect(await agent.agent.uploadOutputs.mutate({ batches })).toEqual({ accepted: 0, duplicates: 3 });
    expect(await httpStatus(agent.agent.uploadOutputs.mutate({ batches: [{ ...batches[0], payload: [] } as never] }))).toBe(409);
    // Over the HTTP body limit: 413 before any work.
    const huge = await fetch(`${registry.url}/trpc/agent.uploadOutputs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${enrolled.credential}`, 'content-type': 'application/json' },
      body: JSON.stringify({ batches: [{ targetId, sequence: 9, kind: 'events', payload: 'x'.repeat(1_100_000) }] }),
    });
    expect(huge.status).toBe(413);
    const outputs = await owner.deployment.outputs.query({ id: deployment.id });
    expect(outputs.batches.map((b) => b.payload)).toEqual(batches.map((b) => b.payload));

    const shown = await owner.deployment.get.query({ id: deployment.id });
    expect(shown.targets).toMatchObject([{ hostname: 'node-http', status: 'running', counters: { eventsSeen: 5 } }]);

    // Tenant B: 404 on A's deployment and targets; user token and agent credential are not interchangeable (401).
    const b = client(registry.url, other.ownerToken);
    expect(await httpStatus(b.deployment.get.query({ id: deployment.id }))).toBe(404);
    expect(await httpStatus(b.deployment.stop.mutate({ id: deployment.id }))).toBe(404);
    expect(await httpStatus(owner.agent.poll.query({}))).toBe(401);
    expect(await httpStatus(agent.deployment.list.query())).toBe(401);
    expect(await httpStatus(client(registry.url, 'pya_made-up').agent.poll.query({}))).toBe(401);

    await owner.deployment.stop.mutate({ id: deployment.id });
    const stopped = await agent.agent.poll.query({ etag: first.etag });
    expect(stopped.notModified === false && stopped.assignments.map((a) => a.desiredState)).toEqual(['stopped']);

    await owner.agent.revoke.mutate({ agentId: enrolled.agent.id });
    expect(await httpStatus(agent.agent.poll.query({ etag: first.etag }))).toBe(401);
  });

  it.skipIf(skip)('writes batched last-seen times when the registry closes', async () => {
    const admin = client(registry.url, readAdminCredential(dataDir) ?? '');
    const made = await admin.tenant.create.mutate({ name: 'seen', ownerEmail: 'owner@seen.example' });
    const owner = client(registry.url, made.ownerToken);
    const { enrollmentToken } = await owner.agent.createEnrollmentToken.mutate({});
    const enrolled = await client(registry.url).agent.enroll.mutate({ enrollmentToken, hostname: 'seen-node' });
    await registry.db.prisma.agent.update({ where: { id: enrolled.agent.id }, data: { lastSeenAt: null } });
    await client(registry.url, enrolled.credential).agent.poll.query({});
    expect((await registry.db.prisma.agent.findUniqueOrThrow({ where: { id: enrolled.agent.id } })).lastSeenAt).toBeNull();
    const prisma = registry.db.prisma;
    await registry.deps.fleet.close();
    expect((await prisma.agent.findUniqueOrThrow({ where: { id: enrolled.agent.id } })).lastSeenAt).toBeInstanceOf(Date);
  });
});
