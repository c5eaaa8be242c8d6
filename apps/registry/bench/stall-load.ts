// `pnpm bench` (second part): can one tenant stall the others? (issue 13, findings 4 and 5.) A
// heavy tenant publishes programs the verifier runs to its 1 M-instruction limit (a loop of a
// million iterations) — several at once — and uploads, then
// deletes, big kernel profiles (9,000 formats each) in a loop, while 1,000 agents of another tenant
// poll every 10 s ±10 % with their ETags. Target: the agents' poll p99 under 50 ms. Prints p50/p99/
// max by backend and by 5-s window, what the heavy tenant got done, and the machine's load.
//
//   PROBEYARD_BENCH_SECONDS   measured duration per backend (default 60)
//   PROBEYARD_BENCH_AGENTS    polling agents (default 1000)
//   PROBEYARD_BENCH_BACKENDS  `pglite,postgres` (default both); `pglite-main`: PGlite in the server's
//                             thread (PROBEYARD_PGLITE_THREAD=main), as before it had a thread of its own
//   PROBEYARD_BENCH_FROM      `dist` (default: the built registry, dist/ — run `pnpm build` first) or `source`
//   PROBEYARD_BENCH_CPU_PROF  a folder: the registry's process writes a CPU profile there
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Agent as HttpAgent, request } from 'node:http';
import { cpus, loadavg, totalmem } from 'node:os';
import pg from 'pg';
import { ensureAdminCredential } from '../src/auth/admin-credential.js';
import { hashSecret, newSecret, SecretKind } from '../src/auth/secrets.js';
import { bulkCreateAgents } from '../src/data/agents.js';
import { createDeployment } from '../src/data/deployments.js';
import { createTenantWithOwner } from '../src/data/tenants.js';
import { openDatabase } from '../src/db/open.js';
import { prepareDataFolder } from '../src/testing.js';
import { eventsTree } from '../test/support/tar.js';

const seconds = Number(process.env.PROBEYARD_BENCH_SECONDS ?? 60);
const agentCount = Number(process.env.PROBEYARD_BENCH_AGENTS ?? 1000);
const backends = (process.env.PROBEYARD_BENCH_BACKENDS ?? 'pglite,postgres').split(',').map((s) => s.trim());
const postgresAdminUrl = process.env.PROBEYARD_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pollEveryMs = 10_000;
const targetP99Ms = 50;
/** Publishes the heavy tenant keeps going at once (more than its share of the verifier's workers). */
const concurrentPublishes = 3;
const formatsPerUpload = 9000;
const tsxLoader = new URL('../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const serveScript = new URL('serve.ts', import.meta.url).pathname;
const from = process.env.PROBEYARD_BENCH_FROM ?? 'dist';
if (from !== 'dist' && from !== 'source') throw new Error(`PROBEYARD_BENCH_FROM: dist or source, not ${from}`);
const cpuProf = process.env.PROBEYARD_BENCH_CPU_PROF;
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 256 });

/**
 * A program the verifier runs to its 1 M-instruction limit, with `salt` making each version's bytes
 * differ: a loop of a million iterations (`r0 += 1; if r0 < 1000001 goto -2`), which the verifier
 * (as the kernel's) walks iteration by iteration. The program (24 independent branches) was
 * the heaviest until the verifier learnt to prune as the kernel does: it now takes ~0.4 ms.
 */
function heavyProgram(salt: number): string {
  return `.license "GPL"\n.section tracepoint/sched/sched_switch\nheavy:\n    r7 = ${salt}\n    r0 = 0\n    r0 += 1\n    if r0 < 1000001 goto -2\n    exit\n`;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN);
}

function call(url: string, method: 'GET' | 'POST', path: string, token: string, body?: string): Promise<{ status: number; text: string }> {
  const once = () =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        `${url}${path}`,
        { method, agent: httpAgent, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}) } },
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
  // A reset of a reused kept-alive socket (closed by the server as idle) is retried once.
  return once().catch((err: { reusedSocket?: boolean; code?: string }) => (err.reusedSocket && err.code === 'ECONNRESET' ? once() : Promise.reject(err)));
}

