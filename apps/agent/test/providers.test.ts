// Issue 19's "fix the provider" story end to end, with a real registry and an agent replaying a
// recording. A script reads `io:::done` through the tenant's provider io, pinned to major 1; the
// node's kernel is a synthesized one whose block_rq_complete calls its error field `error` (4.20
// and later), while io@1.0.0 only knows `errors` (before 4.20). So: the registry's cell is
// incompatible and the agent refuses the target saying why; then io@1.1.0 adds an implementation
// for `error` and, without the program republished, the cell turns relocated, the agent's next
// poll brings a new answer (the release it resolves to), and the agent starts the target through
// io@1.1.0, says which implementation runs, and uploads the counts of the records it replayed;
// a later release (io@1.2.0) restarts the running target through it, its first run's outputs kept.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseProvider } from '@probeyard/compat';
import { parseEventFormat } from '@probeyard/formats';
import { drawMaps, type MapSnapshotJson } from '@probeyard/runtime';
import { compileScript, providerResolver, targetOfFormats } from '@probeyard/script';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Agent } from '../src/agent.js';
import { enrolled, latest, startAgent, waitFor } from './support/agents.js';
import { blockErrorRecording, completeText, completions, io } from './support/block-io.js';
import { finalSnapshot, onlyCell, providerSeries, shownTargets, targetIn } from './support/deployment-state.js';
import { startTestRegistry, type TestRegistry } from './support/registry.js';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 600_000 });

const script = 'io:::done /args.error != 0/ { @errors[args.error] = count(); @bytes = sum(args.bytes); }';

