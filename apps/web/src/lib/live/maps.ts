// A live session's outputs as the dashboard's panels draw them: each agent's newest map snapshot
// (cumulative, docs/OUTPUTS.md) merged into one view per map — counts summed by key, histogram
// slots summed into bpftrace's `[lo, hi)` buckets — in the shape of `output.latest`'s maps, so the
// deployment dashboard's MapPanel draws them. The same merge the registry's output store does for
// deployments, here over the payloads `live.outputs` streams to the browser.
import type { DisplayHint } from '@probeyard/compat';
import { entryInteger, histogramSeries, type JsonValue, keyText, linearBucket, log2Bucket, type MapSnapshotJson } from '@probeyard/runtime';

export interface LiveMapView {
  name: string;
  type: string;
  display: DisplayHint;
  entries: { key: string; value: number | null; raw?: JsonValue }[];
  moreEntries: number;
  histograms: { key: string; buckets: { label: string; count: number }[] }[];
  truncated: number;
  targets: number;
}

function slotLabel(display: DisplayHint, slot: number): string {
  if (display.kind === 'log2-histogram') return log2Bucket(slot, display.bucket).label;
  if (display.kind === 'linear-histogram') return linearBucket(slot, display.min, display.max, display.step).label;
  return String(slot);
}

const histogramKinds = new Set(['log2-histogram', 'linear-histogram']);

/** Merges each agent's newest snapshot maps into one view per map name, largest entries first. */
export function mergeLiveMaps(snapshots: readonly { maps: readonly MapSnapshotJson[] }[], maxEntries = 50): LiveMapView[] {
  const byName = new Map<string, { map: MapSnapshotJson; entries: Map<string, { value: bigint | undefined; raw: JsonValue }>; hist: Map<string, bigint[]>; histOk: boolean; truncated: number; targets: number }>();
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
      const series = acc.histOk ? histogramSeries(m) : undefined;
      if (series) {
        for (const s of series) {
          const key = s.key.map((k) => keyText(k)).join(', ');
          const sum = acc.hist.get(key) ?? [];
          s.counts.forEach((c, i) => {
            sum[i] = (sum[i] ?? 0n) + c;
          });
          acc.hist.set(key, sum);
        }
        continue;
      }
      acc.histOk = false;
      for (const e of m.entries) {
        const key = keyText(e.key);
        const v = entryInteger(e);
        const had = acc.entries.get(key);
        if (!had) acc.entries.set(key, { value: v, raw: e.value ?? e.values ?? null });
        else if (had.value !== undefined && v !== undefined) had.value += v;
      }
    }
  }
  return [...byName.values()]
    .map((acc) => {
      const entries = [...acc.entries.entries()].sort(([, a], [, b]) => (a.value === undefined || b.value === undefined ? 0 : a.value < b.value ? 1 : a.value > b.value ? -1 : 0));
      const shown = entries.slice(0, maxEntries);
      const histograms = acc.histOk
        ? [...acc.hist.entries()].map(([key, counts]) => {
            const first = Math.max(0, counts.findIndex((c) => (c ?? 0n) !== 0n));
            let last = counts.length - 1;
            while (last >= 0 && (counts[last] ?? 0n) === 0n) last--;
            const buckets = [];
            for (let i = first; i <= last; i++) buckets.push({ label: slotLabel(acc.map.display, i), count: Number(counts[i] ?? 0n) });
            return { key, buckets };
          })
        : [];
      return {
        name: acc.map.name,
        type: acc.map.type,
        display: acc.map.display,
        entries: shown.map(([key, e]) => (e.value === undefined ? { key, value: null, raw: e.raw } : { key, value: Number(e.value) })),
        moreEntries: Math.max(0, entries.length - shown.length),
        histograms,
        truncated: acc.truncated,
        targets: acc.targets,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}
