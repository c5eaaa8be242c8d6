// Snapshot maps as bpftrace prints them at exit (bpftrace 0.17's text output, byte for byte on the
// kinds it has): maps in name order; `count()`-like maps as `@name[key]: value` sorted by value;
// histograms as `@name[key]: ` then one bar a bucket and a blank line; averages and stats sorted
// by average, then a blank line; an empty map as one blank line.
import type { DisplayHint } from '@probeyard/compat';
import type { JsonValue, MapSnapshotJson, SnapshotEntryJson } from '../payloads.js';
import { formatBuckets, linearBuckets, log2Buckets } from './buckets.js';
import { compareKeys, entryInteger, histogramSeries, integerOf, keyMembers, memberText } from './histogram-data.js';

/** A value as text: integers and strings as they are, structs `{ .a = 1, .b = x }`, arrays `[1, 2]`, bytes as hex. */
export function valueText(v: JsonValue | undefined): string {
  if (v === undefined || v === null) return '';
  if (Array.isArray(v)) return `[${v.map(valueText).join(', ')}]`;
  if (typeof v === 'object') {
    if (typeof v.hex === 'string' && Object.keys(v).length === 1) return v.hex;
    return `{ ${Object.entries(v)
      .map(([k, x]) => `.${k} = ${valueText(x)}`)
      .join(', ')} }`;
  }
  return String(v);
}

const head = (name: string, key: JsonValue[] | undefined) => (key === undefined || key.length === 0 ? `@${name}` : `@${name}[${key.map(memberText).join(', ')}]`);

/** A map holding one value (`max_entries` 1, key 0, as bpftrace keeps `@x`): drawn without a key. */
const isScalar = (map: MapSnapshotJson, key: JsonValue[]) => map.maxEntries === 1 && key.length === 1 && integerOf(key[0]) === 0n;

function drawCounts(map: MapSnapshotJson, value: boolean): string {
  if (map.entries.length === 0) return '\n';
  const rows = map.entries.map((e) => ({ key: keyMembers(e.key), value: entryInteger(e), entry: e }));
  if (rows.some((r) => r.value === undefined)) return drawTable(map);
  rows.sort((a, b) => (a.value! < b.value! ? -1 : a.value! > b.value! ? 1 : compareKeys(a.key, b.key)));
  let out = '';
  for (const r of rows) out += `${(value && rows.length === 1) || isScalar(map, r.key) ? `@${map.name}` : head(map.name, r.key)}: ${r.value}\n`;
  return out;
}

function drawTable(map: MapSnapshotJson): string {
  if (map.entries.length === 0) return '\n';
  const rows = [...map.entries].sort((a, b) => compareKeys(keyMembers(a.key), keyMembers(b.key)));
  let out = '';
  for (const e of rows) {
    const value = e.value !== undefined ? valueText(e.value) : (e.values ?? []).map(valueText).join(' | ');
    out += `${head(map.name, keyMembers(e.key))}: ${value}\n`;
  }
  return out;
}

function drawHistogram(map: MapSnapshotJson, hint: Extract<DisplayHint, { kind: 'log2-histogram' | 'linear-histogram' }>): string {
  if (map.entries.length === 0) return '\n';
  const series = histogramSeries(map);
  if (series === undefined) return drawTable(map);
  let out = '';
  for (const s of series) {
    const buckets = hint.kind === 'log2-histogram' ? log2Buckets(s.counts, hint.bucket) : linearBuckets(s.counts, hint.min, hint.max, hint.step);
    out += `${head(map.name, s.key)}: \n${formatBuckets(buckets)}\n`;
  }
  return out;
}

/** Count and total (and min, max) of an average/stats value; per-CPU values combined. */
function statsOf(e: SnapshotEntryJson): { count: bigint; total: bigint } | undefined {
  const parts = e.value !== undefined ? [e.value] : (e.values ?? []);
  let count = 0n;
  let total = 0n;
  for (const v of parts) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    const c = integerOf(v.count);
    const t = integerOf(v.total);
    if (c === undefined || t === undefined) return undefined;
    count += c;
    total += t;
  }
  return { count, total };
}

function drawStats(map: MapSnapshotJson, stats: boolean): string {
  const rows = map.entries.map((e) => {
    const s = statsOf(e);
    return { key: keyMembers(e.key), s, avg: s === undefined || s.count === 0n ? 0n : s.total / s.count };
  });
  if (rows.some((r) => r.s === undefined)) return drawTable(map);
  rows.sort((a, b) => (a.avg < b.avg ? -1 : a.avg > b.avg ? 1 : compareKeys(a.key, b.key)));
  let out = '';
  for (const r of rows) {
    const text = stats ? `count ${r.s!.count}, average ${r.avg}, total ${r.s!.total}` : String(r.avg);
    out += `${isScalar(map, r.key) ? `@${map.name}` : head(map.name, r.key)}: ${text}\n`;
  }
  return `${out}\n`;
}

/** One map as bpftrace prints it, by its display hint (`hidden` and `events` maps print nothing). */
export function drawMap(map: MapSnapshotJson): string {
  const d = map.display;
  switch (d.kind) {
    case 'counts':
      return drawCounts(map, false);
    case 'value':
      return drawCounts(map, true);
    case 'log2-histogram':
    case 'linear-histogram':
      return drawHistogram(map, d);
    case 'average':
      return drawStats(map, false);
    case 'stats':
      return drawStats(map, true);
    case 'table':
      return drawTable(map);
    case 'events':
    case 'hidden':
      return '';
  }
}

/** Options of {@link drawMaps}. */
export interface DrawMapsOptions {
  /**
   * Events the feed lost while these maps were filled: a `Lost N events` line (bpftrace's) comes
   * first, beside the data it affects.
   */
  eventsLost?: number;
}

/** Maps as bpftrace prints them at exit, in name order; `Lost N events` first when the feed lost any. */
export function drawMaps(maps: readonly MapSnapshotJson[], options: DrawMapsOptions = {}): string {
  let out = options.eventsLost ? `Lost ${options.eventsLost} events\n` : '';
  for (const m of [...maps].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    out += drawMap(m);
    if (m.truncated > 0) out += `@${m.name}: ${m.truncated} more entries not shown (over the snapshot limit)\n`;
  }
  return out;
}
