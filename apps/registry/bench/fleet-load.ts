// `pnpm bench` for the registry: 10,000 simulated agents polling every 10 s with jitter (and their
// ETags), plus a stream of output batches, over real HTTP on loopback, against the embedded
// database (PGlite) and PostgreSQL (127.0.0.1:5432, a database of its own, dropped after).
// Reports throughput, p50/p99/max latency and errors, and the machine it ran on.
//
//   PROBEYARD_BENCH_SECONDS   measured duration per backend (default 60; e.g. 15 for a quick run)
//   PROBEYARD_BENCH_AGENTS    simulated agents (default 10000)
//   PROBEYARD_BENCH_BACKENDS  `pglite,postgres` (default both)
//   PROBEYARD_BENCH_POSTGRES_URL  maintenance database to create the bench database from
import { type ChildProcess, spawn } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { Agent as HttpAgent, request } from 'node:http';
import { rmSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { hashSecret, newSecret, SecretKind } from '../src/auth/secrets.js';
import { ensureAdminCredential } from '../src/auth/admin-credential.js';
import { bulkCreateAgents } from '../src/data/agents.js';
import { createDeployment } from '../src/data/deployments.js';
import { createTenantWithOwner } from '../src/data/tenants.js';
import { openDatabase } from '../src/db/open.js';
import { prepareDataFolder } from '../src/testing.js';
import { createHash } from 'node:crypto';

const seconds = Number(process.env.PROBEYARD_BENCH_SECONDS ?? 60);
const agentCount = Number(process.env.PROBEYARD_BENCH_AGENTS ?? 10_000);
const backends = (process.env.PROBEYARD_BENCH_BACKENDS ?? 'pglite,postgres').split(',').map((s) => s.trim());
const postgresAdminUrl = process.env.PROBEYARD_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pollEveryMs = 10_000;
const jitter = 0.2; // ±10 %
/** Output uploads per second across the fleet, each with `batchesPerUpload` batches of ~1 KiB. */
const uploadsPerSecond = Number(process.env.PROBEYARD_BENCH_UPLOADS_PER_S ?? 20);
const batchesPerUpload = 5;
const tsxLoader = new URL('../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const serveScript = new URL('serve.ts', import.meta.url).pathname;

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

class Recorder {
  private values: number[] = [];
  errors = 0;
  readonly errorKinds = new Map<string, number>();
  add(ms: number) {
    this.values.push(ms);
  }
  fail(kind: string) {
    this.errors++;
    this.errorKinds.set(kind, (this.errorKinds.get(kind) ?? 0) + 1);
  }
  summary() {
    const s = Float64Array.from(this.values).sort();
    return { count: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s.length ? (s[s.length - 1] ?? 0) : Number.NaN, errors: this.errors, errorKinds: Object.fromEntries(this.errorKinds) };
  }
}

/** Server-side poll durations, from the registry's request log. */
let serverPolls = new Recorder();
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 256 });

let retries = 0;

/**
 * One request on a kept-alive socket. A reset of a *reused* socket (the server closed it as idle
 * while the request was being sent) is retried once, as HTTP clients do; `retries` counts them.
 */
async function call(url: string, method: 'GET' | 'POST', path: string, token: string, body?: string): Promise<{ status: number; text: string }> {
  try {
    return await callOnce(url, method, path, token, body);
  } catch (err) {
    if ((err as { reusedSocket?: boolean }).reusedSocket && (err as { code?: string }).code === 'ECONNRESET') {
      retries++;
      return callOnce(url, method, path, token, body);
    }
    throw err;
  }
}

function callOnce(url: string, method: 'GET' | 'POST', path: string, token: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method,
        agent: httpAgent,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', (err) => reject(Object.assign(err, { reusedSocket: req.reusedSocket })));
    req.end(body);
  });
}

interface Fleet {
  ownerToken: string;
  agents: { credential: string; prod: boolean }[];
  setup: Record<string, number>;
}

