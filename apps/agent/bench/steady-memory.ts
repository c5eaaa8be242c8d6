// Steady memory: the agent's RSS with 10 programs running (target ≤ 120 MiB). The ten programs of
// the program library (library/programs) are published and deployed through the CLI to one agent
// (the built binary, as operators run it) replaying library/recordings/procs.dat in a loop at its
// recorded pace (its formats hold every event of its kernel, so all ten load); after a warm-up the
// agent's RSS is sampled every second, beside the same agent running nothing.
//
//   PROBEYARD_BENCH_SECONDS  measured seconds per phase (default 60)
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTenantOffline, startRegistry } from '@probeyard/registry/server';
import { prepareDataFolder } from '@probeyard/registry/testing';
import { enroll } from '../src/enroll.js';
import { agentBin, cli, cpuSecondsOf, machine, mib, repoRoot, requireBuilt, rssOf, start, waitFor } from './support.js';

const seconds = Number(process.env.PROBEYARD_BENCH_SECONDS ?? 60);
const warmupSeconds = 15;
const targetMiB = 120;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/** The node flags of the binary's `#!/usr/bin/env -S node …` line. */
function shebangFlags(): string {
  const first = readFileSync(agentBin, 'utf8').split('\n')[0] ?? '';
  return /^#!.*\bnode\b(.*)$/.exec(first)?.[1]?.trim() ?? '';
}

interface Phase {
  trace: string[];
  programs: number;
  rssMax: number;
  rssMean: number;
  heapUsed: number;
  eventsPerSecond: number;
  cpuPercent: number;
}

async function measure(state: string, recording: string, programs: number): Promise<Phase> {
  const port = await freePort();
  // as the binary runs itself (its shebang's node flags), or as PROBEYARD_BENCH_NODE_FLAGS says
  const nodeFlags = (process.env.PROBEYARD_BENCH_NODE_FLAGS ?? shebangFlags()).split(' ').filter(Boolean);
  const agent = start(process.execPath, [...nodeFlags, agentBin, 'run', '--state', state, '--feed', recording, '--loop', '--pace', 'recorded', '--snapshot-interval', '10', '--poll-interval', '2', '--metrics', `127.0.0.1:${port}`, '--log-level', 'warn']);
  const health = async () => (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { feed: { records: number }; targets: { status: string }[] };
  try {
    await waitFor(`${programs} targets running`, async () => {
      const h = await health();
      return h.targets.filter((t) => t.status === 'running').length === programs && (programs === 0 || h.feed.records > 0) ? true : undefined;
    });
    await new Promise((r) => setTimeout(r, warmupSeconds * 1000));
    const pid = agent.child.pid!;
    const samples: number[] = [];
    const records0 = (await health()).feed.records;
    const cpu0 = cpuSecondsOf(pid);
    const t0 = performance.now();
    for (let i = 0; i < seconds; i++) {
      samples.push(rssOf(pid));
      await new Promise((r) => setTimeout(r, 1000));
    }
    // steady means flat: the RSS every 10 s
    const trace = samples.filter((_, i) => i % 10 === 0).map((b) => (b / 2 ** 20).toFixed(0));
    const elapsed = (performance.now() - t0) / 1000;
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const heapUsed = Number(/^probeyard_agent_nodejs_heap_size_used_bytes (\d+)/m.exec(metrics)?.[1] ?? Number.NaN);
    return {
      trace,
      programs,
      rssMax: Math.max(...samples),
      rssMean: samples.reduce((a, b) => a + b, 0) / samples.length,
      heapUsed,
      eventsPerSecond: ((await health()).feed.records - records0) / elapsed,
      cpuPercent: ((cpuSecondsOf(pid) - cpu0) / elapsed) * 100,
    };
  } finally {
    agent.child.kill('SIGTERM');
    await agent.exited;
  }
}

export async function steadyMemoryBench(): Promise<boolean> {
  requireBuilt();
  const recording = join(repoRoot, 'library/recordings/procs.dat');
  const programsDir = join(repoRoot, 'library/programs');
  const objects = readdirSync(programsDir).filter((f) => f.endsWith('.o')).sort();
  const dataDir = await prepareDataFolder('probeyard-bench-memory-');
  const tmp = mkdtempSync(join(tmpdir(), 'probeyard-bench-memory-'));
  const made = await createTenantOffline({ dataDir, name: 'bench', ownerEmail: 'bench@bench.example' });
  const registry = await startRegistry({ dataDir, port: 0, host: '127.0.0.1', logger: () => {} });
  const as = ['--registry', registry.url, '--token', made.ownerToken];
  try {
    console.log(`steady memory: ${objects.length} library programs over ${recording} (loop, recorded pace), node ${(process.env.PROBEYARD_BENCH_NODE_FLAGS ?? shebangFlags()) || '(no flags)'}; ${machine()}`);
    for (const o of objects) {
      const r = await cli(['publish', join(programsDir, o), '--name', o.replace(/\.o$/, ''), '--version', '1.0.0', ...as]);
      if (r.code !== 0) throw new Error(`publish ${o}: ${r.err}`);
    }
    const idleToken = (await cli(['agents', 'enroll-token', '--label', 'bench=idle', ...as])).last;
    const busyToken = (await cli(['agents', 'enroll-token', '--label', 'bench=busy', ...as])).last;
    const idle = join(tmp, 'idle');
    const busy = join(tmp, 'busy');
    await enroll({ registry: registry.url, token: idleToken, state: idle, feed: recording });
    await enroll({ registry: registry.url, token: busyToken, state: busy, feed: recording });
    for (const o of objects) {
      const r = await cli(['deploy', `${o.replace(/\.o$/, '')}@1.0.0`, '--selector', 'bench=busy', ...as]);
      if (r.code !== 0) throw new Error(`deploy ${o}: ${r.err}`);
    }
    const phases = [await measure(idle, recording, 0), await measure(busy, recording, objects.length)];
    console.log('programs  RSS max     RSS mean    heap used   events/s  agent CPU  RSS every 10 s (MiB)');
    for (const p of phases) {
      console.log(`${String(p.programs).padStart(8)}  ${mib(p.rssMax).padStart(10)}  ${mib(p.rssMean).padStart(10)}  ${mib(p.heapUsed).padStart(10)}  ${Math.round(p.eventsPerSecond).toString().padStart(8)}  ${p.cpuPercent.toFixed(1).padStart(8)}%  ${p.trace.join(' ')}`);
    }
    const busyPhase = phases[1]!;
    const ok = busyPhase.rssMax <= targetMiB * 2 ** 20;
    console.log(`steady memory with ${busyPhase.programs} programs: RSS max ${mib(busyPhase.rssMax)} over ${seconds} s (target ≤ ${targetMiB} MiB): ${ok ? 'met' : 'NOT met'}; ${mib(busyPhase.rssMax - phases[0]!.rssMax)} more than the same agent running nothing`);
    return ok;
  } finally {
    await registry.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const ok = await steadyMemoryBench();
  process.exit(ok ? 0 : 1);
}
