import type { SpecMap, ValueType } from '@probeyard/compat';
import { describe, expect, it } from 'vitest';
import { resolveDisplayHint, unitOfMapName } from './display.js';

const u32: ValueType = { kind: 'int', size: 4 };
const u64: ValueType = { kind: 'int', size: 8 };
const hist: ValueType = { kind: 'struct', fields: [{ name: 'slots', offset: 0, type: { kind: 'array', element: u32, length: 26 } }, { name: 'comm', offset: 104, type: { kind: 'string', size: 16 } }] };
const avg: ValueType = { kind: 'struct', fields: [{ name: 'count', offset: 0, type: u64 }, { name: 'total', offset: 8, type: u64 }] };
const stats: ValueType = { kind: 'struct', fields: [...avg.fields, { name: 'min', offset: 16, type: u64 }, { name: 'max', offset: 24, type: u64 }] };
const row: ValueType = { kind: 'struct', fields: [{ name: 'pid', offset: 0, type: u32 }, { name: 'comm', offset: 4, type: { kind: 'string', size: 16 } }] };

function map(over: Partial<SpecMap>): SpecMap {
  return { name: 'm', type: 1, typeName: 'hash', keySize: 4, valueSize: 8, maxEntries: 1024, flags: 0, ...over };
}

describe('resolveDisplayHint', () => {
  it.each([
    ['ring buffer', map({ type: 27, keySize: 0, valueSize: 0, maxEntries: 4096 }), { kind: 'events' }],
    ['perf event array', map({ type: 4, valueSize: 4, maxEntries: 2 }), { kind: 'events' }],
    ['.rodata', map({ name: '.rodata', type: 2, valueSize: 24, maxEntries: 1, globalSection: '.rodata' }), { kind: 'hidden' }],
    ['.bss by name only', map({ name: '.bss', type: 2, valueSize: 8, maxEntries: 1 }), { kind: 'hidden' }],
    ['per-CPU scratch struct', map({ type: 6, valueSize: 24, maxEntries: 1, valueType: row }), { kind: 'hidden' }],
    ['per-CPU counter', map({ name: 'total', type: 6, maxEntries: 1, valueType: u64 }), { kind: 'counts' }],
    ['struct hist { slots[] }', map({ name: 'hists', valueSize: 120, valueType: hist }), { kind: 'log2-histogram', bucket: 'libbpf-tools' }],
    ['64-slot array', map({ name: 'runq_usecs', type: 2, maxEntries: 64, valueType: u64 }), { kind: 'log2-histogram', bucket: 'libbpf-tools', unit: 'us' }],
    ['64-slot array without BTF', map({ name: 'lat', type: 2, maxEntries: 64 }), { kind: 'log2-histogram', bucket: 'libbpf-tools' }],
    ['32-slot array', map({ name: 'lat', type: 2, maxEntries: 32, valueType: u64 }), { kind: 'counts' }],
    ['count/total struct', map({ name: 'wait_ns', valueSize: 16, valueType: avg }), { kind: 'average', unit: 'ns' }],
    ['count/total/min/max struct', map({ valueSize: 32, valueType: stats }), { kind: 'stats' }],
    ['hash of integers', map({ name: 'syscalls', valueType: u64 }), { kind: 'counts' }],
    ['hash of integers without BTF', map({ name: 'io_bytes' }), { kind: 'counts', unit: 'bytes' }],
    ['LRU hash of u32', map({ type: 9, valueSize: 4, valueType: u32 }), { kind: 'counts' }],
    ['hash of structs', map({ valueSize: 20, valueType: row }), { kind: 'table' }],
    ['hash of 24 untyped bytes', map({ valueSize: 24 }), { kind: 'table' }],
    ['queue', map({ type: 22, keySize: 0, valueSize: 8 }), { kind: 'table' }],
    ['stack trace', map({ type: 7, valueSize: 1016 }), { kind: 'hidden' }],
    ['program array', map({ type: 3, valueSize: 4 }), { kind: 'hidden' }],
  ])('%s', (_what, m, want) => {
    expect(resolveDisplayHint(m)).toEqual({ ...want, source: 'convention' });
  });

  it('the spec\'s own hint wins', () => {
    const display = { kind: 'linear-histogram', min: 0, max: 100, step: 10, source: 'script' } as const;
    expect(resolveDisplayHint(map({ name: 'x_ns', type: 2, maxEntries: 64, display }))).toBe(display);
  });
});

describe('unitOfMapName', () => {
  it.each([
    ['lat_ns', 'ns'],
    ['lat_nsecs', 'ns'],
    ['runq_usecs', 'us'],
    ['d_us', 'us'],
    ['x_ms', 'ms'],
    ['io_bytes', 'bytes'],
    ['bytes', undefined],
    ['counts', undefined],
    ['nsx', undefined],
  ])('%s → %s', (name, unit) => {
    expect(unitOfMapName(name)).toBe(unit);
  });
});