/** Tenant, version, 10,000 agents (bulk, through the data layer) and a deployment to half of them. */
async function setUp(dataDir: string, databaseUrl: string | undefined): Promise<Fleet> {
  const setup: Record<string, number> = {};
  let t0 = performance.now();
  const db = await openDatabase({ dataDir, ...(databaseUrl ? { databaseUrl } : {}) });
  try {
    await db.migrate();
    await ensureAdminCredential(dataDir, db.prisma);
    setup.openAndMigrateMs = performance.now() - t0;
    const tenant = await createTenantWithOwner(db.prisma, { kind: 'system', id: null }, { name: 'bench', ownerEmail: 'owner@bench.example' });
    const tenantId = tenant.tenant.id;
    const program = await db.prisma.program.create({ data: { tenantId, name: 'runqlat' }, select: { id: true } });
    for (const version of ['1.0.0', '1.1.0']) {
      const artifact = Buffer.from(`; runqlat ${version}\n`);
      const [major = 0, minor = 0, patch = 0] = version.split('.').map(Number);
      await db.prisma.programVersion.create({
        data: { tenantId, programId: program.id, version, major, minor, patch, artifactKind: 'asm', artifact, digest: createHash('sha256').update(artifact).digest('hex'), size: artifact.length, spec: {}, manifest: {}, verifierReport: {} },
      });
    }
    t0 = performance.now();
    const agents = Array.from({ length: agentCount }, (_, i) => ({ credential: newSecret(SecretKind.agent), prod: i % 2 === 0, i }));
    await bulkCreateAgents(
      db.prisma,
      tenantId,
      agents.map((a) => ({ hostname: `node-${a.i}`, labels: { env: a.prod ? 'prod' : 'dev', rack: `r${a.i % 40}` }, credentialHash: hashSecret(a.credential) })),
    );
    setup.enrolAgentsMs = performance.now() - t0;
    t0 = performance.now();
    await db.prisma.$transaction((tx) => createDeployment(tx, { tenantId, actor: { kind: 'system', id: null }, name: 'runqlat', version: '1.0.0', selector: { env: 'prod' } }), { timeout: 120_000 });
    setup.deployToHalfMs = performance.now() - t0;
    return { ownerToken: tenant.secret, agents, setup };
  } finally {
    await db.close();
  }
}

