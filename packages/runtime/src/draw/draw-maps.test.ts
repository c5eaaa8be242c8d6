import { describe, expect, it } from 'vitest';
import { bpftraceCases } from '../../test/bpftrace-cases.js';
import { BpftraceModel } from '../../test/bpftrace-model.js';
import type { MapSnapshotJson } from '../payloads.js';
import { drawMap, drawMaps, valueText } from './draw-maps.js';

describe('drawMaps: bpftrace 0.17 text, byte for byte', () => {
  it.each(bpftraceCases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const m = new BpftraceModel();
    c.build(m);
    expect(drawMaps(m.snapshot())).toBe(c.printed);
  });
});

const map = (over: Partial<MapSnapshotJson>): MapSnapshotJson => ({ name: 'm', type: 'hash', display: { kind: 'counts' }, entries: [], truncated: 0, ...over });

describe('drawMap layouts', () => {
  it('an empty map is one blank line, as bpftrace prints it', () => {
    expect(drawMap(map({}))).toBe('\n');
    expect(drawMap(map({ display: { kind: 'log2-histogram', bucket: 'bpftrace' } }))).toBe('\n');
  });

  it('a libbpf-tools histogram in a value struct, one per key, per-CPU values summed', () => {
    const text = drawMap(
      map({
        name: 'hists',
        display: { kind: 'log2-histogram', bucket: 'libbpf-tools' },
        entries: [
          { key: 'bash', value: { slots: [1, 0, 2, 0], comm: 'bash' } },
          { key: 'a', values: [{ slots: [0, 3, 0, 0] }, { slots: [0, 1, 0, 4] }] },
        ],
      }),
    );
    expect(text).toBe(
      `@hists[a]: \n[2, 4)                 4 |${'@'.repeat(52)}|\n[4, 8)                 0 |${' '.repeat(52)}|\n[8, 16)                4 |${'@'.repeat(52)}|\n\n` +
        `@hists[bash]: \n[0, 2)                 1 |${'@'.repeat(26).padEnd(52)}|\n[2, 4)                 0 |${' '.repeat(52)}|\n[4, 8)                 2 |${'@'.repeat(52)}|\n\n`,
    );
  });

  it('a histogram of one array entry has no key; 64-bit counts as decimal strings', () => {
    const text = drawMap(map({ type: 'array', display: { kind: 'log2-histogram', bucket: 'libbpf-tools' }, entries: [{ key: 0, value: { slots: ['9007199254740993', 0] } }] }));
    // bpftrace's columns: a label padded to 16, a count padded to 8 (a wider one pushes the bar right)
    expect(text).toBe(`@m: \n[0, 2)          9007199254740993 |${'@'.repeat(52)}|\n\n`);
  });

  it('struct values as a table sorted by key; untyped bytes as hex', () => {
    const text = drawMap(map({ display: { kind: 'table' }, entries: [{ key: 2, value: { pid: 2, comm: 'b' } }, { key: 1, value: { hex: '00ff' } }] }));
    expect(text).toBe('@m[1]: 00ff\n@m[2]: { .pid = 2, .comm = b }\n');
  });

  it('counts whose values are not integers fall back to the table', () => {
    expect(drawMap(map({ entries: [{ key: 1, value: { hex: 'abcdef' } }] }))).toBe('@m[1]: abcdef\n');
  });

  it('hidden and events maps draw nothing', () => {
    expect(drawMap(map({ display: { kind: 'hidden' }, entries: [{ key: 1, value: 1 }] }))).toBe('');
    expect(drawMap(map({ display: { kind: 'events' } }))).toBe('');
  });

  it('the lost line comes first, beside the maps it affects; truncation is said', () => {
    expect(drawMaps([map({ entries: [{ key: 1, value: 2 }], truncated: 3 })], { eventsLost: 1234 })).toBe(
      'Lost 1234 events\n@m[1]: 2\n@m: 3 more entries not shown (over the snapshot limit)\n',
    );
  });

  it('valueText', () => {
    expect(valueText([1, 'a', { x: [2] }])).toBe('[1, a, { .x = [2] }]');
  });
});
