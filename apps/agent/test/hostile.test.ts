// Proof 5, hostile inputs: an artifact whose bytes do not match their digest (failed,
// `digest-mismatch`), a program this node's verifier refuses although the registry accepted it
// (refused, with the verifier's reason), and a registry that answers garbage, JSON of the wrong
// shape, 500s or nothing for a while. Each target gets its status with a reason; the agent keeps
// serving its good target throughout, and what it produced while the registry was broken arrives
// once it is not (nothing dropped, nothing twice).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Agent } from '../src/agent.js';
import { enroll } from '../src/enroll.js';
import { examplesDir, latest, smallRecording, startAgent, waitFor } from './support/agents.js';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.js';
import { startTestRegistry, type TestRegistry } from './support/registry.js';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 600_000 });

let reg: TestRegistry;
let proxy: FaultProxy;
let tmp: string;
let agent: Agent | undefined;
beforeAll(async () => {
  reg = await startTestRegistry();
  proxy = await startFaultProxy(() => reg.url);
  tmp = mkdtempSync(join(tmpdir(), 'probeyard-hostile-'));
});
afterAll(async () => {
  await agent?.stop('test over');
  await proxy?.close();
  await reg?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

type Target = { status: string; reason: string | null; statusDetail: Record<string, unknown> | null };
async function targetOf(deploymentId: string): Promise<Target> {
  return (JSON.parse((await reg.cli(['deployments', 'show', deploymentId, '--json'])).out) as { targets: Target[] }).targets[0]!;
}
const settled = (deploymentId: string, status: string) =>
  waitFor(`${status} target`, async () => {
    const t = await targetOf(deploymentId);
    return t.status === status ? t : undefined;
  });

describe('hostile inputs', () => {
  it('refuses or fails each bad target with its reason and keeps serving the good one through a broken registry', async () => {
    const far = join(tmp, 'far.s');
    writeFileSync(far, '.license "GPL"\n.section tracepoint/sched/sched_switch\nfar:\n    r2 = *(u64 *)(r1 + 4000)\n    r0 = 0\n    exit\n');
    for (const [file, name] of [
      [join(examplesDir, 'c/switchcomm.o'), 'good'],
      [far, 'far'],
      [join(examplesDir, 'sched-switch-count.s'), 'tampered'],
    ] as const) {
      const p = await reg.cli(['publish', file, '--name', name, '--version', '1.0.0']);
      expect(p.code, p.err).toBe(0);
    }
    // the stored bytes of one version no longer match its digest
    const db = reg.running!.db.prisma;
    const v = await db.programVersion.findFirstOrThrow({ where: { program: { name: 'tampered' } }, select: { id: true, digest: true } });
    await db.programVersion.update({ where: { id: v.id }, data: { artifact: Buffer.from('.license "GPL"\n; not what was published\n') } });

    const token = (await reg.cli(['agents', 'enroll-token', '--label', 'role=hostile'])).last;
    const state = join(tmp, 'state');
    await enroll({ registry: proxy.url, token, state, hostname: 'hostile-1', feed: smallRecording });
    const ids = new Map<string, string>();
    for (const name of ['good', 'far', 'tampered']) ids.set(name, (await reg.cli(['deploy', `${name}@1.0.0`, '--selector', 'role=hostile'])).last);

    agent = await startAgent({ state, feed: { kind: 'file', path: smallRecording, loop: true, pace: 'recorded' }, speed: 2 });

    const tampered = await settled(ids.get('tampered')!, 'failed');
    expect(tampered.statusDetail).toMatchObject({ code: 'digest-mismatch', digest: v.digest });
    expect(tampered.reason).toMatch(new RegExp(`^artifact of tampered@1\\.0\\.0: sha256 [0-9a-f]{64} of its \\d+ bytes does not match the assignment's digest ${v.digest}$`));
    const refused = await settled(ids.get('far')!, 'refused');
    expect(refused.statusDetail).toMatchObject({ code: 'incompatible', verdict: 'incompatible' });
    const reasons = (refused.statusDetail as { refusal: { kind: string; program: string; insnIndex?: number; text: string }[] }).refusal;
    expect(reasons).toContainEqual(expect.objectContaining({ kind: 'verifier-rejected', program: 'far', insnIndex: 0, text: expect.stringContaining('invalid bpf_context access off=4000 size=8') }));
    expect(refused.reason).toContain('incompatible on this node');
    await settled(ids.get('good')!, 'running');
    expect(agent.targets.get([...agent.targets.all()].find((t) => t.assignment.program.name === 'good')!.id)!.phase).toBe('running');
    expect(await reg.outputs(ids.get('far')!)).toEqual([]);
    expect(await reg.outputs(ids.get('tampered')!)).toEqual([]);

    // a broken registry, in turns: the agent keeps serving its good target all along
    const good = agent.targets.all().find((t) => t.assignment.program.name === 'good')!;
    for (const mode of ['garbage', 'wrong-shape', '500', 'drop'] as const) {
      const seen = good.counters.eventsSeen;
      const failures = agent.metrics.registryErrors;
      const before = (await failures.get()).values.reduce((s, x) => s + x.value, 0);
      proxy.mode = mode;
      await waitFor(`registry errors while it answers ${mode}`, async () => ((await failures.get()).values.reduce((s, x) => s + x.value, 0) >= before + 3 ? true : undefined), 60_000);
      proxy.mode = 'pass';
      expect(good.counters.eventsSeen).toBeGreaterThan(seen);
      expect(good.phase).toBe('running');
    }
    const codes = new Set((await agent.metrics.registryErrors.get()).values.map((x) => x.labels.code));
    for (const c of ['GARBAGE', 'HTTP_500', 'NETWORK']) expect([...codes]).toContain(c);

    // once it answers again, everything produced meanwhile arrives, once
    await waitFor('an empty spool', () => (agent!.spool.batches === 0 ? true : undefined), 60_000);
    const rows = await reg.outputs(ids.get('good')!);
    expect(rows.map((r) => r.sequence)).toEqual(rows.map((_, i) => i));
    expect(agent.spool.rejectedTotal + agent.spool.droppedTotal).toBe(0);
    const last = latest(rows, 'map_snapshot').values().next().value!;
    expect(last.eventsSeen).toBeGreaterThan(0);
    expect(good.phase).toBe('running');
  });
});