async function setUp(dataDir: string, databaseUrl: string | undefined) {
  const db = await openDatabase({ dataDir, ...(databaseUrl ? { databaseUrl } : {}) });
  try {
    await db.migrate();
    await ensureAdminCredential(dataDir, db.prisma);
    const fleet = await createTenantWithOwner(db.prisma, { kind: 'system', id: null }, { name: 'fleet', ownerEmail: 'owner@fleet.example' });
    const heavy = await createTenantWithOwner(db.prisma, { kind: 'system', id: null }, { name: 'heavy', ownerEmail: 'owner@heavy.example' });
    const tenantId = fleet.tenant.id;
    const program = await db.prisma.program.create({ data: { tenantId, name: 'runqlat' }, select: { id: true } });
    const artifact = Buffer.from('; runqlat 1.0.0\n');
    await db.prisma.programVersion.create({
      data: { tenantId, programId: program.id, version: '1.0.0', major: 1, minor: 0, patch: 0, artifactKind: 'asm', artifact, digest: createHash('sha256').update(artifact).digest('hex'), size: artifact.length, spec: {}, manifest: {}, verifierReport: {} },
    });
    const agents = Array.from({ length: agentCount }, (_, i) => ({ credential: newSecret(SecretKind.agent), i }));
    await bulkCreateAgents(db.prisma, tenantId, agents.map((a) => ({ hostname: `node-${a.i}`, labels: { env: 'prod' }, credentialHash: hashSecret(a.credential) })));
    await db.prisma.$transaction((tx) => createDeployment(tx, { tenantId, actor: { kind: 'system', id: null }, name: 'runqlat', version: '1.0.0', selector: { env: 'prod' } }), { timeout: 120_000 });
    return { agents, heavyToken: heavy.secret };
  } finally {
    await db.close();
  }
}

function startServer(dataDir: string, databaseUrl: string | undefined, pgliteThread: 'main' | 'worker') {
  // From dist/: serve.ts (through tsx, as the bench is TypeScript) loads the built registry, and its
  // packages resolve to their dist/ (no `@probeyard/source` condition); workers run plain dist/ JavaScript.
  const args = [
    ...(cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : []),
    '--import',
    tsxLoader,
    ...(from === 'source' ? ['--conditions=@probeyard/source'] : []),
    serveScript,
    dataDir,
    databaseUrl ?? '',
  ];
  const child: ChildProcess = spawn(process.execPath, args, {
    // stdout: the request log, whose poll durations are the server's side of the latency.
    stdio: ['ignore', 'pipe', 'pipe'],
    // Uploads of 9,000 formats take seconds to parse on a loaded machine: a deadline that lets them through, so their inserts are part of the load.
    env: { ...process.env, PROBEYARD_BENCH_FROM: from, PROBEYARD_PGLITE_THREAD: pgliteThread, PROBEYARD_UPLOAD_PARSE_TIMEOUT_MS: process.env.PROBEYARD_UPLOAD_PARSE_TIMEOUT_MS ?? '60000' },
  });
  let err = '';
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
    const end = out.lastIndexOf('\n');
    if (end < 0) return;
    for (const line of out.slice(0, end).split('\n')) {
      if (!line.includes('"agent.poll"')) continue;
      const r = JSON.parse(line) as { durationMs?: number };
      if (typeof r.durationMs === 'number') serverPolls.push({ at: performance.now(), ms: r.durationMs });
    }
    out = out.slice(end + 1);
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise<{ child: ChildProcess; url: string; stderr: () => string; exited: Promise<number | null> }>((resolve, reject) => {
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening (\S+)/.exec(err);
      if (m?.[1]) resolve({ child, url: m[1], stderr: () => err, exited });
    });
    exited.then((code) => reject(new Error(`registry exited (${code}): ${err}`)));
  });
}

