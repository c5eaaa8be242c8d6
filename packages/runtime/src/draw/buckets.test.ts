import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { barWidth, linearBucket, linearLabel, linearSlotCount, log2Bucket, log2Buckets, log2Label } from './buckets.js';

describe('labels', () => {
  it.each([
    [0, '1'],
    [1, '2'],
    [9, '512'],
    [10, '1K'],
    [19, '512K'],
    [20, '1M'],
    [30, '1G'],
    [40, '1T'],
    [52, '4096T'],
    [63, '8388608T'],
  ])('log2Label(%i) = %s', (p, label) => {
    expect(log2Label(p)).toBe(label);
  });

  it.each([
    [0, '0'],
    [10, '10'],
    [1000, '1000'],
    [1024, '1K'],
    [3072, '3K'],
    [1048576, '1M'],
    [-2048, '-2K'],
    [1536, '1536'],
  ])('linearLabel(%i) = %s', (n, label) => {
    expect(linearLabel(n)).toBe(label);
  });
});

describe('buckets', () => {
  it.each([
    [0, 'bpftrace', '(..., 0)', undefined, 0n],
    [1, 'bpftrace', '[0]', 0n, 1n],
    [2, 'bpftrace', '[1]', 1n, 2n],
    [3, 'bpftrace', '[2, 4)', 2n, 4n],
    [11, 'bpftrace', '[512, 1K)', 512n, 1024n],
    [12, 'bpftrace', '[1K, 2K)', 1024n, 2048n],
    [0, 'libbpf-tools', '[0, 2)', 0n, 2n],
    [1, 'libbpf-tools', '[2, 4)', 2n, 4n],
    [10, 'libbpf-tools', '[1K, 2K)', 1024n, 2048n],
  ] as const)('log2 slot %i (%s) is %s', (slot, bucket, label, lo, hi) => {
    expect(log2Bucket(slot, bucket)).toEqual({ label, lo, hi });
  });

  it('linear slots: below min, in range, at or above max', () => {
    expect(linearSlotCount(0, 100, 10)).toBe(12);
    expect(linearBucket(0, 0, 100, 10)).toEqual({ lo: undefined, hi: 0n, label: '(..., 0)' });
    expect(linearBucket(1, 0, 100, 10)).toEqual({ lo: 0n, hi: 10n, label: '[0, 10)' });
    expect(linearBucket(11, 0, 100, 10)).toEqual({ lo: 100n, hi: undefined, label: '[100, ...)' });
  });

  it('draws from the first to the last non-empty slot', () => {
    expect(log2Buckets([0n, 0n, 3n, 0n, 1n, 0n], 'libbpf-tools').map((b) => [b.label, b.count])).toEqual([
      ['[4, 8)', 3n],
      ['[8, 16)', 0n],
      ['[16, 32)', 1n],
    ]);
    expect(log2Buckets([0n, 0n], 'bpftrace')).toEqual([]);
  });

  it('bar widths are single-precision and truncated, never above 52', () => {
    expect(barWidth(1n, 7n)).toBe(7);
    expect(barWidth(3n, 7n)).toBe(22);
    expect(barWidth(1n, 1000n)).toBe(0);
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 1n << 40n }), fc.bigInt({ min: 0n, max: 1n << 40n }), (max, c) => {
        const count = c % (max + 1n);
        const w = barWidth(count, max);
        return w >= 0 && w <= 52 && (count !== max || w === 52);
      }),
      { seed: 14, numRuns: 500 },
    );
  });
});
