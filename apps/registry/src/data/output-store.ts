// The output store: every read and write of agents' output batches (docs/OUTPUTS.md) goes through
// this module — ingest, the raw pages of `deployment.outputs`, the latest snapshots merged across a
// deployment's agents, rates over a time range, the event tail, and the change signal live
// dashboards wait on. PostgreSQL (or PGlite) today; at fleet scale (10,000 agents × 10 programs × a
// snapshot every 10 s) outputs move to a columnar engine, and only this module changes
// (output-views.ts computes from payloads and stays).
import { EventEmitter } from 'node:events';
import { type CountersPayload, type EventsPayload, type MapSnapshotPayload, parseCountersPayload, parseEventsPayload, parseMapSnapshotPayload } from '@probeyard/runtime';
import type { Db } from '../db/open.js';
import { RegistryError } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { agentTargets, getDeployment } from './deployments.js';
import { mergeSnapshots, type SeriesView, type SnapshotPoint, seriesOf, snapshotPoint } from './output-views.js';

export const outputKinds = ['map_snapshot', 'events', 'counters'] as const;
export type OutputKind = (typeof outputKinds)[number];

export interface OutputBatchInput {
  targetId: string;
  sequence: number;
  kind: OutputKind;
  payload: Prisma.InputJsonValue;
  eventsSeen: number;
  eventsLost: number;
}

/** JSON with object keys sorted, so that stored (jsonb) and sent payloads compare by content. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

function sameContent(a: { kind: string; payload: unknown; eventsSeen: number; eventsLost: number }, b: OutputBatchInput): boolean {
  return a.kind === b.kind && a.eventsSeen === b.eventsSeen && a.eventsLost === b.eventsLost && canonicalJson(a.payload) === canonicalJson(b.payload);
}

/** Test hook for the crash-safety test: milliseconds to wait inside the ingest transaction. */
const ingestPauseMs = Number(process.env.PROBEYARD_FAULT_INGEST_PAUSE_MS ?? 0);

/**
 * Appends an agent's output batches in one transaction. A batch is keyed by (target, sequence): a
 * retried batch with the same content is a no-op, different content is `conflict` and nothing of
 * the request is stored.
 */
export async function ingestOutputs(db: Db, tenantId: string, agentId: string, batches: OutputBatchInput[]) {
  const r = await ingestInTransaction(db, tenantId, agentId, batches);
  if (r.accepted > 0) for (const d of r.deploymentIds) outputChanges.emit(d, { tenantId });
  return { accepted: r.accepted, duplicates: r.duplicates };
}

async function ingestInTransaction(db: Db, tenantId: string, agentId: string, batches: OutputBatchInput[]) {
  const keys = new Set<string>();
  for (const b of batches) {
    const key = `${b.targetId}#${b.sequence}`;
    if (keys.has(key)) throw new RegistryError('bad_request', `upload outputs: batch ${b.sequence} of target ${b.targetId} appears twice in one request`);
    keys.add(key);
  }
  return db.$transaction(
    async (tx) => {
      const targets = await agentTargets(tx, tenantId, agentId, [...new Set(batches.map((b) => b.targetId))]);
      const inserted = await tx.outputBatch.createMany({
        data: batches.map((b) => ({ tenantId, targetId: b.targetId, sequence: b.sequence, kind: b.kind, payload: b.payload, eventsSeen: b.eventsSeen, eventsLost: b.eventsLost })),
        skipDuplicates: true,
      });
      if (ingestPauseMs > 0) {
        process.stderr.write(`fault: output ingest paused inside its transaction for ${ingestPauseMs} ms\n`);
        await new Promise((r) => setTimeout(r, ingestPauseMs));
      }
      if (inserted.count !== batches.length) {
        // Some were there already: each must be the same batch again.
        const stored = await tx.outputBatch.findMany({
          where: { tenantId, OR: batches.map((b) => ({ targetId: b.targetId, sequence: b.sequence })) },
          select: { targetId: true, sequence: true, kind: true, payload: true, eventsSeen: true, eventsLost: true },
        });
        const byKey = new Map(stored.map((s) => [`${s.targetId}#${s.sequence}`, s]));
        for (const b of batches) {
          const s = byKey.get(`${b.targetId}#${b.sequence}`);
          if (s && !sameContent(s, b)) {
            throw new RegistryError('conflict', `upload outputs: batch ${b.sequence} of target ${b.targetId} was already received with different content`, {
              targetId: b.targetId,
              sequence: b.sequence,
            });
          }
        }
      }
      return { accepted: inserted.count, duplicates: batches.length - inserted.count, deploymentIds: [...new Set([...targets.values()].map((t) => t.deploymentId))] };
    },
    // A loaded server may wait a while for a pooled connection (Prisma's default is 2 s).
    { timeout: 60_000, maxWait: 30_000 },
  );
}

