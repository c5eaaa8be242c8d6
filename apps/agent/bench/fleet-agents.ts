// 1,000 agents against one registry on PostgreSQL: a protocol-level simulator built from the
// agent's own client code (enroll, AgentApi, Spool, Uploader), in this one process, against the
// registry in a child process (`probeyard serve` with DATABASE_URL). Each simulated agent enrols,
// reports its kernel profile, polls with its ETag every 10 s (±10% jitter), and every 10 s spools
// a map snapshot and counters of its target (real payloads: switchcomm over sched-small.dat in
// packages/runtime) and uploads them. At the end every spool is drained and the registry's rows are
// counted: outputs ingested without loss (each target's sequences 0..n-1, as many as spooled).
// Reports the registry's own upload latency (its request log), the agents' view of it, and polls.
//
//   PROBEYARD_BENCH_AGENTS   simulated agents (default 1000)
//   PROBEYARD_BENCH_SECONDS  measured duration (default 60)
//   PROBEYARD_BENCH_POSTGRES_URL  maintenance database (default postgres://postgres@127.0.0.1:5432/test)
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { readProgramSpec } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { openTraceDatStream } from '@probeyard/formats/node';
import type { AppRouter } from '@probeyard/registry';
import { createTenantOffline } from '@probeyard/registry/server';
import { Dispatcher, encodeCounters, encodeMapSnapshot, loadForProfile } from '@probeyard/runtime';
import { createTRPCClient, httpLink } from '@trpc/client';
import pg from 'pg';
import { jitter } from '../src/backoff.js';
import { AgentApi, type Assignment } from '../src/client.js';
import { enroll } from '../src/enroll.js';
import { isAgentError } from '../src/errors.js';
import { silentLogger } from '../src/log.js';
import { profileTarball, readTraceDatProfile } from '../src/profile/node-profile.js';
import { Spool } from '../src/spool/spool.js';
import { Uploader } from '../src/spool/uploader.js';
import { StateDir } from '../src/state/state-dir.js';
import { cli, cliBin, cpuSecondsOf, machine, percentile, repoRoot, start, waitFor } from './support.js';

const agentCount = Number(process.env.PROBEYARD_BENCH_AGENTS ?? 1000);
const seconds = Number(process.env.PROBEYARD_BENCH_SECONDS ?? 60);
const postgresAdminUrl = process.env.PROBEYARD_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const intervalMs = 10_000;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

async function pool<T>(items: readonly T[], width: number, each: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        await each(items[i]!, i);
      }
    }),
  );
}

/** Real payloads to send: switchcomm's snapshot and counters after a replay of sched-small.dat. */
async function realPayloads() {
  const recording = join(repoRoot, 'examples/recordings/sched-small.dat');
  const spec = await readProgramSpec(new Uint8Array(readFileSync(join(repoRoot, 'examples/c/switchcomm.o'))));
  const stream = openTraceDatStream(recording);
  const out = loadForProfile(spec, await readProfile(recording), { cpuCount: stream.info.cpuCount, environment: { commOf: (pid) => stream.info.comm(pid) } });
  if (!out.ok) throw new Error(`switchcomm: ${out.status}`);
  const d = new Dispatcher();
  const t = d.attach('t', out.loaded);
  await d.run(stream);
  await stream.close();
  return {
    snapshot: (runId: string, seen: number) => encodeMapSnapshot(out.loaded, { runId, traceTimeNs: d.traceTimeNs, eventsSeen: seen, eventsLost: 0 }),
    counters: (runId: string, seen: number) => encodeCounters({ ...t.counters, eventsSeen: seen }, { runId }),
  };
}

interface Sim {
  api: AgentApi;
  spool: Spool;
  uploader: Uploader;
  etag: string | undefined;
  targets: Assignment[];
  runId: string;
  seen: number;
  reported: Set<string>;
}

