// Turns a snapshot map of a histogram kind into slot counts per histogram key, from either layout
// packages/compat's display-hint.ts accepts: the key is the slot (an integer key, or a struct or
// array key whose last member is the slot), or the value is an array of slot counts (a struct
// whose one array member holds the slots, libbpf-tools' `struct hist { __u32 slots[N]; }`).
import type { JsonValue, MapSnapshotJson, SnapshotEntryJson } from '../payloads.js';

/** An integer of a snapshot (a JSON number or a decimal string), or undefined. */
export function integerOf(v: JsonValue | undefined): bigint | undefined {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : undefined;
  if (typeof v === 'string' && /^-?\d{1,20}$/.test(v)) return BigInt(v);
  return undefined;
}

/** The integer value of an entry: `value`, or the sum of `values` (per CPU) when all are integers. */
export function entryInteger(e: SnapshotEntryJson): bigint | undefined {
  if (e.value !== undefined) return integerOf(e.value);
  let s = 0n;
  for (const v of e.values ?? []) {
    const n = integerOf(v);
    if (n === undefined) return undefined;
    s += n;
  }
  return e.values === undefined ? undefined : s;
}

/** An array of integers held by a value (itself, or its one array member named `slots`, or its only array member). */
function slotArray(v: JsonValue | undefined): bigint[] | undefined {
  let arr: JsonValue | undefined;
  if (Array.isArray(v)) arr = v;
  else if (v !== null && typeof v === 'object' && !('hex' in v && Object.keys(v).length === 1)) {
    if (Array.isArray(v.slots)) arr = v.slots;
    else {
      const arrays = Object.values(v).filter(Array.isArray);
      if (arrays.length === 1) arr = arrays[0];
    }
  }
  if (!Array.isArray(arr)) return undefined;
  const out: bigint[] = [];
  for (const x of arr) {
    const n = integerOf(x);
    if (n === undefined) return undefined;
    out.push(n);
  }
  return out;
}

/** Slot counts of an entry whose value holds the slots (per CPU: summed). */
function entrySlots(e: SnapshotEntryJson): bigint[] | undefined {
  if (e.value !== undefined) return slotArray(e.value);
  let sum: bigint[] | undefined;
  for (const v of e.values ?? []) {
    const s = slotArray(v);
    if (s === undefined) return undefined;
    if (sum === undefined) sum = s;
    else for (let i = 0; i < s.length; i++) sum[i] = (sum[i] ?? 0n) + s[i]!;
  }
  return sum;
}

/** The members of a key, in order (an integer or string key is one member). */
export function keyMembers(k: JsonValue): JsonValue[] {
  if (Array.isArray(k)) return k;
  if (k !== null && typeof k === 'object') {
    if ('hex' in k && Object.keys(k).length === 1) return [k];
    return Object.values(k);
  }
  return [k];
}

/** One histogram of a map: its key members (none for a map holding one histogram) and slot counts. */
export interface HistogramSeries {
  key: JsonValue[];
  counts: bigint[];
}

/**
 * The histograms of a map drawn as a log2 or linear histogram, in key order; undefined when the
 * entries fit neither layout.
 */
export function histogramSeries(map: MapSnapshotJson): HistogramSeries[] | undefined {
  const series: HistogramSeries[] = [];
  // layout 1: the value holds the slots
  const bySlots = map.entries.map((e) => entrySlots(e));
  if (map.entries.length > 0 && bySlots.every((s) => s !== undefined)) {
    map.entries.forEach((e, i) => {
      const members = keyMembers(e.key);
      // a map of one histogram (an array map with one entry, key 0) has no key of its own
      const own = map.type.endsWith('array') && map.entries.length === 1 && members.length === 1 && integerOf(members[0]) === 0n ? [] : members;
      series.push({ key: own, counts: bySlots[i]! });
    });
    return sortSeries(series);
  }
  // layout 2: the key is (histogram key..., slot) and the value its count
  const groups = new Map<string, HistogramSeries>();
  for (const e of map.entries) {
    const members = keyMembers(e.key);
    const slot = integerOf(members.at(-1));
    const count = entryInteger(e);
    if (slot === undefined || count === undefined || slot < 0n || slot > 4096n) return undefined;
    const own = members.slice(0, -1);
    const id = JSON.stringify(own);
    let s = groups.get(id);
    if (!s) {
      s = { key: own, counts: [] };
      groups.set(id, s);
    }
    const at = Number(slot);
    while (s.counts.length <= at) s.counts.push(0n);
    s.counts[at] = s.counts[at]! + count;
  }
  return sortSeries([...groups.values()]);
}

/** Compares two key members: integers numerically, then strings, as bpftrace sorts keys. */
export function compareMembers(a: JsonValue, b: JsonValue): number {
  const x = integerOf(a);
  const y = integerOf(b);
  if (x !== undefined && y !== undefined) return x < y ? -1 : x > y ? 1 : 0;
  const s = memberText(a);
  const t = memberText(b);
  return s < t ? -1 : s > t ? 1 : 0;
}

export function compareKeys(a: readonly JsonValue[], b: readonly JsonValue[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compareMembers(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

function sortSeries(s: HistogramSeries[]): HistogramSeries[] {
  return s.sort((a, b) => compareKeys(a.key, b.key));
}

/** A key member as bpftrace prints it: numbers in decimal, strings as they are, bytes as hex. */
export function memberText(v: JsonValue): string {
  if (v === null) return '';
  if (typeof v === 'object') {
    if (!Array.isArray(v) && typeof v.hex === 'string' && Object.keys(v).length === 1) return v.hex;
    return keyMembers(v).map(memberText).join(', ');
  }
  return String(v);
}

/** A key as bpftrace prints it inside `@name[...]`: members joined by `, `. */
export function keyText(k: JsonValue): string {
  return keyMembers(k).map(memberText).join(', ');
}
