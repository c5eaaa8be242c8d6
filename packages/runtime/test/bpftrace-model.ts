// A model of bpftrace's map kinds for tests: values go in as bpftrace's functions take them and
// come out as the snapshot maps (docs/OUTPUTS.md) a program following packages/runtime's
// conventions would give, so drawing them can be compared with what bpftrace prints.
import type { DisplayHint } from '@probeyard/compat';
import type { JsonValue, MapSnapshotJson } from '../src/payloads.js';

/** bpftrace's `hist()` slot of a value: 0 negative, 1 zero, 2 one, k+2 for [2^k, 2^(k+1)). */
export function bpftraceLog2Slot(v: bigint): number {
  if (v < 0n) return 0;
  if (v === 0n) return 1;
  let k = 0;
  while (v >> BigInt(k + 1) > 0n) k++;
  return k + 2;
}

/** bpftrace's `lhist()` slot of a value. */
export function bpftraceLinearSlot(v: number, min: number, max: number, step: number): number {
  if (v < min) return 0;
  if (v >= max) return Math.ceil((max - min) / step) + 1;
  return Math.floor((v - min) / step) + 1;
}

type Key = JsonValue[];
const keyOf = (k: Key): JsonValue => (k.length === 1 ? k[0]! : k);

/** Builds snapshot maps from bpftrace-style calls. */
export class BpftraceModel {
  private maps = new Map<string, { display: DisplayHint; scalar: boolean; entries: Map<string, { key: Key; value: JsonValue }> }>();

  /** An entry; a map without keys is a one-entry array (bpftrace's `@x`). */
  private entry(name: string, display: DisplayHint, key: Key, init: () => JsonValue, scalar = key.length === 0) {
    let m = this.maps.get(name);
    if (!m) this.maps.set(name, (m = { display, scalar, entries: new Map() }));
    const id = JSON.stringify(key);
    let e = m.entries.get(id);
    if (!e) m.entries.set(id, (e = { key, value: init() }));
    return e;
  }

  count(name: string, key: Key = []): void {
    const e = this.entry(name, { kind: 'counts' }, key, () => 0);
    e.value = (e.value as number) + 1;
  }

  sum(name: string, v: number, key: Key = []): void {
    const e = this.entry(name, { kind: 'counts' }, key, () => 0);
    e.value = (e.value as number) + v;
  }

  set(name: string, v: number, key: Key = []): void {
    this.entry(name, { kind: 'counts' }, key, () => 0).value = v;
  }

  /** hist(): the key is (key..., slot), as a C program with a (key, slot) struct key lays it out. */
  hist(name: string, v: number | bigint, key: Key = []): void {
    const e = this.entry(name, { kind: 'log2-histogram', bucket: 'bpftrace' }, [...key, bpftraceLog2Slot(BigInt(v))], () => 0, false);
    e.value = (e.value as number) + 1;
  }

  lhist(name: string, v: number, min: number, max: number, step: number, key: Key = []): void {
    const e = this.entry(name, { kind: 'linear-histogram', min, max, step }, [...key, bpftraceLinearSlot(v, min, max, step)], () => 0, false);
    e.value = (e.value as number) + 1;
  }

  private stat(name: string, kind: 'average' | 'stats', v: number, key: Key): void {
    const e = this.entry(name, { kind }, key, () => ({ count: 0, total: 0 }));
    const s = e.value as { count: number; total: number };
    s.count++;
    s.total += v;
  }

  avg(name: string, v: number, key: Key = []): void {
    this.stat(name, 'average', v, key);
  }

  stats(name: string, v: number, key: Key = []): void {
    this.stat(name, 'stats', v, key);
  }

  snapshot(): MapSnapshotJson[] {
    return [...this.maps].map(([name, m]) => ({
      name,
      type: m.scalar ? 'array' : 'hash',
      maxEntries: m.scalar ? 1 : 10240,
      display: m.display,
      entries: [...m.entries.values()].map((e) => ({ key: e.key.length === 0 ? 0 : keyOf(e.key), value: e.value })),
      truncated: 0,
    }));
  }
}
