// Proof 1: end to end against a real registry on the embedded database. Programs are published
// and deployed through the CLI, an enrolled agent replays a recording, and the registry's outputs
// for each target equal, map for map, what `probeyard run` prints for the same program and
// recording (the same JSON maps, and the same text once drawn).
import { join } from 'node:path';
import { drawMaps, type MapSnapshotJson } from '@probeyard/runtime';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Agent } from '../src/agent.js';
import { enrolled, examplesDir, latest, smallRecording, startAgent, waitFor } from './support/agents.js';
import { startTestRegistry, type TestRegistry } from './support/registry.js';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 600_000 });

const programs = [
  { name: 'switchcomm', file: join(examplesDir, 'c/switchcomm.o') },
  { name: 'runqlat', file: join(examplesDir, 'c/runqlat.o') },
  { name: 'sched-switch-count', file: join(examplesDir, 'sched-switch-count.s') },
];

let reg: TestRegistry;
let agent: Agent | undefined;
const logs: string[] = [];
beforeAll(async () => {
  reg = await startTestRegistry();
});
afterAll(async () => {
  await agent?.stop('test over');
  await reg?.close();
});

describe('end to end: publish, deploy, run on a replay, read the outputs back', () => {
  it('gives the registry, map for map, what probeyard run prints', async () => {
    const deployments = new Map<string, string>();
    for (const p of programs) {
      const published = await reg.cli(['publish', p.file, '--name', p.name, '--version', '1.0.0']);
      expect(published.code, published.err).toBe(0);
    }
    const node = await enrolled(reg, 'replay-1', { role: 'replay' }, smallRecording);
    for (const p of programs) {
      const d = await reg.cli(['deploy', `${p.name}@1.0.0`, '--selector', 'role=replay']);
      expect(d.code, d.err).toBe(0);
      expect(d.out).toContain('to 1 agent matching role=replay');
      deployments.set(p.name, d.last);
    }

    agent = await startAgent({ state: node.state, feed: { kind: 'file', path: smallRecording, loop: false, pace: 'max' } }, logs);

    for (const p of programs) {
      const expected = await reg.cli(['run', p.file, '--feed', smallRecording, '--json'], { local: true });
      expect(expected.code, expected.err).toBe(0);
      const run = JSON.parse(expected.out) as { maps: MapSnapshotJson[]; target: { eventsSeen: number }; verdict: { status: string } };
      const text = await reg.cli(['run', p.file, '--feed', smallRecording], { local: true });
      const deploymentId = deployments.get(p.name)!;
      // the last snapshot once the replay is over: as many events seen as probeyard run saw
      const snapshot = await waitFor(`${p.name}'s final snapshot`, async () => {
        const s = [...latest(await reg.outputs(deploymentId), 'map_snapshot').values()][0];
        return s && s.eventsSeen === run.target.eventsSeen && agent!.feed.passes === 1 ? s : undefined;
      });
      const payload = snapshot.payload as { v: number; runId: string; maps: MapSnapshotJson[]; eventsSeen: number; eventsLost: number; traceTimeNs: string };
      expect(payload).toMatchObject({ v: 1, eventsSeen: run.target.eventsSeen, eventsLost: 0, runId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      expect(payload.maps).toEqual(run.maps);
      expect(payload.maps.length).toBeGreaterThan(0);
      expect(drawMaps(payload.maps)).toBe(text.out);

      // the target runs, and says why it may: the verdict on this node's own profile
      const shown = JSON.parse((await reg.cli(['deployments', 'show', deploymentId, '--json'])).out) as { targets: { status: string; statusDetail: { code: string; verdict: string; runId: string; digest: string } }[] };
      expect(shown.targets).toHaveLength(1);
      const verdict = run.verdict.status;
      expect(['compatible', 'relocated']).toContain(verdict);
      expect(shown.targets[0]).toMatchObject({ status: 'running', statusDetail: { code: verdict, verdict, runId: payload.runId, digest: expect.stringMatching(/^[0-9a-f]{64}$/) } });

      // counters of the same run beside it
      const counters = [...latest(await reg.outputs(deploymentId), 'counters').values()][0]!;
      expect(counters.payload).toMatchObject({ v: 1, runId: payload.runId, eventsSeen: run.target.eventsSeen, faults: 0, lostEvents: 0 });
      expect((counters.payload as { runs: number }).runs).toBeGreaterThanOrEqual(run.target.eventsSeen);
    }

    // every batch of every target once, in sequence from 0 (nothing lost, nothing twice)
    for (const id of deployments.values()) {
      const rows = await reg.outputs(id);
      expect(rows.map((r) => r.sequence)).toEqual(rows.map((_, i) => i));
    }
    expect(agent.spool.droppedTotal + agent.spool.rejectedTotal).toBe(0);
  });
});
