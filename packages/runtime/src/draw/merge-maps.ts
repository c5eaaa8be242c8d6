// The latest map snapshots of many runs merged into one view per map, as dashboards draw them:
// counters summed by key, histogram slots summed into bpftrace's `[lo, hi)` buckets. Used by the
// registry's output store (a deployment's targets) and by the web's live sessions (each agent's
// newest snapshot), so both show the same numbers. Pure; browser-safe.
import type { DisplayHint } from '@probeyard/compat';
import type { JsonValue, MapSnapshotJson } from '../payloads.js';
import { linearBucket, log2Bucket } from './buckets.js';
import { entryInteger, histogramSeries, keyText } from './histogram-data.js';

/** The display kinds whose maps are histograms (slots summed, drawn as buckets). */
export const histogramKinds: ReadonlySet<string> = new Set(['log2-histogram', 'linear-histogram']);

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

const num = (b: bigint) => Number(b);

/** Merges the latest snapshot of each target (or agent) into one view per map name, largest entries first. */
export function mergeSnapshots(snapshots: readonly { readonly maps: readonly MapSnapshotJson[] }[], opts: { maxEntries?: number } = {}): MergedMapView[] {
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

