import { describe, expect, it } from 'vitest';
import { mergeSnapshots } from './merge-maps.js';

const counts = (entries: { key: number; value: number }[]) => ({ name: 'c', type: 'hash', display: { kind: 'counts' as const }, entries, truncated: 0 });

describe('mergeSnapshots', () => {
  it('sums counts by key over targets, largest first, and buckets a log2 histogram as bpftrace', () => {
    const hist = { name: 'h', type: 'hash', display: { kind: 'log2-histogram' as const, bucket: 'bpftrace' as const }, keyType: { kind: 'int', size: 8 }, entries: [{ key: 2, value: 3 }, { key: 4, value: 1 }], truncated: 0 };
    const views = mergeSnapshots([{ maps: [counts([{ key: 1, value: 5 }, { key: 2, value: 1 }]), hist] }, { maps: [counts([{ key: 2, value: 9 }])] }] as never);
    expect(views.map((v) => v.name)).toEqual(['c', 'h']);
    expect(views[0]).toMatchObject({ targets: 2, entries: [{ key: '2', value: 10 }, { key: '1', value: 5 }], histograms: [] });
    expect(views[1]?.histograms[0]?.buckets).toEqual([
      { label: '[1]', count: 3 },
      { label: '[2, 4)', count: 0 },
      { label: '[4, 8)', count: 1 },
    ]);
  });

  it('lists at most maxEntries, counting the rest, and leaves hidden and event maps out', () => {
    const many = counts(Array.from({ length: 7 }, (_, i) => ({ key: i, value: i + 1 })));
    const hidden = { ...counts([{ key: 1, value: 1 }]), name: 'x', display: { kind: 'hidden' as const } };
    const [view, ...rest] = mergeSnapshots([{ maps: [many, hidden] }] as never, { maxEntries: 3 });
    expect(rest).toEqual([]);
    expect(view).toMatchObject({ name: 'c', moreEntries: 4, entries: [{ key: '6', value: 7 }, { key: '5', value: 6 }, { key: '4', value: 5 }] });
  });
});
