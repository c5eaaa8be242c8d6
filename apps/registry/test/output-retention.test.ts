// Output retention: outputs older than the cutoff go, tenant by tenant, in chunks; each deployment
// target's newest map snapshot stays (its dashboard after the target stopped); ended live sessions
// go with their outputs; nothing newer than the cutoff, and no running session, is touched. On
// both databases, and through the server's runner.
import { describe, expect, it } from 'vitest';
import { pruneOutputs } from '../src/data/output-retention.js';
import { envOutputRetentionDays, RetentionRunner } from '../src/jobs/retention-runner.js';
import { backends, type Caller, useHarness } from './harness.js';
import { insertVersion } from './support/fleet.js';
import { countersPayload, snapshotPayload } from './support/payloads.js';

const day = 86_400_000;

describe.each(backends)('output retention on %s', (backend) => {
  const { skip, h } = useHarness(backend);

  async function fleet(name: string) {
    const t = await h.tenant(name);
    await insertVersion(h.db.prisma, t.id, 'prog', '1.0.0');
    const { enrollmentToken } = await t.owner.agent.createEnrollmentToken({ labels: { env: 'prod' } });
    const r = await (await h.caller()).agent.enroll({ enrollmentToken, hostname: `${name}-host` });
    const api: Caller = await h.caller(r.credential);
    const d = await t.owner.deployment.create({ name: 'prog', version: '1.0.0', selector: 'env=prod' });
    const { targets } = await t.owner.deployment.get({ id: d.deployment.id });
    return { t, agentId: r.agent.id, api, deploymentId: d.deployment.id, targetId: targets[0]!.id };
  }

  /** Uploads `n` snapshots and a counters batch, then dates every batch of the target `ageDays` back. */
  async function outputs(f: Awaited<ReturnType<typeof fleet>>, first: number, n: number, ageDays: number) {
    const at = new Date(Date.now() - ageDays * day);
    const batches = [];
    for (let i = 0; i < n; i++) {
      batches.push({ targetId: f.targetId, sequence: first + i, kind: 'map_snapshot' as const, payload: snapshotPayload({ runId: 'r', takenAt: at, eventsSeen: first + i, counts: { 1: first + i } }) });
    }
    batches.push({ targetId: f.targetId, sequence: first + n, kind: 'counters' as const, payload: countersPayload('r', at, { eventsSeen: first + n }) });
    await f.api.agent.uploadOutputs({ batches });
    await h.db.prisma.outputBatch.updateMany({ where: { targetId: f.targetId, sequence: { gte: first, lte: first + n } }, data: { receivedAt: at } });
  }

  const sequences = async (targetId: string) => (await h.db.prisma.outputBatch.findMany({ where: { targetId }, orderBy: { sequence: 'asc' }, select: { sequence: true } })).map((b) => b.sequence);

  it.skipIf(skip)("deletes outputs past the cutoff in chunks, keeping each target's newest snapshot and everything newer", async () => {
    const old = await fleet('ret-old');
    await outputs(old, 0, 5, 40); // sequences 0-4 snapshots, 5 counters: all 40 days old
    const mixed = await fleet('ret-mixed');
    await outputs(mixed, 0, 3, 40); // 0-2, 3: old
    await outputs(mixed, 4, 2, 1); // 4-5, 6: new
    const r = await pruneOutputs(h.db.prisma, new Date(Date.now() - 30 * day), { chunkRows: 2 });
    // the old target keeps its newest snapshot (4); the mixed one everything new, nothing old
    expect(await sequences(old.targetId)).toEqual([4]);
    expect(await sequences(mixed.targetId)).toEqual([4, 5, 6]);
    expect(r.outputBatches).toBe(5 + 4);
    // the dashboard of the old target still shows its last numbers
    const latest = await old.t.owner.output.latest({ deploymentId: old.deploymentId });
    expect(latest.maps.find((m) => m.name === 'counts')?.entries).toEqual([{ key: '1', value: 4 }]);
    // a second pass finds nothing more
    expect((await pruneOutputs(h.db.prisma, new Date(Date.now() - 30 * day))).outputBatches).toBe(0);
  });

  it.skipIf(skip)('deletes live sessions that ended before the cutoff, with their outputs, and keeps running or recent ones', async () => {
    const f = await fleet('ret-live');
    const mk = async (endedDaysAgo: number | null) => {
      const s = await h.db.prisma.liveSession.create({
        data: {
          tenantId: f.t.id,
          language: 'script',
          source: 'BEGIN { exit(); }',
          target: { agentId: f.agentId },
          startedById: f.t.ownerId,
          startedByEmail: 'o@x',
          durationSeconds: 60,
          endsAt: new Date(),
          cpuBudgetPercent: 5,
          endedAt: endedDaysAgo === null ? null : new Date(Date.now() - endedDaysAgo * day),
        },
        select: { id: true },
      });
      for (let seq = 0; seq < 5; seq++) {
        await h.db.prisma.liveOutput.create({ data: { tenantId: f.t.id, sessionId: s.id, agentId: f.agentId, seq, kind: 'counters', payload: {} }, select: { id: true } });
      }
      return s.id;
    };
    const gone = await mk(40);
    const recent = await mk(2);
    const running = await mk(null);
    const r = await pruneOutputs(h.db.prisma, new Date(Date.now() - 30 * day), { chunkRows: 2 });
    expect(r).toMatchObject({ liveSessions: 1, liveOutputs: 5 });
    const left = await h.db.prisma.liveSession.findMany({ where: { tenantId: f.t.id }, select: { id: true } });
    expect(left.map((s) => s.id).sort()).toEqual([recent, running].sort());
    expect(await h.db.prisma.liveOutput.count({ where: { sessionId: gone } })).toBe(0);
    expect(await h.db.prisma.liveOutput.count({ where: { sessionId: { in: [recent, running] } } })).toBe(10);
  });

  it.skipIf(skip)('runs in the server: a runner with 0 days keeps everything, one with days prunes', async () => {
    const f = await fleet('ret-runner');
    await outputs(f, 0, 3, 10);
    const logs: Record<string, unknown>[] = [];
    const never = new RetentionRunner(h.db.prisma, (l) => logs.push(l), { days: 0, firstMs: 0 });
    never.start();
    await new Promise((r) => setTimeout(r, 50));
    await never.stop();
    expect(await sequences(f.targetId)).toEqual([0, 1, 2, 3]);
    const weekly = new RetentionRunner(h.db.prisma, (l) => logs.push(l), { days: 7 });
    await weekly.runOnce();
    await weekly.stop();
    expect(await sequences(f.targetId)).toEqual([2]);
    expect(logs).toContainEqual(expect.objectContaining({ msg: 'outputs past retention deleted', outputBatches: 3 }));
  });
});

describe('PROBEYARD_OUTPUT_RETENTION_DAYS', () => {
  it('reads a number of days, 0 for forever, and refuses anything else in words', () => {
    const saved = process.env.PROBEYARD_OUTPUT_RETENTION_DAYS;
    try {
      delete process.env.PROBEYARD_OUTPUT_RETENTION_DAYS;
      expect(envOutputRetentionDays()).toBeUndefined();
      process.env.PROBEYARD_OUTPUT_RETENTION_DAYS = '14';
      expect(envOutputRetentionDays()).toBe(14);
      process.env.PROBEYARD_OUTPUT_RETENTION_DAYS = '0';
      expect(envOutputRetentionDays()).toBe(0);
      process.env.PROBEYARD_OUTPUT_RETENTION_DAYS = 'a month';
      expect(() => envOutputRetentionDays()).toThrow("PROBEYARD_OUTPUT_RETENTION_DAYS: a number of days (0 keeps outputs forever), not a month");
    } finally {
      if (saved === undefined) delete process.env.PROBEYARD_OUTPUT_RETENTION_DAYS;
      else process.env.PROBEYARD_OUTPUT_RETENTION_DAYS = saved;
    }
  });
});