let reg: TestRegistry;
let tmp: string;
let agent: Agent | undefined;
const logs: string[] = [];
beforeAll(async () => {
  reg = await startTestRegistry();
  tmp = mkdtempSync(join(tmpdir(), 'probeyard-providers-'));
});
afterAll(async () => {
  await agent?.stop('test over');
  await reg?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('fix the provider, end to end', () => {
  it('a target refused through io@1.0.0 starts through io@1.1.0 at the next poll, without republishing, and counts the right records', async () => {
    const api = reg.api();
    // the node: a recording of a kernel with `error`, one record a millisecond on two CPUs
    const recording = join(tmp, 'block-error.dat');
    writeFileSync(recording, blockErrorRecording());

    // the program: compiled (as a user's CLI would) against a kernel with `errors`, through io@1.0.0
    await api.provider.publish.mutate({ text: io('1.0.0', false) });
    const compiled = await compileScript(script, { target: targetOfFormats([parseEventFormat(completeText('errors'), { system: 'block' })]), providers: providerResolver([parseProvider(io('1.0.0', false))]) });
    if (!compiled.ok) throw new Error(compiled.diagnostics.map((d) => d.message).join('; '));
    const pub = await api.program.publish.mutate({ name: 'ioerrors', version: '1.0.0', artifact: Buffer.from(compiled.artifact).toString('base64') });
    expect(pub.version.providerPins).toEqual({ io: 1 });

    const node = await enrolled(reg, 'block-node', { role: 'io' }, recording);
    const d = await reg.cli(['deploy', 'ioerrors@1.0.0', '--selector', 'role=io']);
    expect(d.code, d.err).toBe(0);
    const deploymentId = d.last;
    agent = await startAgent({ state: node.state, feed: { kind: 'file', path: recording, loop: false, pace: 'max' } }, logs);

    // 1. no implementation applies: the cell is incompatible, and the agent refuses the target, saying why
    const before = await waitFor('the cell on the node’s profile', () => onlyCell(reg, 'ioerrors'));
    expect(before.verdict).toBe('incompatible');
    expect(before.reasons.map((r) => r.text)).toEqual(['io:::done: io@1.0.0 cannot implement io:::done here: implementation for errors (before 4.20): block/block_rq_complete has no field errors']);
    const refused = await waitFor('the target refused', () => targetIn(reg, deploymentId, 'refused'));
    expect(refused.statusDetail).toMatchObject({ code: 'incompatible', verdict: 'incompatible', refusal: [{ kind: 'provider-unresolved', text: expect.stringContaining('block/block_rq_complete has no field errors') }] });
    expect(refused.reason).toContain('io@1.0.0 cannot implement io:::done here');
    expect(refused.via).toEqual([]);
    expect(agent.feed.passes).toBe(0); // nothing attached: the replay waits
    expect(await reg.outputs(deploymentId)).toEqual([]);
    expect(await providerSeries(agent)).toEqual([]); // /metrics: it runs through no provider

    // 2. the fix: io@1.1.0 adds an implementation for `error`; the program is not republished
    const fix = await api.provider.publish.mutate({ text: io('1.1.0', true) });
    expect(fix.recomputedTenants).toBe(1);
    const after = await waitFor('the cell recomputed', () => onlyCell(reg, 'ioerrors', (c) => c.verdict !== 'incompatible'));
    expect(after.verdict).toBe('relocated');
    expect((after.programs as { via?: string }[]).map((p) => p.via)).toEqual(['io:::done via io@1.1.0, implementation for error']);

    // 3. the agent's next poll: the target runs through io@1.1.0 and says which implementation
    const running = await waitFor('the target running', () => targetIn(reg, deploymentId, 'running'));
    expect(running.via).toEqual(['io:::done via io@1.1.0, implementation for error']);
    expect(running.statusDetail).toMatchObject({ code: 'relocated', verdict: 'relocated', via: ['io:::done via io@1.1.0, implementation for error'] });
    const text = (await reg.cli(['deployments', 'show', deploymentId])).out;
    expect(text).toContain(`via (provider implementations each agent runs)\n  block-node ${running.id}: io:::done via io@1.1.0, implementation for error\n`);
    // and its /metrics: which provider release and implementation the target runs through
    expect(await providerSeries(agent)).toEqual([
      `probeyard_agent_target_provider_info{target="${running.id}",program="ioerrors",probe="io:::done",provider="io",version="1.1.0",implementation="error"} 1`,
    ]);

    // 4. its outputs: the records with a non-zero error, counted by error, and their bytes
    const failed = completions.filter(([, err]) => err !== 0);
    const snapshot = await waitFor('the final snapshot', () => finalSnapshot(reg, deploymentId, agent!, completions.length));
    const maps = (snapshot.payload as { maps: MapSnapshotJson[] }).maps;
    const byError = new Map<number, number>();
    for (const [, err] of failed) byError.set(err, (byError.get(err) ?? 0) + 1);
    const bytes = failed.reduce((n, [nr]) => n + nr * 512, 0);
    expect(bytes).toBe((8 + 8 + 256 + 8) * 512);
    const drawn = drawMaps(maps);
    expect(drawn).toContain(`@bytes: ${bytes}\n`);
    for (const [err, n] of byError) expect(drawn).toContain(`@errors[${err}]: ${n}\n`);
    expect(maps.find((m) => m.name === 'errors')?.entries).toHaveLength(byError.size);

    // 5. a running target follows the next release too: io@1.2.0 (the same implementations) → a
    // new run through it at the next poll; the first run's outputs are all there, each batch once
    const firstRun = (snapshot.payload as { runId: string }).runId;
    await api.provider.publish.mutate({ text: io('1.2.0', true) });
    const rerun = await waitFor('the target restarted through io@1.2.0', async () => {
      const t = (await shownTargets(reg, deploymentId))[0];
      return t?.status === 'running' && t.via[0]?.includes('io@1.2.0') ? t : undefined;
    });
    expect(rerun.via).toEqual(['io:::done via io@1.2.0, implementation for error']);
    expect((rerun.statusDetail as { runId?: string }).runId).not.toBe(firstRun);
    // /metrics follows it: the io@1.2.0 series, the io@1.1.0 one gone
    expect(await providerSeries(agent)).toEqual([
      `probeyard_agent_target_provider_info{target="${running.id}",program="ioerrors",probe="io:::done",provider="io",version="1.2.0",implementation="error"} 1`,
    ]);
    await waitFor('a snapshot of the new run', async () => [...latest(await reg.outputs(deploymentId), 'map_snapshot').values()].some((r) => (r.payload as { runId: string }).runId !== firstRun));
    const rows = await reg.outputs(deploymentId);
    expect(rows.map((r) => r.sequence)).toEqual(rows.map((_, i) => i));
    const lastOfFirst = rows.filter((r) => r.kind === 'map_snapshot' && (r.payload as { runId: string }).runId === firstRun).at(-1)!;
    expect(drawMaps((lastOfFirst.payload as { maps: MapSnapshotJson[] }).maps)).toBe(drawn);
    expect(agent.spool.droppedTotal + agent.spool.rejectedTotal).toBe(0);
  });
  it('a live session naming a provider probe compiles through the release the registry hands the agent', async () => {
    // after the test above: io@1.2.0 is the newest release, the agent replays the `error` layout
    const api = reg.api();
    const agents = await api.agent.list.query({ q: 'block-node' });
    const { session } = await api.live.start.mutate({ language: 'script', source: 'io:::done { @[args.error] = count(); }', target: { agentId: agents.agents[0]!.id }, durationSeconds: 2 });
    const over = await waitFor('the session over', async () => {
      const s = (await api.live.get.query({ sessionId: session.id })).session;
      return s.state === 'ended' && s.agents[0]!.state !== 'starting' && s.agents[0]!.state !== 'running' ? s : undefined;
    }, 30_000, 100);
    // not `failed` with "no provider 'io' is known here": compiled for the node's kernel through io@1.2.0
    expect(over.agents[0], JSON.stringify(over.agents[0])).toMatchObject({ state: 'ended', verdict: { status: expect.stringMatching(/^(compatible|relocated)$/) } });
    expect(over.agents[0]!.outputs).toBeGreaterThan(0);
  });
});
