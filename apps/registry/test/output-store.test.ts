// The output store behind the dashboards: latest snapshots merged across a deployment's agents,
// rates over time with run-id resets, the event tail, the live change signal; tenant-scoped, on
// both databases.
import { describe, expect, it, vi } from 'vitest';
import { backends, type Caller, useHarness } from './harness.js';
import { insertVersion } from './support/fleet.js';
import { countersPayload, eventsPayload, snapshotPayload } from './support/payloads.js';

describe.each(backends)('output store on %s', (backend) => {
  const { skip, h } = useHarness(backend);

  async function fleet(name: string) {
    const t = await h.tenant(name);
    await insertVersion(h.db.prisma, t.id, 'prog', '1.0.0');
    const agents: { id: string; api: Caller }[] = [];
    for (const host of ['a1', 'a2']) {
      const { enrollmentToken } = await t.owner.agent.createEnrollmentToken({ labels: { env: 'prod' } });
      const r = await (await h.caller()).agent.enroll({ enrollmentToken, hostname: host });
      agents.push({ id: r.agent.id, api: await h.caller(r.credential) });
    }
    const d = await t.owner.deployment.create({ name: 'prog', version: '1.0.0', selector: 'env=prod' });
    const { targets } = await t.owner.deployment.get({ id: d.deployment.id });
    const targetOf = (agentId: string) => targets.find((x) => x.agentId === agentId)!.id;
    return { t, agents, deploymentId: d.deployment.id, targetOf };
  }

  describe.skipIf(skip)('output.latest, output.series, output.events, output.watch', () => {
    it('merges the latest snapshot of every agent: counts summed by key, histogram slots summed into [lo, hi) buckets', async () => {
      const { t, agents, deploymentId, targetOf } = await fleet('merge');
      const [a1, a2] = agents as [(typeof agents)[0], (typeof agents)[0]];
      const at = new Date('2026-12-01T21:00:00Z');
      await a1.api.agent.uploadOutputs({
        batches: [
          { targetId: targetOf(a1.id), sequence: 0, kind: 'map_snapshot', payload: snapshotPayload({ runId: 'r1', takenAt: at, eventsSeen: 10, counts: { 1: 5, 2: 1 }, hist: { 3: 4 } }) },
          { targetId: targetOf(a1.id), sequence: 1, kind: 'map_snapshot', payload: snapshotPayload({ runId: 'r1', takenAt: new Date(at.getTime() + 10_000), eventsSeen: 20, counts: { 1: 9, 2: 3 }, hist: { 3: 6, 5: 2 } }), eventsLost: 3 },
          { targetId: targetOf(a1.id), sequence: 2, kind: 'counters', payload: countersPayload('r1', at, { eventsSeen: 20, faults: 1, outputsDropped: 2 }) },
        ],
      });
      await a2.api.agent.uploadOutputs({
        batches: [{ targetId: targetOf(a2.id), sequence: 0, kind: 'map_snapshot', payload: snapshotPayload({ runId: 'x', takenAt: at, eventsSeen: 7, eventsLost: 4, counts: { 2: 10, 7: 1 }, hist: { 3: 1 } }) }],
      });
      const l = await t.owner.output.latest({ deploymentId });
      const counts = l.maps.find((m) => m.name === 'counts')!;
      expect(counts.entries).toEqual([
        { key: '2', value: 13 },
        { key: '1', value: 9 },
        { key: '7', value: 1 },
      ]);
      expect(counts.targets).toBe(2);
      const hist = l.maps.find((m) => m.name === 'lat_us')!;
      expect(hist.histograms).toEqual([
        {
          key: '',
          buckets: [
            { label: '[2, 4)', count: 7 },
            { label: '[4, 8)', count: 0 },
            { label: '[8, 16)', count: 2 },
          ],
        },
      ]);
      expect(l.totals).toMatchObject({ eventsSeen: 27, eventsLost: 4, faults: 1, outputsDropped: 2 });
      expect(l.targets.map((x) => [x.hostname, x.snapshot?.sequence ?? null])).toEqual(expect.arrayContaining([['a1', 1], ['a2', 0]]));
      const one = await t.owner.output.latest({ deploymentId, targetId: targetOf(a2.id) });
      expect(one.maps.find((m) => m.name === 'counts')!.entries).toEqual([
        { key: '2', value: 10 },
        { key: '7', value: 1 },
      ]);
    });

    it('turns successive cumulative snapshots into rates, a new run id being a reset and not a drop', async () => {
      const { t, agents, deploymentId, targetOf } = await fleet('series');
      const a1 = agents[0]!;
      const target = targetOf(a1.id);
      const base = Date.now() - 60_000;
      const snap = (seq: number, runId: string, s: number, total: number, slot3: number) => ({
        targetId: target,
        sequence: seq,
        kind: 'map_snapshot' as const,
        payload: snapshotPayload({ runId, takenAt: new Date(base + s * 1000), eventsSeen: total, counts: { 1: total }, hist: { 3: slot3 } }),
      });
      // run r1: 100, 300, 600; the agent restarts (run r2): 50, 150.
      await a1.api.agent.uploadOutputs({ batches: [snap(0, 'r1', 0, 100, 10), snap(1, 'r1', 10, 300, 30), snap(2, 'r1', 20, 600, 60), snap(3, 'r2', 30, 50, 5), snap(4, 'r2', 40, 150, 15)] });
      const s = await t.owner.output.series({ deploymentId, from: new Date(base).toISOString(), to: new Date(base + 50_000).toISOString(), buckets: 5 });
      expect(s.stepMs).toBe(10_000);
      const counts = s.maps.find((m) => m.name === 'counts')!;
      // Increases per 10 s bucket: (first point is a baseline), +200, +300, reset → +50, +100; per second.
      expect(counts.ratePerSecond).toEqual([null, 20, 30, 5, 10]);
      expect(s.eventsPerSecond).toEqual([0, 20, 30, 5, 10]);
      expect(s.resets).toBe(1);
      const heat = s.maps.find((m) => m.name === 'lat_us')!.heat!;
      expect(heat.labels[3]).toBe('[2, 4)');
      expect(heat.counts.map((row) => row[3])).toEqual([0, 20, 30, 5, 10]);
      await expect(t.owner.output.series({ deploymentId, from: new Date(base).toISOString(), to: new Date(base - 1).toISOString() })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    });

    it('tails output events newest first, filtered, paged, with what agents dropped', async () => {
      const { t, agents, deploymentId, targetOf } = await fleet('events');
      const a1 = agents[0]!;
      const target = targetOf(a1.id);
      await a1.api.agent.uploadOutputs({ batches: [{ targetId: target, sequence: 0, kind: 'events', payload: eventsPayload('r', [{ pid: 1, comm: 'bash' }, { pid: 2, comm: 'sshd' }], 3) }] });
      await a1.api.agent.uploadOutputs({ batches: [{ targetId: target, sequence: 1, kind: 'events', payload: eventsPayload('r', [{ pid: 3, comm: 'bash' }]) }] });
      const all = await t.owner.output.events({ deploymentId });
      expect(all.events.map((e) => (e.data as { pid: number }).pid)).toEqual([3, 2, 1]);
      expect(all.dropped).toBe(3);
      expect(all.nextCursor).toBeNull();
      const bash = await t.owner.output.events({ deploymentId, filter: 'BASH' });
      expect(bash.events.map((e) => (e.data as { pid: number }).pid)).toEqual([3, 1]);
      const page = await t.owner.output.events({ deploymentId, limit: 1 });
      expect(page.events.map((e) => (e.data as { pid: number }).pid)).toEqual([3]);
      const next = await t.owner.output.events({ deploymentId, limit: 5, before: page.nextCursor! });
      expect(next.events.map((e) => (e.data as { pid: number }).pid)).toEqual([2, 1]);
    });

    it('signals live dashboards when batches arrive, coalesced', async () => {
      const { t, agents, deploymentId, targetOf } = await fleet('watch');
      const a1 = agents[0]!;
      const ctx = await h.createContext(t.ownerToken);
      const { createCaller } = await import('../src/router.js');
      const stream = (await createCaller({ ...ctx }).output.watch({ deploymentId })) as AsyncIterable<{ kind: string; batches: number }>;
      const it = stream[Symbol.asyncIterator]();
      expect((await it.next()).value).toMatchObject({ kind: 'update', batches: 0 });
      // Signalled by the ingest itself, not found by the 2-s poll of the watermark: the poll is
      // timed by Date.now(), frozen here (timers stay real), so it never comes due and an update
      // can only be the ingest's signal, however slow the machine (a wall-time bound stood here).
      vi.useFakeTimers({ toFake: ['Date'] });
      try {
        const next = it.next();
        await a1.api.agent.uploadOutputs({ batches: [{ targetId: targetOf(a1.id), sequence: 0, kind: 'counters', payload: countersPayload('r', new Date(), { eventsSeen: 1 }) }] });
        let waited: NodeJS.Timeout | undefined;
        const update = await Promise.race([
          next,
          new Promise<never>((_, reject) => {
            waited = setTimeout(() => reject(new Error('output.watch: no update within 30 s of an ingest (the ingest did not signal it)')), 30_000);
          }),
        ]).finally(() => clearTimeout(waited));
        expect(update.value).toMatchObject({ kind: 'update' });
      } finally {
        vi.useRealTimers();
      }
      await it.return?.();
    });

    it('keeps each tenant to its own: another tenant’s deployment and target are NOT_FOUND', async () => {
      const a = await fleet('out-a');
      const b = await h.tenant('out-b');
      await expect(b.owner.output.latest({ deploymentId: a.deploymentId })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(b.owner.output.series({ deploymentId: a.deploymentId })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(b.owner.output.events({ deploymentId: a.deploymentId })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      const ctx = await h.createContext(b.ownerToken);
      const { createCaller } = await import('../src/router.js');
      // Refused before any stream starts (over HTTP: a 404, not an error inside an accepted stream).
      await expect(createCaller(ctx).output.watch({ deploymentId: a.deploymentId })).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringMatching(/deployment not found/) });
      // A target of A under B's own deployment id is not found either.
      const bDeploy = await insertVersion(h.db.prisma, b.id, 'prog', '1.0.0');
      expect(bDeploy.id).toBeTruthy();
      const d = await b.owner.deployment.create({ name: 'prog', version: '1.0.0', selector: 'env=none' });
      await expect(b.owner.output.latest({ deploymentId: d.deployment.id, targetId: a.targetOf(a.agents[0]!.id) })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });
  });
});
