// What dashboards draw, computed from stored output payloads (docs/OUTPUTS.md) without touching
// storage: the latest snapshots of many targets merged into one (counters summed by key, histogram
// slots summed), and rates over time from successive cumulative snapshots, where a new `runId` is
// a counter reset (as Prometheus does), not a drop. Pure functions: output-store.ts feeds them.
import type { DisplayHint } from '@probeyard/compat';
import {
  entryInteger,
  histogramSeries,
  type JsonValue,
  keyText,
  linearBucket,
  log2Bucket,
  type MapSnapshotJson,
  type MapSnapshotPayload,
} from '@probeyard/runtime';

const histogramKinds = new Set(['log2-histogram', 'linear-histogram']);

export interface BucketView {
  label: string;
  count: number;
}

export interface MergedMapView {
  name: string;
  type: string;
  display: DisplayHint;
  /** `counts` (and value/average/stats/table): entries by key, largest first. */
  entries: { key: string; value: number | null; raw?: JsonValue }[];
  /** Entries beyond the ones listed. */
  moreEntries: number;
  /** Histogram kinds: one histogram per key (`''` for a map holding one), slots as `[lo, hi)` buckets. */
  histograms: { key: string; buckets: BucketView[] }[];
  /** Entries the agents left out of their snapshots (over their per-snapshot limit), summed. */
  truncated: number;
  /** Targets whose snapshot had this map. */
  targets: number;
}

/** The bucket label of slot `slot` under a histogram hint (packages/runtime's bpftrace labels). */
export function slotLabel(display: DisplayHint, slot: number): string {
  if (display.kind === 'log2-histogram') return log2Bucket(slot, display.bucket).label;
  if (display.kind === 'linear-histogram') return linearBucket(slot, display.min, display.max, display.step).label;
  return String(slot);
}

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

const num = (b: bigint) => Number(b);

/** Merges the latest snapshot of each target into one view per map name. */
export function mergeSnapshots(snapshots: readonly MapSnapshotPayload[], opts: { maxEntries?: number } = {}): MergedMapView[] {
  const maxEntries = opts.maxEntries ?? 50;
  const byName = new Map<string, { map: MapSnapshotJson; entries: Map<string, { key: string; value: bigint | undefined; raw: JsonValue }>; hist: Map<string, bigint[]>; histOk: boolean; truncated: number; targets: number }>();
  for (const snap of snapshots) {
    for (const m of snap.maps) {
      if (m.display.kind === 'hidden' || m.display.kind === 'events') continue;
      let acc = byName.get(m.name);
      if (!acc) {
        acc = { map: m, entries: new Map(), hist: new Map(), histOk: histogramKinds.has(m.display.kind), truncated: 0, targets: 0 };
        byName.set(m.name, acc);
      }
      acc.targets++;
      acc.truncated += m.truncated;
      if (acc.histOk) {
        const series = histogramSeries(m);
        if (series) {
          for (const s of series) {
            const key = s.key.map((k) => keyText(k)).join(', ');
            const sum = acc.hist.get(key) ?? [];
            for (let i = 0; i < s.counts.length; i++) sum[i] = (sum[i] ?? 0n) + s.counts[i]!;
            acc.hist.set(key, sum);
          }
          continue;
        }
        acc.histOk = false;
      }
      for (const e of m.entries) {
        const key = keyText(e.key);
        const v = entryInteger(e);
        const had = acc.entries.get(key);
        if (!had) acc.entries.set(key, { key, value: v, raw: e.value ?? e.values ?? null });
        else if (had.value !== undefined && v !== undefined) had.value += v;
      }
    }
  }
  return [...byName.values()]
    .map((acc) => {
      const entries = [...acc.entries.values()].sort((a, b) => (a.value === undefined || b.value === undefined ? 0 : a.value < b.value ? 1 : a.value > b.value ? -1 : 0));
      const shown = entries.slice(0, maxEntries);
      const histograms = acc.histOk
        ? [...acc.hist.entries()].map(([key, counts]) => {
            let first = counts.findIndex((c) => (c ?? 0n) !== 0n);
            let last = counts.length - 1;
            while (last >= 0 && (counts[last] ?? 0n) === 0n) last--;
            if (first < 0) first = 0;
            const buckets: BucketView[] = [];
            for (let i = first; i <= last; i++) buckets.push({ label: slotLabel(acc.map.display, i), count: num(counts[i] ?? 0n) });
            return { key, buckets };
          })
        : [];
      return {
        name: acc.map.name,
        type: acc.map.type,
        display: acc.map.display,
        entries: shown.map((e) => (e.value === undefined ? { key: e.key, value: null, raw: e.raw } : { key: e.key, value: num(e.value) })),
        moreEntries: Math.max(0, entries.length - shown.length),
        histograms,
        truncated: acc.truncated,
        targets: acc.targets,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
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