async function runLoad(url: string, agents: { credential: string }[], heavyToken: string, trees: string[]) {
  // Polls by phase: the first third of the run the heavy tenant is idle (after 5 s of every agent's
  // cold first poll), then it works: the same run, the same machine load, side by side.
  const quietFromMs = 5000;
  const heavyFromMs = (seconds * 1000) / 3;
  const quiet: number[] = [];
  const busy: number[] = [];
  const windows: number[][] = [];
  const errors = new Map<string, number>();
  const fail = (k: string) => errors.set(k, (errors.get(k) ?? 0) + 1);
  const etags: (string | undefined)[] = new Array(agents.length).fill(undefined);
  let stop = false;
  const timers = new Set<NodeJS.Timeout>();
  const start = performance.now();
  const poll = async (i: number) => {
    const a = agents[i];
    if (!a || stop) return;
    const t = performance.now();
    try {
      const r = await call(url, 'GET', `/trpc/agent.poll?input=${encodeURIComponent(JSON.stringify(etags[i] ? { etag: etags[i] } : {}))}`, a.credential);
      const ms = performance.now() - t;
      if (r.status !== 200) fail(`poll http ${r.status}`);
      else {
        etags[i] = (JSON.parse(r.text).result.data as { etag: string }).etag;
        if (t - start >= heavyFromMs) busy.push(ms);
        else if (t - start >= quietFromMs) quiet.push(ms);
        (windows[Math.floor((t - start) / 5000)] ??= []).push(ms);
      }
    } catch (err) {
      fail(`poll ${(err as Error).message}`);
    }
    if (stop) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      void poll(i);
    }, pollEveryMs * (0.9 + Math.random() * 0.2));
    timers.add(timer);
  };
  for (let i = 0; i < agents.length; i++) {
    const timer = setTimeout(() => void poll(i), Math.random() * pollEveryMs);
    timers.add(timer);
  }

  // The heavy tenant: publishes in parallel, and an upload/delete loop of big profiles.
  const heavy = { published: 0, rejected: 0, timedOut: 0, throttled: 0, uploads: 0, deletes: 0, other: new Map<string, number>(), publishMs: [] as number[], uploadMs: [] as number[] };
  const other = (k: string) => heavy.other.set(k, (heavy.other.get(k) ?? 0) + 1);
  let version = 0;
  const publishLoop = async () => {
    while (!stop) {
      const v = version++;
      const t = performance.now();
      const body = JSON.stringify({ name: 'heavy', version: `1.0.${v}`, artifact: Buffer.from(heavyProgram(v)).toString('base64') });
      const r = await call(url, 'POST', '/trpc/program.publish', heavyToken, body).catch((err: Error) => ({ status: 0, text: err.message }));
      heavy.publishMs.push(performance.now() - t);
      if (r.status === 200) heavy.published++;
      else if (r.status === 422 && r.text.includes('did not finish within')) heavy.timedOut++;
      else if (r.status === 422) heavy.rejected++;
      else if (r.status === 429) {
        heavy.throttled++;
        await new Promise((res) => setTimeout(res, 1000));
      } else other(`publish ${r.status}: ${r.text.slice(0, 100)}`);
    }
  };
  const uploadLoop = async () => {
    for (let k = 0; !stop; k++) {
      const name = `big-${k % trees.length}`;
      const t = performance.now();
      const r = await call(url, 'POST', '/trpc/kernel.upload', heavyToken, JSON.stringify({ name, tarball: trees[k % trees.length] })).catch((err: Error) => ({ status: 0, text: err.message }));
      heavy.uploadMs.push(performance.now() - t);
      if (r.status === 200) heavy.uploads++;
      else other(`upload ${r.status}: ${r.text.slice(0, 100)}`);
      // Deleted again (its formats collected), so the same tree uploads anew next round.
      const d = await call(url, 'POST', '/trpc/kernel.delete', heavyToken, JSON.stringify({ name })).catch((err: Error) => ({ status: 0, text: err.message }));
      if (d.status === 200) heavy.deletes++;
      else if (r.status === 200) other(`delete ${d.status}: ${d.text.slice(0, 100)}`);
    }
  };
  await new Promise((r) => setTimeout(r, heavyFromMs));
  const loops = [...Array.from({ length: concurrentPublishes }, publishLoop), uploadLoop()];
  await new Promise((r) => setTimeout(r, seconds * 1000 - heavyFromMs));
  stop = true;
  for (const t of timers) clearTimeout(t);
  const elapsedS = (performance.now() - start) / 1000;
  await Promise.all(loops);
  const serverSide = (from: number, to: number) => serverPolls.filter((p) => p.at - start >= from && p.at - start < to).map((p) => p.ms);
  const stats = (v: number[]) => {
    const sorted = Float64Array.from(v).sort();
    return { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN };
  };
  return {
    elapsedS,
    quiet: stats(quiet),
    busy: stats(busy),
    serverQuiet: stats(serverSide(quietFromMs, heavyFromMs)),
    serverBusy: stats(serverSide(heavyFromMs, Number.POSITIVE_INFINITY)),
    heavyFromS: heavyFromMs / 1000,
    byWindow: windows.map((v, k) => {
      const s = Float64Array.from(v ?? []).sort();
      return `${k * 5}s ${fmt(percentile(s, 50))}/${fmt(percentile(s, 99))}`;
    }),
    errors,
    heavy,
  };
}

