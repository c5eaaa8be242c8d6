// Uploads parsed on worker threads (src/data/upload-parser.ts): the reader's refusals reach the
// user as before; a file not parsed within the deadline, one that needs more than a worker's heap
// and one that decompresses past the budget are BAD_REQUEST, and the registry keeps serving
// (on PGlite and PostgreSQL, through createCaller); workers are reused, stopped by close(), and
// never hold a process open.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeTraceDat, isFormatError, MemoryByteSource, readTar } from '@probeyard/formats';
import { createTRPCClient, httpLink } from '@trpc/client';
import { describe, expect, it, vi } from 'vitest';
import { readAdminCredential } from '../src/auth/admin-credential.js';
import { UploadParser } from '../src/data/upload-parser.js';
import { deadlineWallFactor, threadCpuMs, WorkerPool } from '../src/jobs/worker-pool.js';
import type { AppRouter } from '../src/index.js';
import { startRegistry } from '../src/server/registry.js';
import { prepareDataFolder } from '../src/testing.js';
import { backends, useHarness } from './harness.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const fixtures = `${root}packages/formats/test/fixtures/formats/`;
const datPath = `${root}examples/recordings/sched-small.dat`;
const dat = readFileSync(datPath).toString('base64');
const tarball = (tree: string) => execFileSync('tar', ['-C', `${fixtures}${tree}`, '-czf', '-', '.']).toString('base64');

/** The message of the FormatError packages/formats throws for `f()` in this thread. */
function formatErrorOf(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    if (isFormatError(err)) return err.message;
    throw err;
  }
  throw new Error('no FormatError');
}

/** A `.tar.gz` of `count` format files of 4 MiB each (a print fmt of 'a's): small, and big once decoded. */
function bomb(count: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'probeyard-bomb-'));
  try {
    const print = 'a'.repeat(4 * 1024 * 1024);
    for (let i = 0; i < count; i++) {
      mkdirSync(join(dir, 'events', 'big', `e${i}`), { recursive: true });
      writeFileSync(join(dir, 'events', 'big', `e${i}`, 'format'), `name: e${i}\nID: ${i + 1}\nformat:\n\tfield:int x;\toffset:0;\tsize:4;\tsigned:1;\n\nprint fmt: "${print}"\n`);
    }
    return execFileSync('tar', ['-C', dir, '-czf', '-', 'events'], { maxBuffer: 64 * 1024 * 1024 }).toString('base64');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.each(backends)('kernel.upload parsing on a worker on %s', (backend) => {
  /** How long the worker spins before each next parse (test-only hook of the parser). */
  const spins: number[] = [];
  const { skip, h } = useHarness(backend, () => ({ uploads: new UploadParser({ timeoutMs: 2000, spinMs: () => spins.shift() ?? 0 }) }));

  it.skipIf(skip)('refuses a file not parsed within the deadline, serves other requests meanwhile, and takes the next upload', async () => {
    const t = await h.tenant('slow');
    const before = await h.counts();
    spins.push(600_000);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    const slow = t.owner.kernel.upload({ name: 'slow', traceDat: dat }).then(
      () => undefined,
      (err: unknown) => err,
    );
    // The worker spins; this thread answers queries meanwhile.
    await expect(t.owner.kernel.list()).resolves.toEqual({ profiles: [], nextCursor: null });
    const err = await slow;
    clearInterval(timer);
    // refused by the deadline (2 s), not when the worker's 600 s spin ended: the message says which
    expect(err).toMatchObject({ code: 'BAD_REQUEST', message: 'kernel upload: trace.dat: not decoded within 2 s (the file may be hostile or corrupt)' });
    expect(ticks).toBeGreaterThan(20);
    expect(await h.counts()).toEqual(before);
    expect(h.deps.uploads.workers).toBe(0);

    const up = await t.owner.kernel.upload({ name: 'recorded', traceDat: dat });
    expect(up.profile).toMatchObject({ source: 'trace_dat', release: '6.18.44-fc-v782', machine: 'x86_64', formats: 2 });
    // A tarball too (agents report theirs through the same parser).
    spins.push(600_000);
    await expect(t.owner.kernel.upload({ name: 'slow-tree', tarball: tarball('linux-6.18') })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: 'kernel upload: tarball: not decoded within 2 s (the file may be hostile or corrupt)',
    });
    await expect(t.owner.kernel.upload({ name: 'tree', tarball: tarball('linux-6.18') })).resolves.toMatchObject({ profile: { source: 'events_tree' } });
  });
});

