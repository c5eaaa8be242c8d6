// A deployment's `.rodata` options reach the program (issue 21, item 2): libbpf-tools' syscount as
// built in examples/libbpf, deployed twice to one agent replaying its recording — once as is, once
// with `--set filter_failed=true` — counts every syscall in the first and only the failed ones in
// the second, each exactly as `probeyard run` counts over the same recording with the same options
// (whose counts the CLI's libbpf test checks against trace-cmd's).
import { join } from 'node:path';
import type { MapSnapshotJson } from '@probeyard/runtime';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Agent } from '../src/agent.js';
import { enrolled, examplesDir, latest, startAgent, waitFor } from './support/agents.js';
import { startTestRegistry, type TestRegistry } from './support/registry.js';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 600_000 });

const object = join(examplesDir, 'libbpf/syscount.bpf.o');
const recording = join(examplesDir, 'libbpf/recordings/libbpf-tools.dat');

let reg: TestRegistry;
let agent: Agent | undefined;
beforeAll(async () => {
  reg = await startTestRegistry();
});
afterAll(async () => {
  await agent?.stop('test over');
  await reg?.close();
});

type Entry = { key: unknown; value?: { count?: number | string } };
/** syscount's `data` map as syscall id → count. */
const countsOf = (maps: { name: string; entries: Entry[] }[]) =>
  new Map(
    (maps.find((m) => m.name === 'data')?.entries ?? []).map((e) => [Number(Array.isArray(e.key) ? e.key[0] : e.key), Number(e.value?.count)] as const),
  );

describe('deployment options on the agent', () => {
  it('runs a target with its options set: filter_failed=true counts only the failed syscalls', async () => {
    expect((await reg.cli(['publish', object, '--name', 'syscount', '--version', '1.0.0'])).code).toBe(0);
    const node = await enrolled(reg, 'node-1', { node: 'local' }, recording);
    const plain = await reg.cli(['deploy', 'syscount@1.0.0', '--selector', 'node=local']);
    expect(plain.code, plain.err).toBe(0);
    const failedOnly = await reg.cli(['deploy', 'syscount@1.0.0', '--selector', 'node=local', '--set', 'filter_failed=true']);
    expect(failedOnly.code, failedOnly.err).toBe(0);
    expect(failedOnly.out).toContain('with filter_failed=true');
    agent = await startAgent({ state: node.state, feed: { kind: 'file', path: recording, loop: false, pace: 'max' } });
    const a = agent;
    const assigned = await waitFor('both targets assigned', () => (a.targets.all().length === 2 ? a.targets.all() : undefined));
    expect(assigned.map((t) => t.assignment.options)).toEqual(expect.arrayContaining([{}, { filter_failed: 'true' }]));

    const snapshotOf = async (deploymentId: string) =>
      waitFor(`the replay over and the last snapshot of ${deploymentId} in`, async () => {
        const t = a.targets.all().find((x) => x.assignment.deploymentId === deploymentId);
        if (!t || a.feed.passes !== 1) return undefined;
        const snap = latest(await reg.outputs(deploymentId), 'map_snapshot').get(t.id);
        return snap && snap.eventsSeen === t.counters.eventsSeen ? (snap.payload as { maps: MapSnapshotJson[] }) : undefined;
      });
    const all = countsOf((await snapshotOf(plain.last)).maps as never);
    const failed = countsOf((await snapshotOf(failedOnly.last)).maps as never);

    // the same counts as `probeyard run` with the same options over the same recording
    const run = async (extra: string[]) => {
      const r = await reg.cli(['run', object, '--feed', recording, '--json', ...extra], { local: true });
      expect(r.code, r.err).toBe(0);
      return countsOf(JSON.parse(r.out).maps);
    };
    expect(all).toEqual(await run([]));
    expect(failed).toEqual(await run(['--set', 'filter_failed=true']));
    // and the option made a difference: fewer calls, some of them
    const total = (m: Map<number, number>) => [...m.values()].reduce((x, y) => x + y, 0);
    expect(total(failed)).toBeGreaterThan(0);
    expect(total(failed)).toBeLessThan(total(all));

    const shown = JSON.parse((await reg.cli(['deployments', 'show', failedOnly.last, '--json'])).out) as { deployment: { options: unknown }; targets: { status: string }[] };
    expect(shown.deployment.options).toEqual({ filter_failed: 'true' });
    expect(shown.targets.map((t) => t.status)).toEqual(['running']);
  });
});
