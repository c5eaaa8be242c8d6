// What dashboards draw, computed from stored output payloads (docs/OUTPUTS.md) without touching
// storage: the latest snapshots of many targets merged into one (counters summed by key, histogram
// slots summed), and rates over time from successive cumulative snapshots, where a new `runId` is
// a counter reset (as Prometheus does), not a drop. Pure functions: output-store.ts feeds them.
import type { DisplayHint } from '@probeyard/compat';
import { entryInteger, histogramKinds, histogramSeries, type MapSnapshotJson, type MapSnapshotPayload, slotLabel } from '@probeyard/runtime';

// The merge of many targets' latest snapshots lives in packages/runtime (the web's live sessions
// merge agents' snapshots the same way).
export { type BucketView, type MergedMapView, mergeSnapshots, slotLabel } from '@probeyard/runtime';

/** Slot counts of a histogram map summed over its keys (for heatmaps), or undefined when it is not one. */
export function histogramTotals(map: MapSnapshotJson): bigint[] | undefined {
  const series = histogramSeries(map);
  if (!series) return undefined;
  const out: bigint[] = [];
  for (const s of series) for (let i = 0; i < s.counts.length; i++) out[i] = (out[i] ?? 0n) + s.counts[i]!;
  for (let i = 0; i < out.length; i++) out[i] ??= 0n;
  return out;
}

/** The sum of a map's integer values (what a rate of a `counts` map is computed from). */
export function mapTotal(map: MapSnapshotJson): bigint {
  const slots = histogramKinds.has(map.display.kind) ? histogramTotals(map) : undefined;
  if (slots) return slots.reduce((a, b) => a + b, 0n);
  let s = 0n;
  for (const e of map.entries) s += entryInteger(e) ?? 0n;
  return s;
}

/** One stored snapshot reduced to what series need. */
export interface SnapshotPoint {
  targetId: string;
  runId: string;
  /** ms since the epoch (the node's `takenAt`). */
  at: number;
  eventsSeen: number;
  eventsLost: number;
  maps: Map<string, { display: DisplayHint; total: bigint; slots: bigint[] | undefined }>;
}

export function snapshotPoint(targetId: string, p: MapSnapshotPayload, fallbackAt: number): SnapshotPoint {
  const at = Date.parse(p.takenAt);
  const maps = new Map<string, { display: DisplayHint; total: bigint; slots: bigint[] | undefined }>();
  for (const m of p.maps) {
    if (m.display.kind === 'hidden' || m.display.kind === 'events') continue;
    const slots = histogramKinds.has(m.display.kind) ? histogramTotals(m) : undefined;
    maps.set(m.name, { display: m.display, total: slots ? slots.reduce((a, b) => a + b, 0n) : mapTotal(m), slots });
  }
  return { targetId, runId: p.runId, at: Number.isFinite(at) ? at : fallbackAt, eventsSeen: p.eventsSeen, eventsLost: p.eventsLost, maps };
}

export interface SeriesView {
  from: number;
  stepMs: number;
  /** Bucket start times (ms). */
  times: number[];
  /** Events seen per second in each bucket, summed over targets. */
  eventsPerSecond: number[];
  /** Events lost (ring-buffer overruns) in each bucket. */
  eventsLost: number[];
  maps: {
    name: string;
    display: DisplayHint;
    /** Increase of the map's total per second, per bucket (null: no snapshot in that bucket). */
    ratePerSecond: (number | null)[];
    /** Histogram kinds: per bucket, the increase of each slot (a heatmap), and the slots' labels. */
    heat?: { labels: string[]; counts: number[][] };
  }[];
  /** Counter resets seen (a new run id on a target). */
  resets: number;
}

/**
 * Rates in fixed time buckets from successive cumulative snapshots. Per target, each snapshot's
 * increase over the previous one (a new run id: the snapshot itself is the increase, counters
 * restart at 0) lands in the bucket of its time; buckets sum over targets. Points before `from`
 * only serve as baselines.
 */
export function seriesOf(points: readonly SnapshotPoint[], from: number, to: number, buckets: number): SeriesView {
  const stepMs = Math.max(1000, Math.ceil((to - from) / buckets / 1000) * 1000);
  const n = Math.max(1, Math.ceil((to - from) / stepMs));
  const times = Array.from({ length: n }, (_, i) => from + i * stepMs);
  const seen = new Array<number>(n).fill(0);
  const lost = new Array<number>(n).fill(0);
  const mapAcc = new Map<string, { display: DisplayHint; inc: number[]; has: boolean[]; heat: bigint[][] | undefined; slots: number }>();
  let resets = 0;
  const byTarget = new Map<string, SnapshotPoint[]>();
  for (const p of points) byTarget.set(p.targetId, [...(byTarget.get(p.targetId) ?? []), p]);
  for (const list of byTarget.values()) {
    list.sort((a, b) => a.at - b.at);
    let prev: SnapshotPoint | undefined;
    for (const p of list) {
      const reset = prev !== undefined && prev.runId !== p.runId;
      if (reset) resets++;
      const base = reset ? undefined : prev;
      const i = Math.floor((p.at - from) / stepMs);
      if (prev !== undefined && i >= 0 && i < n) {
        seen[i]! += Math.max(0, p.eventsSeen - (base?.eventsSeen ?? 0));
        lost[i]! += Math.max(0, p.eventsLost - (base?.eventsLost ?? 0));
        for (const [name, m] of p.maps) {
          let acc = mapAcc.get(name);
          if (!acc) {
            acc = { display: m.display, inc: new Array<number>(n).fill(0), has: new Array<boolean>(n).fill(false), heat: m.slots ? Array.from({ length: n }, () => []) : undefined, slots: 0 };
            mapAcc.set(name, acc);
          }
          const before = base?.maps.get(name);
          const d = m.total - (before?.total ?? 0n);
          acc.inc[i]! += Number(d > 0n ? d : 0n);
          acc.has[i] = true;
          if (acc.heat && m.slots) {
            const row = acc.heat[i]!;
            m.slots.forEach((c, s) => {
              const dd = c - (before?.slots?.[s] ?? 0n);
              row[s] = (row[s] ?? 0n) + (dd > 0n ? dd : 0n);
            });
            acc.slots = Math.max(acc.slots, m.slots.length);
          }
        }
      }
      prev = p;
    }
  }
  const perSecond = (x: number) => (x * 1000) / stepMs;
  return {
    from,
    stepMs,
    times,
    eventsPerSecond: seen.map(perSecond),
    eventsLost: lost,
    resets,
    maps: [...mapAcc.entries()]
      .map(([name, acc]) => ({
        name,
        display: acc.display,
        ratePerSecond: acc.inc.map((x, i) => (acc.has[i] ? perSecond(x) : null)),
        ...(acc.heat
          ? {
              heat: {
                labels: Array.from({ length: acc.slots }, (_, s) => slotLabel(acc.display, s)),
                counts: acc.heat.map((row) => Array.from({ length: acc.slots }, (_, s) => Number(row[s] ?? 0n))),
              },
            }
          : {}),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}