function startServer(dataDir: string, databaseUrl: string | undefined): Promise<{ child: ChildProcess; url: string; stderr: () => string; exited: Promise<number | null> }> {
  const child = spawn(
    process.execPath,
    [...(process.env.PROBEYARD_BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROBEYARD_BENCH_CPU_PROF}`] : []), '--import', tsxLoader, '--conditions=@probeyard/source', serveScript, dataDir, databaseUrl ?? ''],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // The request log (one JSON line per request): server-side durations of polls.
  let partial = '';
  child.stdout?.on('data', (c: Buffer) => {
    const lines = (partial + c.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('"agent.poll"')) continue;
      const ms = Number(/"durationMs":([0-9.]+)/.exec(line)?.[1]);
      if (Number.isFinite(ms)) serverPolls.add(ms);
    }
  });
  let err = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening (\S+)/.exec(err);
      if (m?.[1]) resolve({ child, url: m[1], stderr: () => err, exited });
    });
    exited.then((code) => reject(new Error(`registry exited (${code}): ${err}`)));
  });
}

async function runLoad(url: string, fleet: Fleet) {
  const warm = new Recorder(); // the first poll of each agent: caches are cold (credential, assignments)
  const steady = new Recorder(); // every later poll
  const uploads = new Recorder();
  const etags: (string | undefined)[] = new Array(fleet.agents.length).fill(undefined);
  const polled = new Uint8Array(fleet.agents.length);
  let notModified = 0;
  // Every poll's latency by the 5-second window it started in: shows whether a high p99 is a
  // burst (start-up, the mid-run redeploy) or steady queueing.
  const windows: number[][] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let stop = false;
  const timers = new Set<NodeJS.Timeout>();
  const start = performance.now();
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();

  const poll = async (i: number) => {
    const a = fleet.agents[i];
    if (!a || stop) return;
    const input = encodeURIComponent(JSON.stringify(etags[i] ? { etag: etags[i] } : {}));
    const t = performance.now();
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const rec = polled[i] ? steady : warm;
    try {
      const r = await call(url, 'GET', `/trpc/agent.poll?input=${input}`, a.credential);
      const ms = performance.now() - t;
      if (r.status !== 200) rec.fail(`http ${r.status}`);
      else {
        const data = JSON.parse(r.text).result.data as { notModified: boolean; etag: string; assignments?: unknown[] };
        if (data.notModified) notModified++;
        else if (a.prod && !data.assignments?.length) rec.fail('wrong assignments');
        etags[i] = data.etag;
        rec.add(ms);
        const w = Math.floor((t - start) / 5000);
        (windows[w] ??= []).push(ms);
      }
    } catch (err) {
      rec.fail((err as Error).message);
    } finally {
      inFlight--;
      polled[i] = 1;
    }
    schedule(i, pollEveryMs * (1 - jitter / 2 + Math.random() * jitter));
  };
  const schedule = (i: number, delay: number) => {
    if (stop) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      void poll(i);
    }, delay);
    timers.add(timer);
  };
  for (let i = 0; i < fleet.agents.length; i++) schedule(i, Math.random() * pollEveryMs);

  // The output stream: prod agents (they have a target) upload batches with rising sequences.
  const prod = fleet.agents.map((a, i) => (a.prod ? i : -1)).filter((i) => i >= 0);
  const targets = new Map<number, { targetId: string; next: number }>();
  const payload = { events: Array.from({ length: 16 }, (_, k) => ({ pid: 1000 + k, comm: `worker-${k}`, latencyNs: 12_345 * k })) };
  let uploadCursor = 0;
  const uploadTimer = setInterval(async () => {
    if (stop) return;
    const i = prod[uploadCursor++ % prod.length] ?? 0;
    const a = fleet.agents[i];
    if (!a) return;
    let target = targets.get(i);
    try {
      if (!target) {
        const r = await call(url, 'GET', `/trpc/agent.poll?input=${encodeURIComponent('{}')}`, a.credential);
        const targetId = (JSON.parse(r.text).result.data.assignments as { targetId: string }[])[0]?.targetId ?? '';
        target = { targetId, next: 0 };
        targets.set(i, target);
      }
      const batches = Array.from({ length: batchesPerUpload }, () => ({ targetId: target?.targetId, sequence: target ? target.next++ : 0, kind: 'events', payload, eventsSeen: 16 }));
      const t = performance.now();
      const r = await call(url, 'POST', '/trpc/agent.uploadOutputs', a.credential, JSON.stringify({ batches }));
      if (r.status !== 200) uploads.fail(`http ${r.status}: ${r.text.slice(0, 120)}`);
      else uploads.add(performance.now() - t);
    } catch (err) {
      uploads.fail((err as Error).message);
    }
  }, 1000 / uploadsPerSecond);

  // Half-way, a new deployment: every prod agent's assignments change (cache invalidation at scale).
  let redeployMs = Number.NaN;
  let redeployOutcome = 'not answered before the end';
  const redeploy = setTimeout(async () => {
    const t = performance.now();
    const r = await call(url, 'POST', '/trpc/deployment.create', fleet.ownerToken, JSON.stringify({ name: 'runqlat', version: '1.1.0', selector: 'env=prod,rack=r0' }));
    redeployMs = performance.now() - t;
    redeployOutcome = r.status === 200 ? 'ok' : `http ${r.status}: ${r.text.slice(0, 160)}`;
  }, (seconds * 1000) / 2);

  await new Promise((r) => setTimeout(r, seconds * 1000));
  stop = true;
  clearInterval(uploadTimer);
  clearTimeout(redeploy);
  for (const t of timers) clearTimeout(t);
  const elapsed = (performance.now() - start) / 1000;
  lag.disable();
  const clientLag = { p50: lag.percentile(50) / 1e6, p99: lag.percentile(99) / 1e6 };
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 20));
  const w = warm.summary();
  const s = steady.summary();
  const byWindow = windows.map((v, k) => {
    const sorted = Float64Array.from(v ?? []).sort();
    return { fromS: k * 5, n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
  });
  return { byWindow, elapsedS: elapsed, polls: w.count + s.count, pollsPerS: (w.count + s.count) / elapsed, notModified, maxInFlight, warm: w, steady: s, clientLag, redeployOutcome, uploads: uploads.summary(), batchesPerS: (uploads.summary().count * batchesPerUpload) / elapsed, redeployMs };
}

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');

async function bench(backend: string) {
  let dataDir = '';
  let databaseUrl: string | undefined;
  let dropDb: (() => Promise<void>) | undefined;
  if (backend === 'postgres') {
    const name = `probeyard_bench_${process.pid}`;
    const admin = new pg.Client({ connectionString: postgresAdminUrl, connectionTimeoutMillis: 2000 });
    try {
      await admin.connect();
    } catch (err) {
      console.log(`postgres: skipped, ${postgresAdminUrl} does not answer (${(err as Error).message})`);
      return;
    }
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const u = new URL(postgresAdminUrl);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
    dropDb = async () => {
      const c = new pg.Client({ connectionString: postgresAdminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    };
  }
  dataDir = await prepareDataFolder(`probeyard-bench-${backend}-`);
  if (backend === 'postgres') rmSync(`${dataDir}/pglite`, { recursive: true, force: true });
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    const fleet = await setUp(dataDir, databaseUrl);
    serverPolls = new Recorder();
    retries = 0;
    server = await startServer(dataDir, databaseUrl);
    const r = await runLoad(server.url, fleet);
    server.child.kill('SIGTERM');
    await server.exited;
    const stats = /fleet (\{.*\})/.exec(server.stderr())?.[1];
    console.log(`\n## ${backend}: ${agentCount} agents, ${seconds} s`);
    console.log(`setup: migrate ${fmt(fleet.setup.openAndMigrateMs ?? 0)} ms, bulk-create ${agentCount} agents ${fmt(fleet.setup.enrolAgentsMs ?? 0)} ms, deploy to ${agentCount / 2} ${fmt(fleet.setup.deployToHalfMs ?? 0)} ms`);
    console.log(`polls: ${r.polls} in ${fmt(r.elapsedS)} s = ${fmt(r.pollsPerS)}/s (${r.notModified} notModified), max in flight ${r.maxInFlight}`);
    console.log(`  first poll per agent (cold): n=${r.warm.count} p50 ${fmt(r.warm.p50)} ms  p99 ${fmt(r.warm.p99)} ms  max ${fmt(r.warm.max)} ms  errors ${r.warm.errors}`);
    console.log(`  later polls (steady):        n=${r.steady.count} p50 ${fmt(r.steady.p50)} ms  p99 ${fmt(r.steady.p99)} ms  max ${fmt(r.steady.max)} ms  errors ${r.steady.errors}`);
    console.log(`  every poll by 5-s window (p50/p99 ms): ${r.byWindow.map((x) => `${x.fromS}s ${fmt(x.p50)}/${fmt(x.p99)}`).join(', ')}`);
    const sp = serverPolls.summary();
    console.log(`  inside the registry (its request log): n=${sp.count} p50 ${fmt(sp.p50)} ms  p99 ${fmt(sp.p99)} ms  max ${fmt(sp.max)} ms; ${retries} resets of idle kept-alive sockets retried`);
    const serverLag = /lag (\{.*\})/.exec(server.stderr())?.[1];
    console.log(`event-loop delay: load generator p50 ${fmt(r.clientLag.p50)} ms p99 ${fmt(r.clientLag.p99)} ms; registry ${serverLag ?? '-'}`);
    console.log(`uploads: n=${r.uploads.count} (${fmt(r.batchesPerS)} batches/s) p50 ${fmt(r.uploads.p50)} ms  p99 ${fmt(r.uploads.p99)} ms  max ${fmt(r.uploads.max)} ms  errors ${r.uploads.errors}`);
    console.log(`redeploy to ${Math.ceil(agentCount / 40)} agents mid-run: ${fmt(r.redeployMs)} ms (${r.redeployOutcome}); server ${stats ?? ''}`);
    for (const [k, v] of Object.entries({ ...r.warm.errorKinds, ...r.steady.errorKinds, ...r.uploads.errorKinds })) console.log(`  error ${k}: ${v}`);
    return r;
  } finally {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
    await dropDb?.();
  }
}

const cpu = cpus();
console.log(`# registry fleet load bench`);
console.log(`machine: ${cpu.length} × ${cpu[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`load: ${agentCount} agents polling every ${pollEveryMs / 1000} s ±${(jitter * 50).toFixed(0)} % with ETags, ${uploadsPerSecond} uploads/s × ${batchesPerUpload} batches; registry in its own process, one load-generator process, loopback HTTP`);
for (const b of backends) await bench(b);
httpAgent.destroy();
