// The "fix the provider" story for a compiled program (docs/PROVIDERS-C.md): examples/c/ioprov.o
// reads `io:::done` through the provider io by the arguments record's field names
// (`SEC("provider/io/done")`). Published to a real registry, deployed to an agent replaying a node
// whose block_rq_complete calls its field `error`: refused through io@1.0.0 (which only knows
// `errors`), running through io@1.1.0 at the next poll without republishing, its maps holding the
// replayed records' counts by error and bytes by device.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { entryInteger, keyText, type MapSnapshotJson } from '@probeyard/runtime';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Agent } from '../src/agent.js';
import { enrolled, examplesDir, startAgent, waitFor } from './support/agents.js';
import { blockErrorRecording, completions, io } from './support/block-io.js';
import { finalSnapshot, onlyCell, providerSeries, targetIn } from './support/deployment-state.js';
import { startTestRegistry, type TestRegistry } from './support/registry.js';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 600_000 });

let reg: TestRegistry;
let tmp: string;
let agent: Agent | undefined;
const logs: string[] = [];
beforeAll(async () => {
  reg = await startTestRegistry();
  tmp = mkdtempSync(join(tmpdir(), 'probeyard-providers-c-'));
});
afterAll(async () => {
  await agent?.stop('test over');
  await reg?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** A map's entries as key text → integer value. */
function entries(maps: readonly MapSnapshotJson[], name: string): Map<string, bigint> {
  const m = maps.find((x) => x.name === name);
  return new Map((m?.entries ?? []).map((e) => [keyText(e.key), entryInteger(e) ?? -1n]));
}

describe('a C program through a provider, end to end', () => {
  it('is refused through io@1.0.0 and runs through io@1.1.0 at the next poll, counting the replayed records', async () => {
    const api = reg.api();
    const recording = join(tmp, 'block-error.dat');
    writeFileSync(recording, blockErrorRecording());

    // publishing needs the provider its probe names, in words when it is missing
    const artifact = readFileSync(join(examplesDir, 'c/ioprov.o')).toString('base64');
    await expect(api.program.publish.mutate({ name: 'ioprov', version: '1.0.0', artifact })).rejects.toThrow("publish: program on_done attaches to io:::done, but no provider 'io' is known here");
    await api.provider.publish.mutate({ text: io('1.0.0', false) });
    const pub = await api.program.publish.mutate({ name: 'ioprov', version: '1.0.0', artifact });
    expect(pub.version.providerPins).toEqual({ io: 1 });

    const node = await enrolled(reg, 'block-node', { role: 'io' }, recording);
    const d = await reg.cli(['deploy', 'ioprov@1.0.0', '--selector', 'role=io']);
    expect(d.code, d.err).toBe(0);
    const deploymentId = d.last;
    agent = await startAgent({ state: node.state, feed: { kind: 'file', path: recording, loop: false, pace: 'max' } }, logs);

    const before = await waitFor('the cell on the node’s profile', () => onlyCell(reg, 'ioprov'));
    expect(before.verdict).toBe('incompatible');
    expect(before.reasons.map((r) => r.kind)).toContain('provider-unresolved');
    const refused = await waitFor('the target refused', () => targetIn(reg, deploymentId, 'refused'));
    expect(refused.statusDetail).toMatchObject({ code: 'incompatible', refusal: expect.arrayContaining([expect.objectContaining({ kind: 'provider-unresolved', text: expect.stringContaining('block/block_rq_complete has no field errors') })]) });
    expect(agent.feed.passes).toBe(0);
    expect(await providerSeries(agent)).toEqual([]); // /metrics: it runs through no provider

    // the fix: io@1.1.0 adds an implementation for `error`; the object is not republished
    await api.provider.publish.mutate({ text: io('1.1.0', true) });
    const after = await waitFor('the cell recomputed', () => onlyCell(reg, 'ioprov', (c) => c.verdict !== 'incompatible'));
    // its arguments record differs from the library's io the object was built with (no `sector`): relocated by name
    expect(after.verdict).toBe('relocated');
    expect((after.programs as { via?: string }[]).map((p) => p.via)).toEqual(['io:::done via io@1.1.0, implementation for error']);
    const running = await waitFor('the target running', () => targetIn(reg, deploymentId, 'running'));
    expect(running.via).toEqual(['io:::done via io@1.1.0, implementation for error']);
    expect(await providerSeries(agent)).toEqual([
      `probeyard_agent_target_provider_info{target="${running.id}",program="ioprov",probe="io:::done",provider="io",version="1.1.0",implementation="error"} 1`,
    ]);

    // its maps: every completion counted by error, bytes (nr_sector × 512) by device
    const snapshot = await waitFor('the final snapshot', () => finalSnapshot(reg, deploymentId, agent!, completions.length));
    const maps = (snapshot.payload as { maps: MapSnapshotJson[] }).maps;
    const byError = new Map<string, bigint>();
    for (const [, err] of completions) byError.set(String(err), (byError.get(String(err)) ?? 0n) + 1n);
    expect(entries(maps, 'by_error')).toEqual(byError);
    const dev = String((8 << 20) | 16);
    expect(entries(maps, 'bytes_by_dev')).toEqual(new Map([[dev, BigInt(completions.reduce((n, [nr]) => n + nr * 512, 0))]]));
  });
});
