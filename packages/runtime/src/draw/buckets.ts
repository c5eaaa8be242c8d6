// Histogram buckets as bpftrace labels them: `[lo, hi)` with power-of-two units (1K, 1M), so the
// CLI's text and the web app's charts say the same thing.
import type { Log2Bucketing } from '@probeyard/compat';

/** One bucket of a histogram: its bounds (undefined for an open end), its bpftrace label and count. */
export interface HistogramBucket {
  /** Lowest value in the bucket (inclusive); undefined for `(..., x)`. */
  lo: bigint | undefined;
  /** First value above the bucket (exclusive); undefined for `[x, ...)`. */
  hi: bigint | undefined;
  label: string;
  count: bigint;
}

/** `2^power` with bpftrace's suffixes (`hist_index_label`): K, M, G, T for powers of 10, 20, 30, 40 and up. */
export function log2Label(power: number): string {
  let suffix = '';
  let p = power;
  if (p >= 40) {
    suffix = 'T';
    p -= 40;
  } else if (p >= 30) {
    suffix = 'G';
    p -= 30;
  } else if (p >= 20) {
    suffix = 'M';
    p -= 20;
  } else if (p >= 10) {
    suffix = 'K';
    p -= 10;
  }
  return `${1n << BigInt(p)}${suffix}`;
}

/** A linear histogram bound as bpftrace labels it (`lhist_index_label`): `1M` or `2K` when a multiple, else the number. */
export function linearLabel(n: bigint | number): string {
  const v = BigInt(n);
  if (v === 0n) return '0';
  if (v % 1048576n === 0n) return `${v / 1048576n}M`;
  if (v % 1024n === 0n) return `${v / 1024n}K`;
  return String(v);
}

/**
 * The bucket of slot `slot` of a log2 histogram:
 * - `bpftrace`: slot 0 `(..., 0)`, slot 1 `[0]`, slot 2 `[1]`, slot k `[2^(k-2), 2^(k-1))`;
 * - `libbpf-tools`: slot 0 `[0, 2)` (0 and 1), slot k `[2^k, 2^(k+1))`.
 */
export function log2Bucket(slot: number, bucket: Log2Bucketing): Omit<HistogramBucket, 'count'> {
  if (bucket === 'bpftrace') {
    if (slot === 0) return { lo: undefined, hi: 0n, label: '(..., 0)' };
    if (slot === 1) return { lo: 0n, hi: 1n, label: '[0]' };
    if (slot === 2) return { lo: 1n, hi: 2n, label: '[1]' };
    return { lo: 1n << BigInt(slot - 2), hi: 1n << BigInt(slot - 1), label: `[${log2Label(slot - 2)}, ${log2Label(slot - 1)})` };
  }
  if (slot === 0) return { lo: 0n, hi: 2n, label: '[0, 2)' };
  return { lo: 1n << BigInt(slot), hi: 1n << BigInt(slot + 1), label: `[${log2Label(slot)}, ${log2Label(slot + 1)})` };
}

/** Slots of a linear histogram `lhist(v, min, max, step)`: one below min, (max-min)/step in range, one at or above max. */
export function linearSlotCount(min: number, max: number, step: number): number {
  return Math.ceil((max - min) / step) + 2;
}

/** The bucket of slot `slot` of `lhist(v, min, max, step)`: 0 `(..., min)`, last `[max, ...)`, else `[lo, lo+step)`. */
export function linearBucket(slot: number, min: number, max: number, step: number): Omit<HistogramBucket, 'count'> {
  const last = linearSlotCount(min, max, step) - 1;
  if (slot <= 0) return { lo: undefined, hi: BigInt(min), label: `(..., ${linearLabel(min)})` };
  if (slot >= last) return { lo: BigInt(max), hi: undefined, label: `[${linearLabel(max)}, ...)` };
  const lo = BigInt(min) + BigInt(slot - 1) * BigInt(step);
  const hi = lo + BigInt(step);
  return { lo, hi, label: `[${linearLabel(lo)}, ${linearLabel(hi)})` };
}

/**
 * The buckets bpftrace prints for slot counts: from the first non-empty slot to the last one
 * (empty buckets between them included); none when every slot is empty.
 */
export function histogramBuckets(counts: readonly bigint[], bucketOf: (slot: number) => Omit<HistogramBucket, 'count'>): HistogramBucket[] {
  let first = -1;
  let last = -1;
  for (let i = 0; i < counts.length; i++) {
    if ((counts[i] ?? 0n) !== 0n) {
      if (first < 0) first = i;
      last = i;
    }
  }
  const out: HistogramBucket[] = [];
  if (first < 0) return out;
  for (let i = first; i <= last; i++) out.push({ ...bucketOf(i), count: counts[i] ?? 0n });
  return out;
}

/** Log2 histogram buckets of slot counts (see {@link log2Bucket}). */
export function log2Buckets(counts: readonly bigint[], bucket: Log2Bucketing): HistogramBucket[] {
  return histogramBuckets(counts, (slot) => log2Bucket(slot, bucket));
}

/** Linear histogram buckets of slot counts (see {@link linearBucket}). */
export function linearBuckets(counts: readonly bigint[], min: number, max: number, step: number): HistogramBucket[] {
  return histogramBuckets(counts, (slot) => linearBucket(slot, min, max, step));
}

/**
 * Width of a bar of `count` against the largest count `max`, in `@`s out of 52: computed in
 * single precision and truncated, exactly as bpftrace does (`value / (float)max * 52`).
 */
export function barWidth(count: bigint, max: bigint, width = 52): number {
  if (max <= 0n || count <= 0n) return 0;
  return Math.trunc(Math.fround(Math.fround(Math.fround(Number(count)) / Math.fround(Number(max))) * width));
}

/** bpftrace's text of histogram buckets: a 16-column label, an 8-column count, and the bar. */
export function formatBuckets(buckets: readonly HistogramBucket[]): string {
  let max = 0n;
  for (const b of buckets) if (b.count > max) max = b.count;
  let out = '';
  for (const b of buckets) out += `${b.label.padEnd(16)}${String(b.count).padStart(8)} |${'@'.repeat(barWidth(b.count, max)).padEnd(52)}|\n`;
  return out;
}