export const outputSelect = {
  id: true,
  targetId: true,
  sequence: true,
  kind: true,
  payload: true,
  eventsSeen: true,
  eventsLost: true,
  receivedAt: true,
} as const satisfies Prisma.OutputBatchSelect;

/** A deployment's output batches by (sequence, target), after the cursor. */
export function listOutputs(db: Db, tenantId: string, q: { deploymentId: string; targetId?: string | undefined; after?: { sequence: number; targetId: string } | undefined; limit: number }) {
  const after = q.after ? { OR: [{ sequence: { gt: q.after.sequence } }, { sequence: q.after.sequence, targetId: { gt: q.after.targetId } }] } : {};
  return db.outputBatch.findMany({
    where: { tenantId, target: { deploymentId: q.deploymentId, tenantId }, ...(q.targetId ? { targetId: q.targetId } : {}), ...after },
    orderBy: [{ sequence: 'asc' }, { targetId: 'asc' }],
    take: q.limit,
    select: outputSelect,
  });
}

/** Signals after a commit that added batches to a deployment (event name: the deployment id). */
export const outputChanges = new EventEmitter().setMaxListeners(0);

interface StoredBatch {
  targetId: string;
  sequence: number;
  payload: unknown;
  eventsLost: number;
  receivedAt: Date;
}

/** The newest batch of `kind` of each target of a deployment (or of one target). */
async function latestPerTarget(db: Db, tenantId: string, deploymentId: string, kind: OutputKind, targetId?: string): Promise<StoredBatch[]> {
  const rows = await db.$queryRaw<StoredBatch[]>`
    SELECT DISTINCT ON (b."targetId") b."targetId", b.sequence, b.payload, b."eventsLost", b."receivedAt"
    FROM "OutputBatch" b JOIN "DeploymentTarget" t ON t.id = b."targetId"
    WHERE b."tenantId" = ${tenantId} AND t."tenantId" = ${tenantId} AND t."deploymentId" = ${deploymentId} AND b.kind = ${kind}
      AND (${targetId ?? null}::text IS NULL OR b."targetId" = ${targetId ?? null})
    ORDER BY b."targetId", b.sequence DESC`;
  return rows;
}

function parsed<T>(parse: (v: unknown) => T, v: unknown): T | undefined {
  try {
    return parse(v);
  } catch {
    return undefined;
  }
}

/**
 * The latest state of a deployment's outputs: each target's newest snapshot and counters, and
 * every map merged across targets (counts summed by key, histogram slots summed).
 */