/** Polls as the registry timed them (its request log: from the request's arrival to its answer), by when the line came. */
let serverPolls: { at: number; ms: number }[] = [];

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const median = (v: number[]) => percentile(Float64Array.from(v).sort(), 50);

async function bench(backend: string, trees: string[]) {
  let databaseUrl: string | undefined;
  let dropDb: (() => Promise<void>) | undefined;
  if (backend === 'postgres') {
    const name = `probeyard_stall_bench_${process.pid}`;
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
  const dataDir = await prepareDataFolder(`probeyard-stall-bench-${backend}-`);
  if (backend === 'postgres') rmSync(`${dataDir}/pglite`, { recursive: true, force: true });
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    const { agents, heavyToken } = await setUp(dataDir, databaseUrl);
    serverPolls = [];
    server = await startServer(dataDir, databaseUrl, backend === 'pglite-main' ? 'main' : 'worker');
    const load = loadavg().map((l) => l.toFixed(2)).join(' ');
    const r = await runLoad(server.url, agents, heavyToken, trees);
    const h = r.heavy;
    console.log(`\n## ${backend}: ${agentCount} agents polling, ${seconds} s, load average at start ${load}, at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    const line = (s: typeof r.busy) => `n=${s.n} p50 ${fmt(s.p50)} ms  p99 ${fmt(s.p99)} ms  max ${fmt(s.max)} ms`;
    console.log(`agents' polls, heavy tenant idle (5 s to ${fmt(r.heavyFromS)} s): ${line(r.quiet)}`);
    console.log(`agents' polls, heavy tenant working (${fmt(r.heavyFromS)} s to the end): ${line(r.busy)} — target p99 < ${targetP99Ms} ms: ${r.busy.p99 < targetP99Ms ? 'met' : 'NOT met'}`);
    console.log(`  by 5-s window (p50/p99 ms): ${r.byWindow.join(', ')}`);
    console.log(`  as the registry timed them (arrival to answer): heavy tenant idle ${line(r.serverQuiet)}; working ${line(r.serverBusy)}`);
    console.log(
      `heavy tenant: ${h.published} published, ${h.rejected} rejected by the verifier, ${h.timedOut} past the verification deadline, ${h.throttled} told to retry (429); median publish ${fmt(median(h.publishMs))} ms`,
    );
    console.log(`  ${h.uploads} uploads of ${formatsPerUpload} formats (median ${fmt(median(h.uploadMs))} ms), ${h.deletes} deletes`);
    for (const [k, v] of [...r.errors, ...h.other]) console.log(`  error ${k}: ${v}`);
  } finally {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    if (server) {
      // The registry's event-loop delay per 5-s window (from its start; the polls' windows count from the first poll) and over the run.
      const lines = server.stderr().split('\n');
      const windows = lines.filter((l) => l.startsWith('window ')).map((l, k) => {
        const w = JSON.parse(l.slice(7)) as { p99Ms: number; maxMs: number };
        return `${(k + 1) * 5}s ${fmt(w.p99Ms)}/${fmt(w.maxMs)}`;
      });
      console.log(`  registry event-loop delay by 5-s window (p99/max ms): ${windows.join(', ')}`);
      for (const l of lines) if (l.startsWith('lag ') || l.startsWith('fleet ')) console.log(`  registry ${l}`);
    }
    rmSync(dataDir, { recursive: true, force: true });
    await dropDb?.();
  }
}

const cpu = cpus();
console.log(`# registry stall bench: one tenant verifying and uploading, the others polling (registry from ${from === 'dist' ? 'dist/' : 'sources'})`);
console.log(`machine: ${cpu.length} × ${cpu[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(
  `load: ${agentCount} agents polling every ${pollEveryMs / 1000} s ±10 % with ETags; one tenant with ${concurrentPublishes} publishes at a time of a program the verifier runs to its limit, and uploads + deletes of ${formatsPerUpload}-format profiles in a loop`,
);
const trees = [eventsTree(formatsPerUpload, 'ba'), eventsTree(formatsPerUpload, 'bb')];
for (const b of backends) await bench(b, trees);
httpAgent.destroy();
