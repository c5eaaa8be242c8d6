// Proof 2, relocation end to end: three agents on one machine, each a node of another kernel.
// One replays sched-small.dat (Linux 6.18); one replays the same records re-laid out as Android
// 3.10.49 (32-bit) would have recorded them (formats's relayoutTraceDat, with that kernel's
// header_page and sched formats from library/kernels); the third replays them re-laid out for a
// kernel whose sched_switch lacks next_comm (3.10.49's format with that field taken out: a
// synthetic kernel, the field switchcomm reads). The registry's matrix says compatible or
// relocated for the first two and incompatible naming next_comm for the third; the first two run
// and their outputs are equal; the third reports `refused` with the field and runs nothing.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { relayoutTraceDat } from '@probeyard/formats';
import type { MapSnapshotJson } from '@probeyard/runtime';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Agent } from '../src/agent.js';
import { enrolled, examplesDir, latest, repoRoot, smallRecording, startAgent, waitFor } from './support/agents.js';
import { startTestRegistry, type TestRegistry } from './support/registry.js';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 600_000 });

const android = join(repoRoot, 'library/kernels/android-3.10.49/events');
const read = (p: string) => readFileSync(join(android, p), 'utf8');

let reg: TestRegistry;
let tmp: string;
const agents: Agent[] = [];
beforeAll(async () => {
  reg = await startTestRegistry();
  tmp = mkdtempSync(join(tmpdir(), 'probeyard-relocation-'));
});
afterAll(async () => {
  for (const a of agents) await a.stop('test over');
  await reg?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

type Target = { agentId: string; status: string; reason: string | null; statusDetail: Record<string, unknown> | null };

describe('relocation end to end', () => {
  it('runs one program on a 6.18 node and a 3.10.49 node with equal outputs, and refuses it where next_comm is missing', async () => {
    const source = new Uint8Array(readFileSync(smallRecording));
    const switch31049 = read('sched/sched_switch/format');
    const withoutNextComm = switch31049.replace(/^\tfield:char next_comm\[16\];.*\n/m, '');
    expect(withoutNextComm).not.toContain('next_comm;');
    const recordings = {
      'linux-6.18': smallRecording,
      'android-3.10.49': join(tmp, 'android-3.10.49.dat'),
      'no-next-comm': join(tmp, 'no-next-comm.dat'),
    };
    writeFileSync(recordings['android-3.10.49'], relayoutTraceDat(source, { headerPage: read('header_page'), formats: [{ system: 'sched', text: switch31049 }, { system: 'sched', text: read('sched/sched_wakeup/format') }] }));
    writeFileSync(recordings['no-next-comm'], relayoutTraceDat(source, { headerPage: read('header_page'), formats: [{ system: 'sched', text: withoutNextComm }] }));

    expect((await reg.cli(['publish', join(examplesDir, 'c/switchcomm.o'), '--name', 'switchcomm', '--version', '1.0.0'])).code).toBe(0);
    const nodes = new Map<string, { state: string; agentId: string }>();
    for (const [name, file] of Object.entries(recordings)) nodes.set(name, await enrolled(reg, name, { role: 'reloc' }, file));
    const d = await reg.cli(['deploy', 'switchcomm@1.0.0', '--selector', 'role=reloc']);
    expect(d.out).toContain('to 3 agents matching role=reloc');
    const deploymentId = d.last;
    for (const [name, file] of Object.entries(recordings)) agents.push(await startAgent({ state: nodes.get(name)!.state, feed: { kind: 'file', path: file, loop: false, pace: 'max' } }));

    // the registry's matrix, from the profiles the agents reported
    const listed = await waitFor('three profiles reported', async () => {
      const all = JSON.parse((await reg.cli(['agents', 'list', '--json'])).out) as { id: string; kernelProfileId: string | null }[];
      return all.every((a) => a.kernelProfileId) && all.length === 3 ? all : undefined;
    });
    const profileOf = (name: string) => listed.find((a) => a.id === nodes.get(name)!.agentId)!.kernelProfileId!;
    const matrix = await waitFor('the matrix computed', async () => {
      const m = JSON.parse((await reg.cli(['compat', 'switchcomm', '--json'])).out) as { cells: { profileId: string; verdict: string; reasons: { kind: string; field?: string }[] }[] };
      return m.cells.length === 3 ? m : undefined;
    });
    const cellOf = (name: string) => matrix.cells.find((c) => c.profileId === profileOf(name))!;
    expect(['compatible', 'relocated']).toContain(cellOf('linux-6.18').verdict);
    expect(cellOf('android-3.10.49').verdict).toBe('relocated');
    expect(cellOf('no-next-comm').verdict).toBe('incompatible');
    expect(cellOf('no-next-comm').reasons).toContainEqual(expect.objectContaining({ field: 'next_comm' }));

    // each node decides for itself, and agrees
    const targets = await waitFor('three statuses', async () => {
      const t = (JSON.parse((await reg.cli(['deployments', 'show', deploymentId, '--json'])).out) as { targets: Target[] }).targets;
      return t.every((x) => x.status !== 'pending') ? t : undefined;
    });
    const targetOf = (name: string) => targets.find((t) => t.agentId === nodes.get(name)!.agentId)!;
    expect(targetOf('linux-6.18')).toMatchObject({ status: 'running', statusDetail: { verdict: cellOf('linux-6.18').verdict } });
    expect(targetOf('android-3.10.49')).toMatchObject({ status: 'running', statusDetail: { code: 'relocated', verdict: 'relocated', moves: expect.arrayContaining([expect.stringContaining('next_comm')]) } });
    const refused = targetOf('no-next-comm');
    expect(refused).toMatchObject({ status: 'refused', statusDetail: { code: 'incompatible', refusal: expect.arrayContaining([expect.objectContaining({ event: 'sched/sched_switch', field: 'next_comm' })]) } });
    expect(refused.reason).toContain('next_comm');

    // the two that run give the same maps; the refused one runs nothing
    const outputs = await reg.outputs(deploymentId);
    const finals = await waitFor('both replays over, their last snapshots in', async () => {
      const rows = await reg.outputs(deploymentId);
      const snaps = latest(rows, 'map_snapshot');
      const [a, b] = [snaps.get(targetIdOf(rows, targets, nodes.get('linux-6.18')!.agentId)), snaps.get(targetIdOf(rows, targets, nodes.get('android-3.10.49')!.agentId))];
      return a && b && agents[0]!.feed.passes === 1 && agents[1]!.feed.passes === 1 && a.eventsSeen === agents[0]!.targets.all()[0]!.counters.eventsSeen && b.eventsSeen === agents[1]!.targets.all()[0]!.counters.eventsSeen ? [a, b] : undefined;
    });
    const [a, b] = finals.map((s) => s.payload as { maps: MapSnapshotJson[] });
    expect(finals[0]!.eventsSeen).toBeGreaterThan(0);
    expect(finals[1]!.eventsSeen).toBe(finals[0]!.eventsSeen);
    expect(b!.maps).toEqual(a!.maps);
    expect(outputs.filter((r) => r.targetId === agents[2]!.targets.all()[0]!.id)).toEqual([]);
    expect(agents[2]!.feed.records).toBe(0);
    expect(agents[2]!.dispatcher.attached()).toEqual([]);
  });
});

/** The id of the target of `agentId` (from the agents' own view). */
function targetIdOf(_rows: unknown, targets: Target[], agentId: string): string {
  const t = targets.find((x) => x.agentId === agentId) as (Target & { id?: string }) | undefined;
  return t?.id ?? '';
}
