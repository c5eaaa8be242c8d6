// Proof 3, chaos: the agent is SIGKILLed mid-replay and started again; then the registry is
// stopped mid-replay while the agent keeps running and spooling, until the agent has lived through
// a long outage (its polls failing again and again with the backoff at its 2 s cap, 10 more
// batches spooled, the recording still being read), and started again. The final outputs equal the uninterrupted run's (`probeyard
// run` of the same program and recording), and every batch is in the registry once: each
// target's sequences run from 0 without a gap, nothing dropped or refused.
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { MapSnapshotJson } from '@probeyard/runtime';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AgentProcess, enrolled, examplesDir, smallRecording, spawnAgent, waitFor } from './support/agents.js';
import { type OutputRow, startTestRegistry, type TestRegistry } from './support/registry.js';

vi.setConfig({ testTimeout: 420_000, hookTimeout: 600_000 });

// sched-small.dat spans ~1 s: at 1/45 of its pace a pass takes ~45 s, far longer than the outage
// (which ends once the agent has lived through it: ~10-15 s; the test checks the pass was not over)
const speed = 1 / 45;
/** Failed polls that make the outage a long one: with a 1 s base and a 2 s cap, the last ones wait at the cap. */
const outageFailures = 6;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

let reg: TestRegistry;
const running: AgentProcess[] = [];
beforeAll(async () => {
  reg = await startTestRegistry();
});
afterAll(async () => {
  for (const a of running) if (a.child.exitCode === null && a.child.signalCode === null) a.child.kill('SIGKILL');
  await reg?.close();
});

const snapshotsOf = (rows: OutputRow[]) => rows.filter((r) => r.kind === 'map_snapshot');
const runIdOf = (r: OutputRow) => (r.payload as { runId: string }).runId;

describe('chaos: a killed agent and a registry outage lose nothing and count nothing twice', () => {
  it('ends with the uninterrupted run’s maps and every batch once', async () => {
    const file = join(examplesDir, 'c/switchcomm.o');
    expect((await reg.cli(['publish', file, '--name', 'switchcomm', '--version', '1.0.0'])).code).toBe(0);
    const node = await enrolled(reg, 'chaos-1', { role: 'chaos' }, smallRecording);
    const d = await reg.cli(['deploy', 'switchcomm@1.0.0', '--selector', 'role=chaos']);
    expect(d.code, d.err).toBe(0);
    const deploymentId = d.last;
    const reference = JSON.parse((await reg.cli(['run', file, '--feed', smallRecording, '--json'], { local: true })).out) as { maps: MapSnapshotJson[]; target: { eventsSeen: number } };

    const port = await freePort();
    const args = ['run', '--state', node.state, '--feed', smallRecording, '--pace', 'recorded', '--speed', String(speed), '--snapshot-interval', '0.5', '--poll-interval', '0.5', '--backoff-max', '2', '--metrics', `127.0.0.1:${port}`];

    // 1. mid-replay, SIGKILL
    const first = spawnAgent(args);
    running.push(first);
    await waitFor('snapshots of the first run', async () => {
      const s = snapshotsOf(await reg.outputs(deploymentId));
      return s.length >= 3 && s.at(-1)!.eventsSeen > 0 && s.at(-1)!.eventsSeen < reference.target.eventsSeen ? true : undefined;
    }, 180_000);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    // 2. started again: a new run of the recording; what was spooled and not uploaded goes up
    const second = spawnAgent(args);
    running.push(second);
    const firstRun = runIdOf(snapshotsOf(await reg.outputs(deploymentId))[0]!);
    await waitFor('snapshots of the second run', async () => {
      const s = snapshotsOf(await reg.outputs(deploymentId)).filter((r) => runIdOf(r) !== firstRun);
      return s.length >= 2 && s.at(-1)!.eventsSeen > 0 ? true : undefined;
    }, 180_000);

    // 3. the registry goes away mid-replay; the agent keeps running and spooling
    const beforeOutage = await reg.outputs(deploymentId);
    await reg.stop();
    const spooled = await waitFor('batches waiting in the spool', async () => {
      const h = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { spool: { batches: number }; feed: { records: number } };
      return h.spool.batches >= 10 ? h : undefined;
    }, 60_000);
    // The outage lasts until the agent has lived through a long one, not for a fixed time (a
    // 25 s sleep stood here, with ~14 s of slack before the replay's end on a quick machine).
    type Health = { spool: { batches: number; dropped: number }; feed: { records: number; passes: number }; parts: Record<string, { failures: number }> };
    const during = await waitFor(`${outageFailures} failed polls and 10 more batches spooled`, async () => {
      const h = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as Health;
      return h.parts.poll!.failures >= outageFailures && h.spool.batches >= spooled.spool.batches + 10 ? h : undefined;
    }, 120_000, 250);
    expect(during.feed.records).toBeGreaterThan(spooled.feed.records); // the programs kept running
    expect(during.feed.passes, 'the recording ended during the outage: it is no longer mid-replay').toBe(0);
    expect(during.spool.batches).toBeGreaterThan(spooled.spool.batches);
    expect(during.parts.poll!.failures).toBeGreaterThanOrEqual(outageFailures);

    // 4. back: everything spooled arrives, and the replay ends with the uninterrupted run's maps
    await reg.start();
    const final = await waitFor('the final snapshot', async () => {
      const s = snapshotsOf(await reg.outputs(deploymentId));
      const last = s.at(-1)!;
      return runIdOf(last) !== firstRun && last.eventsSeen === reference.target.eventsSeen ? last : undefined;
    }, 180_000);
    expect((final.payload as { maps: MapSnapshotJson[] }).maps).toEqual(reference.maps);
    await waitFor("an empty spool", async () => (((await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { spool: { batches: number } }).spool.batches === 0 ? true : undefined), 60_000);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    const rows = await reg.outputs(deploymentId);
    // no batch lost, none twice: sequences 0..n-1, each once
    expect(rows.map((r) => r.sequence)).toEqual(rows.map((_, i) => i));
    expect(rows.length).toBeGreaterThan(beforeOutage.length);
    // two runs: the killed one (a counter reset for dashboards, not a drop) and the complete one
    const runs = [...new Set(snapshotsOf(rows).map(runIdOf))];
    expect(runs).toHaveLength(2);
    const health = second.stderr();
    expect(health).not.toContain('dropped the');
    expect(health).not.toContain('refused batch');
    expect(during.spool.dropped).toBe(0);
  });
});
