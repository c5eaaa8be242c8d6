// Limits, so a program can never hurt the node: over its CPU budget a target is throttled and then
// stopped with `cpu-budget`; one faulting past N times a minute is stopped with the fault (its
// instruction and record); maps over the agent's memory budget are refused at load. Each on an
// agent of its own against one real registry; the agent's other targets keep running.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Agent } from '../src/agent.js';
import { enrolled, examplesDir, latest, smallRecording, startAgent, waitFor } from './support/agents.js';
import { startTestRegistry, type TestRegistry } from './support/registry.js';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 600_000 });

let reg: TestRegistry;
let tmp: string;
const agents: Agent[] = [];
const loop = { kind: 'file' as const, path: smallRecording, loop: true, pace: 'max' as const };

type Target = { id: string; status: string; reason: string | null; statusDetail: Record<string, unknown> | null };
async function targetOf(deploymentId: string): Promise<Target> {
  return (JSON.parse((await reg.cli(['deployments', 'show', deploymentId, '--json'])).out) as { targets: Target[] }).targets[0]!;
}
async function deploy(name: string, selector: string): Promise<string> {
  const d = await reg.cli(['deploy', `${name}@1.0.0`, '--selector', selector]);
  if (d.code !== 0) throw new Error(d.err);
  return d.last;
}

beforeAll(async () => {
  reg = await startTestRegistry();
  tmp = mkdtempSync(join(tmpdir(), 'probeyard-limits-'));
  const looper = join(tmp, 'looper.s');
  writeFileSync(
    looper,
    `.license "GPL"
.section tracepoint/sched/sched_switch
spin:
    r0 = 0
again:
    r0 += 1
    if r0 < 1000 goto again
    r0 = 0
    exit
`,
  );
  for (const [file, name] of [
    [join(examplesDir, 'sched-switch-count.s'), 'count'],
    [join(examplesDir, 'c/switchcomm.o'), 'switchcomm'],
    [looper, 'looper'],
  ] as const) {
    const p = await reg.cli(['publish', file, '--name', name, '--version', '1.0.0']);
    if (p.code !== 0) throw new Error(p.err);
  }
});
afterAll(async () => {
  for (const a of agents) await a.stop('test over');
  await reg?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('target limits', () => {
  it('throttles a target over its CPU budget, then stops it with cpu-budget', async () => {
    const node = await enrolled(reg, 'cpu-1', { limit: 'cpu' }, smallRecording);
    const id = await deploy('count', 'limit=cpu');
    const agent = await startAgent({ state: node.state, feed: loop, limits: { cpu: { share: 0.0001, windowMs: 500, maxStrikes: 2, strikeWindowMs: 60_000 } } });
    agents.push(agent);
    const t = await waitFor('cpu-budget', async () => {
      const x = await targetOf(id);
      return x.status === 'failed' ? x : undefined;
    });
    expect(t.statusDetail).toMatchObject({ code: 'cpu-budget', limit: { unit: 'ms', budget: 0, windowSeconds: 0.5 } });
    expect(t.reason).toMatch(/^cpu-budget: stopped: \d+ ms of CPU in 0\.5 s, the budget is 0 ms, hit 3 times$|^cpu-budget: stopped: /);
    // while throttled its events were counted lost to it, and said so: in the counters of a flush
    // (every 250 ms), which can reach the registry after the status report that said "failed"
    const counters = await waitFor('counters with the events lost while throttled', async () => {
      const c = [...latest(await reg.outputs(id), 'counters').values()][0];
      return c && (c.payload as { lostEvents: number }).lostEvents > 0 ? c : undefined;
    });
    expect((counters.payload as { lostEvents: number }).lostEvents).toBeGreaterThan(0);
    expect(agent.targets.get(t.id)!.attached!.detached).toBe(true);
  });

  it('stops a target that faults past N times a minute with its fault, and keeps the others running', async () => {
    const node = await enrolled(reg, 'faults-1', { limit: 'faults' }, smallRecording);
    const looper = await deploy('looper', 'limit=faults');
    const good = await deploy('switchcomm', 'limit=faults');
    const agent = await startAgent({ state: node.state, feed: loop, limits: { instructionBudget: 200, maxFaultsPerMinute: 10 } });
    agents.push(agent);
    const t = await waitFor('fault-rate', async () => {
      const x = await targetOf(looper);
      return x.status === 'failed' ? x : undefined;
    });
    expect(t.statusDetail).toMatchObject({
      code: 'fault-rate',
      limit: { budget: 10, unit: 'faults', windowSeconds: 60 },
      fault: { program: 'spin', message: expect.any(String), record: { eventId: expect.any(Number), cpu: expect.any(Number), hex: expect.stringMatching(/^[0-9a-f]+$/) } },
    });
    expect(t.reason).toMatch(/^fault-rate: \d+ faults in the last minute \(limit 10\); last: spin: insn \d+/);
    const before = [...latest(await reg.outputs(good), 'map_snapshot').values()][0]?.eventsSeen ?? 0;
    await waitFor('the other target still counting', async () => ((await targetOf(good)).status === 'running' && ([...latest(await reg.outputs(good), 'map_snapshot').values()][0]?.eventsSeen ?? 0) > before + 1000 ? true : undefined));
  });

  it("refuses a target whose maps do not fit the agent's memory budget", async () => {
    const node = await enrolled(reg, 'mem-1', { limit: 'memory' }, smallRecording);
    const id = await deploy('switchcomm', 'limit=memory');
    agents.push(await startAgent({ state: node.state, feed: loop, limits: { memoryBudgetBytes: 4096 } }));
    const t = await waitFor('memory-budget', async () => {
      const x = await targetOf(id);
      return x.status === 'refused' ? x : undefined;
    });
    expect(t.statusDetail).toMatchObject({ code: 'memory-budget', limit: { budget: 4096, unit: 'bytes' } });
    expect(t.reason).toMatch(/^memory-budget: its maps need \d+ bytes on 2 CPUs; the agent's budget is 4096 bytes and 0 are in use$/);
    expect(await reg.outputs(id)).toEqual([]);
  });
});
