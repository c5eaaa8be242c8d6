// Live sessions: how soon an agent runs a session after `live.start`, and stops it after
// `live.stop` (targets: 2 s each, the median). The built agent replays sched-small.dat in a loop
// with its normal poll once a minute, so what reaches it fast is the live long poll; the times are
// the registry's view (the agent's own report of running / stopped), measured from the call.
// These were wall-time assertions of test/live-session.test.ts; the test now asserts what
// happens, and this prints how fast.
//
//   PROBEYARD_BENCH_LIVE_ROUNDS  sessions started and stopped (default 7)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppRouter } from '@probeyard/registry';
import { createTenantOffline, startRegistry } from '@probeyard/registry/server';
import { prepareDataFolder } from '@probeyard/registry/testing';
import { createTRPCClient, httpLink } from '@trpc/client';
import { enroll } from '../src/enroll.js';
import { agentBin, cli, machine, percentile, repoRoot, requireBuilt, start } from './support.js';

const rounds = Number(process.env.PROBEYARD_BENCH_LIVE_ROUNDS ?? 7);
const targetMs = 2000;
const script = 'tracepoint:sched:sched_switch { @ = count(); }';

/** Polls `check` every 20 ms (the resolution of the figures) for up to 2 minutes. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function liveLatencyBench(): Promise<boolean> {
  requireBuilt();
  const recording = join(repoRoot, 'examples/recordings/sched-small.dat');
  const dataDir = await prepareDataFolder('probeyard-bench-live-');
  const tmp = mkdtempSync(join(tmpdir(), 'probeyard-bench-live-'));
  const made = await createTenantOffline({ dataDir, name: 'bench', ownerEmail: 'bench@bench.example' });
  const registry = await startRegistry({ dataDir, port: 0, host: '127.0.0.1', logger: () => {} });
  const api = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${registry.url}/trpc`, headers: { authorization: `Bearer ${made.ownerToken}` } })] });
  const state = join(tmp, 'agent');
  let agent: ReturnType<typeof start> | undefined;
  try {
    const token = (await cli(['agents', 'enroll-token', '--label', 'bench=live', '--registry', registry.url, '--token', made.ownerToken])).last;
    const { agentId } = await enroll({ registry: registry.url, token, state, hostname: 'live-bench', feed: recording });
    agent = start(process.execPath, [agentBin, 'run', '--state', state, '--feed', recording, '--loop', '--pace', 'recorded', '--poll-interval', '60', '--log-level', 'warn']);
    const agentState = async (sessionId: string) => (await api.live.get.query({ sessionId })).session.agents[0]?.state;
    const starts: number[] = [];
    const stops: number[] = [];
    // one session first, not counted: the registry's verifier worker and the agent's compiler warm up
    for (let i = -1; i < rounds; i++) {
      const t0 = performance.now();
      const { session } = await api.live.start.mutate({ language: 'script', source: script, target: { agentId }, durationSeconds: 120 });
      await until('the agent running the session', async () => (await agentState(session.id)) === 'running');
      const t1 = performance.now();
      await api.live.stop.mutate({ sessionId: session.id });
      await until('the agent reporting it stopped', async () => (await agentState(session.id)) === 'stopped');
      const t2 = performance.now();
      if (i >= 0) {
        starts.push(t1 - t0);
        stops.push(t2 - t1);
      }
    }
    const show = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return `median ${percentile(s, 50).toFixed(0)} ms (${s[0]!.toFixed(0)}–${s.at(-1)!.toFixed(0)} ms)`;
    };
    const medianStart = percentile([...starts].sort((a, b) => a - b), 50);
    const medianStop = percentile([...stops].sort((a, b) => a - b), 50);
    const ok = medianStart <= targetMs && medianStop <= targetMs;
    console.log(`live sessions, ${rounds} rounds (the registry's view, polled every 20 ms); ${machine()}`);
    console.log(`  live.start → the agent running it: ${show(starts)}`);
    console.log(`  live.stop → the agent stopped it:  ${show(stops)}`);
    console.log(`live start and stop within ${targetMs / 1000} s (medians): ${ok ? 'met' : 'NOT met'}`);
    return ok;
  } finally {
    if (agent) {
      agent.child.kill('SIGTERM');
      await agent.exited;
    }
    await registry.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const ok = await liveLatencyBench();
  process.exit(ok ? 0 : 1);
}
