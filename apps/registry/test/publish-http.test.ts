// Publishing over real HTTP (PGlite and PostgreSQL): the typed client, the background compat job
// runner of the server (progress, restart pick-up), a rejected program's diagnostics on the wire,
// and crash safety: the server SIGKILLed inside a publish transaction leaves nothing half-written,
// and the retried publish completes exactly once.
import { type ChildProcess, spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { afterAll, describe, expect, it } from 'vitest';
import { readAdminCredential } from '../src/auth/admin-credential.js';
import type { AppRouter } from '../src/index.js';
import { startRegistry } from '../src/server/registry.js';
import { type Backend, createPostgresDatabase, pgliteTemplate, postgresSkipReason } from './harness.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string) => readFileSync(`${root}${path}`);
const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64');
const tarball = (tree: string) => execFileSync('tar', ['-C', `${root}packages/compat/test/fixtures/formats/${tree}`, '-czf', '-', '.']).toString('base64');
const runqlat = read('examples/c/runqlat.o');
const forkcomm = read('examples/c/forkcomm.o');
// The tsx loader in this very process (not the tsx CLI, which would run the registry in a grandchild SIGKILL misses).
const tsxLoader = new URL('../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const child = fileURLToPath(new URL('./fixtures/crash-registry.ts', import.meta.url));

function client(url: string, token?: string) {
  return createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/trpc`, headers: () => (token ? { authorization: `Bearer ${token}` } : {}) })] });
}

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A data folder (PGlite) or a PostgreSQL database of its own, removed by `drop`. */
async function store(backend: Backend): Promise<{ dataDir: string; databaseUrl: string | undefined; drop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), `probeyard-publish-${backend}-`));
  if (backend === 'pglite') {
    cpSync(await pgliteTemplate(), join(dataDir, 'pglite'), { recursive: true });
    return { dataDir, databaseUrl: undefined, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const pg = await createPostgresDatabase();
  return {
    dataDir,
    databaseUrl: pg.url,
    async drop() {
      rmSync(dataDir, { recursive: true, force: true });
      await pg.drop();
    },
  };
}

/** The registry in a child process; resolves once it listens. */
function spawnRegistry(dataDir: string, databaseUrl: string | undefined, pause: boolean): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, ['--import', tsxLoader, '--conditions=@probeyard/source', child, dataDir], {
    env: { ...process.env, DATABASE_URL: databaseUrl ?? '', PAUSE_PUBLISH: pause ? '1' : '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  return new Promise((resolve, reject) => {
    proc.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) resolve({ proc, url: (JSON.parse(line) as { url: string }).url });
    });
    proc.on('exit', (code) => reject(new Error(`registry child exited with ${code}: ${err}`)));
  });
}

const backends: [Backend, string | undefined][] = [
  ['pglite', undefined],
  ['postgres', postgresSkipReason],
];

describe.each(backends)('publishing over HTTP on %s', (backend, skip) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it.skipIf(skip)('publishes, computes compat in the background with progress, and picks up unfinished jobs after a restart', async () => {
    const s = await store(backend);
    cleanups.push(s.drop);
    let registry = await startRegistry({ dataDir: s.dataDir, databaseUrl: s.databaseUrl, port: 0, logger: () => {} });
    cleanups.push(() => registry.close());
    const admin = readAdminCredential(s.dataDir) ?? '';
    const made = await client(registry.url, admin).tenant.create.mutate({ name: 'http-pub', ownerEmail: 'owner@pub.example' });
    let api = client(registry.url, made.ownerToken);
    await api.kernel.upload.mutate({ name: 'linux', tarball: tarball('linux-6.18') });
    const pub = await api.program.publish.mutate({ name: 'runqlat', version: '1.0.0', artifact: b64(runqlat) });
    expect(pub).toMatchObject({ created: true, version: { abi: 'module-like, no ABI', artifactKind: 'elf' } });
    // The server's runner computes it; nobody drains the queue here.
    const job = await until('the compat job', async () => {
      const j = (await api.compat.job.query({ id: pub.compatJobId ?? '' })).job;
      return j.status === 'done' ? j : undefined;
    });
    expect(job).toMatchObject({ total: 1, done: 1, error: null });
    expect((await api.compat.matrix.query({ name: 'runqlat' })).cells.map((c) => c.verdict)).toEqual(['relocated']);

    // A rejected program: 422 with the verifier's diagnostics in the error data.
    const bad = '.license "GPL"\n.section tracepoint/sched/sched_switch\nbad:\n    r0 = *(u64 *)(r2 + 0)\n    exit\n';
    const err = await api.program.publish.mutate({ name: 'bad', version: '1.0.0', artifact: b64(bad) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCClientError);
    expect((err as TRPCClientError<AppRouter>).data).toMatchObject({
      code: 'UNPROCESSABLE_CONTENT',
      httpStatus: 422,
      registryCode: 'program_rejected',
      diagnostics: [{ program: 'bad', insnIndex: 0, message: 'R2 !read_ok' }],
    });

    // Publish a second version, then stop the server before its job can have run … (the job is
    // made to look as if a killed process had claimed it).
    const second = await api.program.publish.mutate({ name: 'forkcomm', version: '1.0.0', artifact: b64(forkcomm) });
    await until('the second job', async () => ((await api.compat.job.query({ id: second.compatJobId ?? '' })).job.status === 'done' ? true : undefined));
    await registry.close();
    const { openDatabase } = await import('../src/db/open.js');
    const db = await openDatabase({ dataDir: s.dataDir, databaseUrl: s.databaseUrl });
    await db.prisma.compatResult.deleteMany({ where: { version: { program: { name: 'forkcomm' } } } });
    await db.prisma.compatJob.update({ where: { id: second.compatJobId ?? '' }, data: { status: 'running', done: 0, finishedAt: null } });
    await db.close();
    // … and the next start finishes it.
    registry = await startRegistry({ dataDir: s.dataDir, databaseUrl: s.databaseUrl, port: 0, logger: () => {} });
    api = client(registry.url, made.ownerToken);
    const resumed = await until('the resumed job', async () => {
      const j = (await api.compat.job.query({ id: second.compatJobId ?? '' })).job;
      return j.status === 'done' ? j : undefined;
    });
    expect(resumed).toMatchObject({ total: 2, done: 2 });
    expect((await api.compat.matrix.query({ name: 'forkcomm' })).cells.map((c) => c.verdict)).toEqual(['incompatible']);
    await registry.close();
  });

  it.skipIf(skip)('survives SIGKILL inside a publish transaction: nothing half-written, the retry completes exactly once', async () => {
    const s = await store(backend);
    cleanups.push(s.drop);
    const first = await spawnRegistry(s.dataDir, s.databaseUrl, true);
    cleanups.push(async () => {
      first.proc.kill('SIGKILL');
    });
    const admin = readAdminCredential(s.dataDir) ?? '';
    const made = await client(first.url, admin).tenant.create.mutate({ name: 'crash', ownerEmail: 'owner@crash.example' });
    const input = { name: 'runqlat', version: '1.0.0', artifact: b64(runqlat), description: 'run queue latency' };
    const inFlight = client(first.url, made.ownerToken).program.publish.mutate(input).then(
      () => 'answered',
      () => 'failed',
    );
    await until('the paused publish', async () => (existsSync(join(s.dataDir, 'publish-paused')) ? true : undefined));
    first.proc.kill('SIGKILL');
    expect(await inFlight).toBe('failed');
    await new Promise<void>((r) => (first.proc.exitCode !== null || first.proc.signalCode !== null ? r() : first.proc.once('exit', () => r())));

    const second = await spawnRegistry(s.dataDir, s.databaseUrl, false);
    cleanups.push(async () => {
      second.proc.kill('SIGKILL');
    });
    const api = client(second.url, made.ownerToken);
    // Nothing of the killed publish: no program, no version, no compat job, no audit row.
    expect((await api.program.list.query()).programs).toEqual([]);
    expect((await api.compat.jobs.query()).jobs).toEqual([]);
    expect((await api.audit.list.query()).entries.filter((e) => e.action === 'program.publish')).toEqual([]);
    // The retry publishes once; a second retry is a no-op.
    const retried = await api.program.publish.mutate(input);
    expect(retried).toMatchObject({ created: true, program: { name: 'runqlat', description: 'run queue latency', versions: 1 } });
    expect(await api.program.publish.mutate(input)).toMatchObject({ created: false, version: { id: retried.version.id } });
    expect((await api.version.list.query({ name: 'runqlat' })).versions.map((v) => v.id)).toEqual([retried.version.id]);
    expect((await api.audit.list.query()).entries.filter((e) => e.action === 'program.publish').map((e) => e.target.id)).toEqual([retried.version.id]);
    second.proc.kill('SIGTERM');
    await new Promise<void>((r) => (second.proc.exitCode !== null ? r() : second.proc.once('exit', () => r())));
  }, 300_000);
});