export async function latestOutputs(db: Db, tenantId: string, q: { deploymentId: string; targetId?: string | undefined }) {
  const d = await getDeployment(db, tenantId, q.deploymentId);
  const targets = await db.deploymentTarget.findMany({
    where: { tenantId, deploymentId: d.id, ...(q.targetId ? { id: q.targetId } : {}) },
    orderBy: { id: 'asc' },
    select: { id: true, agentId: true, status: true, reason: true, agent: { select: { hostname: true, lastSeenAt: true } } },
  });
  if (q.targetId && targets.length === 0) throw new RegistryError('not_found', `deployment target not found: ${q.targetId}`, { what: 'deployment target', id: q.targetId });
  const [snaps, counters] = await Promise.all([latestPerTarget(db, tenantId, d.id, 'map_snapshot', q.targetId), latestPerTarget(db, tenantId, d.id, 'counters', q.targetId)]);
  const snapBy = new Map(snaps.map((s) => [s.targetId, s]));
  const countersBy = new Map(counters.map((c) => [c.targetId, c]));
  let malformed = 0;
  const payloads: MapSnapshotPayload[] = [];
  const perTarget = targets.map((t) => {
    const s = snapBy.get(t.id);
    const p = s ? parsed(parseMapSnapshotPayload, s.payload) : undefined;
    if (s && !p) malformed++;
    if (p) payloads.push(p);
    const c = countersBy.get(t.id);
    const cp: CountersPayload | undefined = c ? parsed(parseCountersPayload, c.payload) : undefined;
    if (c && !cp) malformed++;
    return {
      targetId: t.id,
      agentId: t.agentId,
      hostname: t.agent.hostname,
      status: t.status,
      reason: t.reason,
      agentLastSeenAt: t.agent.lastSeenAt,
      snapshot: s && p ? { sequence: s.sequence, runId: p.runId, takenAt: p.takenAt, traceTimeNs: p.traceTimeNs, eventsSeen: p.eventsSeen, eventsLost: p.eventsLost, receivedAt: s.receivedAt } : null,
      counters: cp ?? null,
    };
  });
  const sum = (f: (c: CountersPayload) => number) => perTarget.reduce((a, t) => a + (t.counters ? f(t.counters) : 0), 0);
  const lastReceivedAt = [...snaps, ...counters].reduce<Date | null>((a, s) => (a === null || s.receivedAt > a ? s.receivedAt : a), null);
  return {
    deployment: d,
    targets: perTarget,
    maps: mergeSnapshots(payloads),
    totals: {
      eventsSeen: perTarget.reduce((a, t) => a + (t.snapshot?.eventsSeen ?? 0), 0),
      eventsLost: perTarget.reduce((a, t) => a + (t.snapshot?.eventsLost ?? 0), 0),
      faults: sum((c) => c.faults),
      outputsDropped: sum((c) => c.outputsDropped),
      kernelReadsFailed: sum((c) => c.kernelReadsFailed),
      cpuNs: sum((c) => c.cpuNs),
      runs: sum((c) => c.runs),
    },
    lastReceivedAt,
    malformed,
  };
}

/** Snapshots read for one series at most (beyond: `truncated`, the range should be narrowed). */
export const maxSeriesSnapshots = 20_000;

/**
 * Points sit at the node's `takenAt`; rows are found by the registry's `receivedAt` (indexed), so
 * the read reaches this far beyond the range for snapshots taken inside it but received late (a
 * spool flushed after an outage) or stamped by a clock ahead of the registry's.
 */
const receiveSlackMs = 5 * 60_000;

/**
 * Rates over [from, to) in `buckets` buckets from the deployment's successive snapshots (per target,
 * run-id resets handled; see output-views.ts). One snapshot per target before `from` is the baseline.
 */
export async function outputSeries(db: Db, tenantId: string, q: { deploymentId: string; targetId?: string | undefined; from: Date; to: Date; buckets: number }): Promise<SeriesView & { truncated: boolean; snapshots: number }> {
  const d = await getDeployment(db, tenantId, q.deploymentId);
  const where = { tenantId, kind: 'map_snapshot', target: { tenantId, deploymentId: d.id }, ...(q.targetId ? { targetId: q.targetId } : {}) } satisfies Prisma.OutputBatchWhereInput;
  const [inRange, baselines] = await Promise.all([
    db.outputBatch.findMany({
      where: { ...where, receivedAt: { gte: new Date(q.from.getTime() - receiveSlackMs), lt: new Date(q.to.getTime() + receiveSlackMs) } },
      orderBy: [{ receivedAt: 'asc' }, { id: 'asc' }],
      take: maxSeriesSnapshots + 1,
      select: { targetId: true, payload: true, receivedAt: true },
    }),
    db.$queryRaw<{ targetId: string; payload: unknown; receivedAt: Date }[]>`
      SELECT DISTINCT ON (b."targetId") b."targetId", b.payload, b."receivedAt"
      FROM "OutputBatch" b JOIN "DeploymentTarget" t ON t.id = b."targetId"
      WHERE b."tenantId" = ${tenantId} AND t."tenantId" = ${tenantId} AND t."deploymentId" = ${d.id} AND b.kind = 'map_snapshot'
        AND b."receivedAt" < ${new Date(q.from.getTime() - receiveSlackMs)} AND (${q.targetId ?? null}::text IS NULL OR b."targetId" = ${q.targetId ?? null})
      ORDER BY b."targetId", b."receivedAt" DESC`,
  ]);
  const truncated = inRange.length > maxSeriesSnapshots;
  const points: SnapshotPoint[] = [];
  for (const r of [...baselines, ...inRange.slice(0, maxSeriesSnapshots)]) {
    const p = parsed(parseMapSnapshotPayload, r.payload);
    if (p) points.push(snapshotPoint(r.targetId, p, r.receivedAt.getTime()));
  }
  return { ...seriesOf(points, q.from.getTime(), q.to.getTime(), q.buckets), truncated, snapshots: inRange.length };
}