describe('kernel.upload parsing over HTTP (PGlite)', () => {
  it('answers a timed-out upload with 400 while /healthz stays quick, and stops its workers on close', async () => {
    const dataDir = await prepareDataFolder('probeyard-upload-http-');
    const spins = [600_000];
    // The deadline from StartOptions, as an embedding application would set it.
    const registry = await startRegistry({ dataDir, port: 0, logger: () => {}, uploads: { timeoutMs: 1500, spinMs: () => spins.shift() ?? 0 } });
    try {
      const api = (token: string) => createTRPCClient<AppRouter>({ links: [httpLink({ url: `${registry.url}/trpc`, headers: { authorization: `Bearer ${token}` } })] });
      const made = await api(readAdminCredential(dataDir) ?? '').tenant.create.mutate({ name: 'upload-http', ownerEmail: 'owner@upload.example' });
      const owner = api(made.ownerToken);
      const slow = fetch(`${registry.url}/trpc/kernel.upload`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${made.ownerToken}` },
        body: JSON.stringify({ name: 'slow', traceDat: dat }),
      });
      let refusedAt: 'before /healthz' | undefined;
      void slow.then(() => (refusedAt ??= 'before /healthz'));
      // Wait until the worker has the file (it is spinning), then ask for /healthz.
      await vi.waitFor(() => expect(registry.deps.uploads.workers).toBe(1), { timeout: 30_000, interval: 10 });
      // Answered while the worker spins, i.e. before the upload's deadline refuses it: parsing on
      // the server's thread would hold /healthz until after the refusal (an order, not a time).
      expect((await fetch(`${registry.url}/healthz`)).status).toBe(200);
      expect(refusedAt).toBeUndefined();
      const res = await slow;
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        error: { message: 'kernel upload: trace.dat: not decoded within 1.5 s (the file may be hostile or corrupt)', data: { code: 'BAD_REQUEST', registryCode: 'bad_request' } },
      });
      await expect(owner.kernel.upload.mutate({ name: 'recorded', traceDat: dat })).resolves.toMatchObject({ profile: { formats: 2 } });
      expect(registry.deps.uploads.workers).toBe(1);
    } finally {
      await registry.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
    expect(registry.deps.uploads.workers).toBe(0);
  });
});

describe('the worker deadline', () => {
  it("reads a thread's CPU time", () => {
    const before = threadCpuMs(process.pid) ?? Number.NaN;
    expect(before).toBeGreaterThanOrEqual(0);
    const process0 = process.cpuUsage();
    // busy until this thread's clock says 200 ms more (however long a busy machine takes to give them)
    const wallCap = performance.now() + 30_000;
    let now = before;
    while (now < before + 200 && performance.now() < wallCap) now = threadCpuMs(process.pid) ?? Number.NaN;
    expect(now - before).toBeGreaterThanOrEqual(200);
    // never more than the whole process used meanwhile (it is one of its threads)
    const used = process.cpuUsage(process0);
    expect(now - before).toBeLessThanOrEqual((used.user + used.system) / 1000 + 20);
  });

  it('counts CPU time: a task whose thread waits (no CPU) past the deadline finishes, one that spins past it does not', async () => {
    const pool = new WorkerPool<{ kind: 'trace.dat'; bytes: Uint8Array; limits: object }, unknown>({ name: 'the parser', entry: new URL('../src/data/upload-parse-worker', import.meta.url), maxWorkers: 1 });
    try {
      const task = () => ({ kind: 'trace.dat' as const, bytes: new Uint8Array(8), limits: {} });
      // 2.5x the deadline asleep, then a quick (refused) parse: an answer, not a deadline
      const slept = await pool.run('t', task(), { timeoutMs: 1000, what: 'sleep', sleepMs: 2500 });
      expect(slept).toHaveProperty('outcome');
      // spinning is CPU time: cut at the deadline (or, on a machine too busy to give it the CPU, at 4x in wall time)
      await expect(pool.run('t', task(), { timeoutMs: 400, what: 'spin', spinMs: 60_000 })).rejects.toMatchObject({ reason: 'deadline' });
      // asleep past deadlineWallFactor times the deadline: cut in wall time
      await expect(pool.run('t', task(), { timeoutMs: 200, what: 'sleep', sleepMs: 200 * deadlineWallFactor + 1500 })).rejects.toMatchObject({ reason: 'deadline' });
    } finally {
      await pool.close();
    }
  });
});

describe('the upload parser', () => {
  it("passes the reader's refusals on word for word", async () => {
    const parser = new UploadParser();
    try {
      const text = new TextEncoder().encode('not a trace.dat at all, just text');
      await expect(parser.parse('traceDat', Buffer.from(text).toString('base64'))).rejects.toMatchObject({
        code: 'bad_request',
        message: `kernel upload: trace.dat: ${formatErrorOf(() => decodeTraceDat(new MemoryByteSource(text)))}`,
      });
      const cut = new Uint8Array(readFileSync(datPath)).subarray(0, 3000);
      await expect(parser.parse('traceDat', Buffer.from(cut).toString('base64'))).rejects.toMatchObject({
        message: `kernel upload: trace.dat: ${formatErrorOf(() => decodeTraceDat(new MemoryByteSource(cut)))}`,
      });
      await expect(parser.parse('tarball', Buffer.from(text).toString('base64'))).rejects.toMatchObject({
        code: 'bad_request',
        message: `kernel upload: ${formatErrorOf(() => readTar(text))}`,
      });
      const readme = execFileSync('tar', ['-C', fixtures, '-czf', '-', 'README.md']).toString('base64');
      await expect(parser.parse('tarball', readme)).rejects.toMatchObject({ message: 'kernel upload: no events/<system>/<event>/format files in the tarball (1 files)' });
      // Every parse above ran on the one worker: a refusal is an answer, not a crash.
      expect(parser.workers).toBe(1);
    } finally {
      await parser.close();
    }
  });

  it('refuses a file that needs more than the heap of a worker, then parses the next on a new one', async () => {
    const parser = new UploadParser({ maxHeapMb: 16, maxDecompressedBytes: 1024 * 1024 * 1024 });
    try {
      // 48 MiB of format text from a ~70 KiB upload: more than the worker's 16 MiB heap.
      await expect(parser.parse('tarball', bomb(12))).rejects.toMatchObject({
        code: 'bad_request',
        message: "kernel upload: tarball: decoding it needs more than the parser's 16 MiB of memory (the file may be hostile or corrupt)",
      });
      expect(parser.workers).toBe(0);
      const ok = await parser.parse('tarball', tarball('linux-6.18'));
      expect(ok.rows.length).toBeGreaterThan(5);
      expect(ok.errors).toEqual([]);
    } finally {
      await parser.close();
    }
  });

  it('refuses a file that decompresses past the budget before decompressing it', async () => {
    const parser = new UploadParser({ maxDecompressedBytes: 16 * 1024 * 1024 });
    const tiny = new UploadParser({ maxDecompressedBytes: 1024 });
    try {
      await expect(parser.parse('tarball', bomb(12))).rejects.toMatchObject({
        code: 'bad_request',
        message: expect.stringMatching(/^kernel upload: tar: gzip: decompresses to 48(\.\d)? MiB \(more than 16 MiB\)$/),
      });
      // sched-small.dat is zstd-compressed (trace-cmd v7): its sections count against the budget.
      await expect(tiny.parse('traceDat', dat)).rejects.toMatchObject({
        code: 'bad_request',
        message: expect.stringMatching(/^kernel upload: trace\.dat: .*decompress to more than 1024 bytes in all$/),
      });
      await expect(parser.parse('traceDat', dat)).resolves.toMatchObject({ uname: 'Linux vm 6.18.44-fc-v782 x86_64' });
    } finally {
      await parser.close();
      await tiny.close();
    }
  });

  it('reuses its workers, stops them on close, and refuses work after', async () => {
    const parser = new UploadParser({ maxWorkers: 2 });
    // Two tenants' uploads (one tenant has at most half of the workers).
    const all = await Promise.all(['a', 'b', 'a', 'b'].map((tenant) => parser.parse('traceDat', dat, tenant)));
    expect(new Set(all.map((p) => p.hash)).size).toBe(1);
    expect(parser.workers).toBe(2);
    await parser.close();
    expect(parser.workers).toBe(0);
    await expect(parser.parse('traceDat', dat)).rejects.toMatchObject({ code: 'not_ready', message: 'kernel upload: the registry is shutting down' });
  });

  it('stops idle workers, and never holds a process open', async () => {
    const parser = new UploadParser({ idleMs: 50 });
    try {
      // Counted while the parse runs (a busy worker has no idle timer): counted after it, a late
      // continuation on a loaded machine could come after the 50 ms idle timer had already fired.
      const parsed = parser.parse('traceDat', dat);
      await vi.waitFor(() => expect(parser.workers).toBe(1), { timeout: 30_000, interval: 5 });
      await parsed;
      // stopped by its idle timer (50 ms), however late a loaded machine runs it
      await vi.waitFor(() => expect(parser.workers).toBe(0), { timeout: 10_000, interval: 20 });
    } finally {
      await parser.close();
    }
    // A process that parsed a file and did not close its parser (idle timeout 10 minutes) exits.
    const tsx = fileURLToPath(new URL('../node_modules/tsx/dist/cli.mjs', import.meta.url));
    const child = fileURLToPath(new URL('./fixtures/parse-upload.ts', import.meta.url));
    const r = spawnSync(process.execPath, [tsx, '--conditions=@probeyard/source', child, datPath], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('2 formats, 1 worker\n');
    expect(r.status).toBe(0);
  });
});