export async function fleetBench(): Promise<boolean> {
  const admin = new pg.Client({ connectionString: postgresAdminUrl, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (e) {
    console.log(`fleet of ${agentCount} agents: skipped: PostgreSQL at ${postgresAdminUrl.replace(/\/\/[^@]*@/, '//')} does not answer (${(e as Error).message})`);
    return true;
  }
  const dbName = `probeyard_agent_fleet_${process.pid}`;
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const dbUrl = new URL(postgresAdminUrl);
  dbUrl.pathname = `/${dbName}`;
  const databaseUrl = dbUrl.href;
  const tmp = mkdtempSync(join(tmpdir(), 'probeyard-bench-fleet-'));
  const dataDir = join(tmp, 'registry');
  mkdirSync(dataDir);
  const port = await freePort();
  let registry: ReturnType<typeof start> | undefined;
  const uploadMs: number[] = [];
  /** Uploads after the first round (every agent's first poll, status and upload after the deployment). */
  const steadyUploadMs: number[] = [];
  let steadyFrom = Number.POSITIVE_INFINITY;
  const uploadErrors = new Map<string, number>();
  try {
    console.log(`fleet: ${agentCount} simulated agents (the agent's own client, spool and uploader) against one registry on PostgreSQL for ${seconds} s; ${machine()}`);
    const made = await createTenantOffline({ dataDir, databaseUrl, name: 'fleet', ownerEmail: 'fleet@bench.example' });
    registry = start(process.execPath, [cliBin, 'serve', '--port', String(port), '--data', dataDir], { DATABASE_URL: databaseUrl });
    const registryErrors: string[] = [];
    let requestCount = 0;
    registry.lines((line) => {
      if (!line.startsWith('{')) return;
      try {
        const r = JSON.parse(line) as { procedure?: string; durationMs?: number; status?: number; level?: string; time?: string };
        if (r.level === 'error' && registryErrors.length < 5) registryErrors.push(line.slice(0, 600));
        if (r.procedure !== undefined) requestCount++;
        if (r.procedure === 'agent.uploadOutputs' && typeof r.durationMs === 'number') uploadMs.push(r.durationMs);
        if (r.procedure === 'agent.uploadOutputs' && typeof r.durationMs === 'number' && r.time && Date.parse(r.time) > steadyFrom) steadyUploadMs.push(r.durationMs);
      } catch {
        // not a log line
      }
    });
    const url = `http://127.0.0.1:${port}`;
    await waitFor('the registry', async () => ((await fetch(`${url}/readyz`)).ok ? true : undefined));
    const as = ['--registry', url, '--token', made.ownerToken];
    const published = await cli(['publish', join(repoRoot, 'examples/c/switchcomm.o'), '--name', 'switchcomm', '--version', '1.0.0', ...as]);
    if (published.code !== 0) throw new Error(published.err);
    const owner = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/trpc`, headers: () => ({ authorization: `Bearer ${made.ownerToken}` }) })] });
    const recording = join(repoRoot, 'examples/recordings/sched-small.dat');
    const profile = await readTraceDatProfile(recording);
    const tarball = profileTarball(profile).toString('base64');

    const enrolStarted = performance.now();
    let enrolRetries = 0;
    const sims: Sim[] = new Array(agentCount);
    await pool(
      Array.from({ length: agentCount }, (_, i) => i),
      16,
      async (i) => {
        const state = join(tmp, `agent-${i}`);
        // as an operator would: a transient failure of the registry is tried again (with a new token)
        for (let attempt = 1; ; attempt++) {
          const { enrollmentToken } = await owner.agent.createEnrollmentToken.mutate({ labels: { fleet: 'bench' } });
          try {
            await enroll({ registry: url, token: enrollmentToken, state, hostname: `sim-${i}`, feed: recording });
            break;
          } catch (e) {
            if (!isAgentError(e) || !e.retryable || attempt >= 5) throw e;
            enrolRetries++;
            await new Promise((r) => setTimeout(r, 200 * attempt));
          }
        }
        const credential = StateDir.open(state).readCredential()!;
        const api = new AgentApi(url, credential.credential);
        await api.reportProfile({ release: profile.release, machine: profile.machine, tarball });
        // the agent's spool, but for the fsyncs: a thousand of them every 10 s on this one thread
        // would measure the simulator's disk, not the registry (each real agent fsyncs its own)
        const spool = Spool.open(join(state, 'spool'), { log: silentLogger, durable: false });
        const uploader = new Uploader(spool, api, {
          log: silentLogger,
          onError: (e) => uploadErrors.set(e.context.registryCode ?? e.code, (uploadErrors.get(e.context.registryCode ?? e.code) ?? 0) + 1),
        });
        sims[i] = { api, spool, uploader, etag: undefined, targets: [], runId: crypto.randomUUID(), seen: 0, reported: new Set() };
      },
    );
    console.log(`  enrolled ${agentCount} agents (token, enrol, profile) in ${((performance.now() - enrolStarted) / 1000).toFixed(1)} s${enrolRetries ? `; ${enrolRetries} enrolments failed with a 500 and were tried again` : ''}`);
    for (const l of registryErrors) console.log(`  registry error: ${l}`);
    const deployed = await cli(['deploy', 'switchcomm@1.0.0', '--selector', 'fleet=bench', ...as]);
    if (deployed.code !== 0) throw new Error(deployed.err);
    const payloads = await realPayloads();

    const pollMs: number[] = [];
    let pollErrors = 0;
    let appended = 0;
    let stop = false;
    const clientUploadMs: number[] = [];
    const loop = async (s: Sim) => {
      await new Promise((r) => setTimeout(r, Math.random() * intervalMs));
      while (!stop) {
        const t0 = performance.now();
        try {
          const answer = await s.api.poll(s.etag);
          pollMs.push(performance.now() - t0);
          s.etag = answer.etag;
          if (!answer.notModified) s.targets = answer.assignments.filter((a) => a.desiredState === 'running');
          const fresh = s.targets.filter((a) => !s.reported.has(a.targetId));
          if (fresh.length) {
            await s.api.reportStatus(fresh.map((a) => ({ targetId: a.targetId, status: 'running' as const, detail: { code: 'compatible', verdict: 'compatible' as const, runId: s.runId } })));
            for (const a of fresh) s.reported.add(a.targetId);
          }
        } catch (e) {
          pollErrors++;
          if (!isAgentError(e)) throw e;
        }
        s.seen += 434;
        const batches = s.targets.flatMap((a) => [
          { targetId: a.targetId, kind: 'map_snapshot' as const, payload: payloads.snapshot(s.runId, s.seen), eventsSeen: s.seen, eventsLost: 0 },
          { targetId: a.targetId, kind: 'counters' as const, payload: payloads.counters(s.runId, s.seen), eventsSeen: s.seen, eventsLost: 0 },
        ]);
        s.spool.append(batches);
        appended += batches.length;
        const u0 = performance.now();
        try {
          if ((await s.uploader.drain()) > 0) clientUploadMs.push(performance.now() - u0);
        } catch {
          // stays in the spool: the next round (or the final drain) sends it
        }
        await new Promise((r) => setTimeout(r, jitter(intervalMs, 0.1)));
      }
    };
    const measureStarted = performance.now();
    const registryCpu0 = cpuSecondsOf(registry.child.pid!);
    const requests0 = requestCount;
    steadyFrom = Date.now() + intervalMs * 1.5;
    const lag = monitorEventLoopDelay({ resolution: 20 });
    lag.enable();
    const running = sims.map((s) => loop(s));
    await new Promise((r) => setTimeout(r, seconds * 1000));
    stop = true;
    await Promise.all(running);
    const measured = (performance.now() - measureStarted) / 1000;
    lag.disable();
    const registryCpu = cpuSecondsOf(registry.child.pid!) - registryCpu0;
    const requests = requestCount - requests0;
    // whatever is still spooled goes up now
    await pool(sims, 16, async (s) => {
      for (let tries = 0; s.spool.batches > 0 && tries < 20; tries++) await s.uploader.drain().catch(() => new Promise((r) => setTimeout(r, 500)));
    });
    const left = sims.reduce((n, s) => n + s.spool.batches, 0);
    const dropped = sims.reduce((n, s) => n + s.spool.droppedTotal + s.spool.rejectedTotal, 0);

    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const rows = await db.query<{ n: string; targets: string; gaps: string }>(
      `SELECT sum(c)::text AS n, count(*)::text AS targets, count(*) FILTER (WHERE c <> mx + 1)::text AS gaps FROM (SELECT "targetId", count(*) AS c, max(sequence) AS mx FROM "OutputBatch" GROUP BY "targetId") t`,
    );
    await db.end();
    const ingested = Number(rows.rows[0]?.n ?? 0);
    const gaps = Number(rows.rows[0]?.gaps ?? 0);
    const sorted = [...uploadMs].sort((a, b) => a - b);
    const client = [...clientUploadMs].sort((a, b) => a - b);
    const polls = [...pollMs].sort((a, b) => a - b);
    console.log(`  ${measured.toFixed(0)} s: ${pollMs.length} polls (${(pollMs.length / measured).toFixed(1)}/s, p50 ${percentile(polls, 50).toFixed(1)} ms, p99 ${percentile(polls, 99).toFixed(1)} ms, ${pollErrors} failed)`);
    const steady = [...steadyUploadMs].sort((a, b) => a - b);
    console.log(`  uploads: ${sorted.length} requests (${(sorted.length / measured).toFixed(1)}/s); the registry's p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms; after the first round (${steady.length} requests) p50 ${percentile(steady, 50).toFixed(1)} ms, p99 ${percentile(steady, 99).toFixed(1)} ms; as the agents saw them p99 ${percentile(client, 99).toFixed(1)} ms; failed tries ${[...uploadErrors].map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`);
    console.log(`  the registry process used ${registryCpu.toFixed(1)} s of CPU for ${requests} requests (${((registryCpu / Math.max(1, requests)) * 1000).toFixed(1)} ms a request, ${((registryCpu / measured) * 100).toFixed(0)}% of one core) — its share of two cores at load average ${loadavg()[0]!.toFixed(1)}`);
    console.log(`  the simulator's own event loop: delay p99 ${(lag.percentile(99) / 1e6).toFixed(1)} ms, max ${(lag.max / 1e6).toFixed(1)} ms (a stalled simulator shows as latency it did not measure)`);
    const ok = ingested === appended && left === 0 && dropped === 0 && gaps === 0;
    console.log(`  outputs: ${appended} batches spooled, ${ingested} in the registry over ${rows.rows[0]?.targets} targets, ${left} still spooled, ${dropped} dropped, ${gaps} targets with a gap in their sequences: ${ok ? 'ingested without loss' : 'LOSS'}`);
    return ok;
  } finally {
    registry?.child.kill('SIGTERM');
    await registry?.exited;
    const c = new pg.Client({ connectionString: postgresAdminUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await c.end();
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const ok = await fleetBench();
  process.exit(ok ? 0 : 1);
}