/** One output event of the tail, with the target it came from. */
export interface TailEvent {
  targetId: string;
  sequence: number;
  timeNs: string;
  cpu: number;
  source: string;
  map?: string | undefined;
  data?: unknown;
  text?: string | undefined;
}

/**
 * The newest output events of a deployment (or one target), newest batch first, up to `limit`
 * events, optionally only those whose text or data contains `filter`. `before` (a batch cursor)
 * pages back; `dropped` sums what agents reported dropped in the batches read.
 */
export async function eventTail(
  db: Db,
  tenantId: string,
  q: { deploymentId: string; targetId?: string | undefined; before?: { receivedAt: Date; id: string } | undefined; limit: number; filter?: string | undefined },
) {
  const d = await getDeployment(db, tenantId, q.deploymentId);
  const out: TailEvent[] = [];
  let dropped = 0;
  let cursor = q.before;
  let scanned = 0;
  const needle = q.filter?.toLowerCase();
  // Read batches newest first until enough events are found (a bounded scan: 2,000 batches).
  while (out.length < q.limit && scanned < 2000) {
    const rows = await db.outputBatch.findMany({
      where: {
        tenantId,
        kind: 'events',
        target: { tenantId, deploymentId: d.id },
        ...(q.targetId ? { targetId: q.targetId } : {}),
        ...(cursor ? { OR: [{ receivedAt: { lt: cursor.receivedAt } }, { receivedAt: cursor.receivedAt, id: { lt: cursor.id } }] } : {}),
      },
      orderBy: [{ receivedAt: 'desc' }, { id: 'desc' }],
      take: 100,
      select: { id: true, targetId: true, sequence: true, payload: true, receivedAt: true },
    });
    if (rows.length === 0) {
      cursor = undefined;
      break;
    }
    scanned += rows.length;
    for (const r of rows) {
      cursor = { receivedAt: r.receivedAt, id: r.id };
      const p: EventsPayload | undefined = parsed(parseEventsPayload, r.payload);
      if (!p) continue;
      dropped += p.dropped;
      for (let i = p.events.length - 1; i >= 0; i--) {
        const e = p.events[i]!;
        if (needle && !`${e.text ?? ''} ${e.map ?? ''} ${JSON.stringify(e.data ?? null)}`.toLowerCase().includes(needle)) continue;
        out.push({ targetId: r.targetId, sequence: r.sequence, timeNs: e.timeNs, cpu: e.cpu, source: e.source, map: e.map, data: e.data, text: e.text });
      }
      if (out.length >= q.limit) break;
    }
    if (rows.length < 100) {
      if (out.length < q.limit) cursor = undefined;
      break;
    }
  }
  // Whole batches: a page never splits one, so the next page starts exactly after it.
  return { events: out, dropped, nextCursor: cursor ?? null };
}

/** The newest batch time of a deployment: what live dashboards compare to know something arrived (also from other replicas). */
export async function outputWatermark(db: Db, tenantId: string, deploymentId: string): Promise<{ receivedAt: Date | null; batches: number }> {
  const r = await db.outputBatch.aggregate({
    where: { tenantId, target: { tenantId, deploymentId } },
    _max: { receivedAt: true },
    _count: { _all: true },
  });
  return { receivedAt: r._max.receivedAt, batches: r._count._all };
}
