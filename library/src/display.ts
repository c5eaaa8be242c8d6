// How each map of the library is drawn. The runtime (packages/runtime) resolves a map's display
// hint by convention when the program carries none; the conventions are restated here, as the
// library's contract with it, so that a test can hold every library map to them:
//  - ring buffer / perf event array → `events`;
//  - global data (`.rodata`, `.data`, `.bss`) → `hidden`;
//  - a per-CPU array of one entry whose value is not an integer → `hidden` (scratch space);
//  - a value struct whose one member is an array named `slots` → `log2-histogram` per key
//    (libbpf-tools' `struct hist`: slot k counts [2^k, 2^(k+1)), 0 and 1 in slot 0);
//  - integer values (hash, array, per-CPU) → `counts`; struct values → `table`;
//  - the unit from the map name's suffix: `_ns`, `_us`, `_ms`, `_bytes`.
// Maps that only hold a program's bookkeeping (start timestamps by pid) look like counts or tables
// to these rules; the library hides them by metadata (programs.ts `state`).
import type { DisplayHint, SpecMap } from '@probeyard/compat';

/** `enum bpf_map_type` values the conventions name. */
const MapTypeId = { hash: 1, array: 2, perfEventArray: 4, percpuHash: 5, percpuArray: 6, lruHash: 9, lruPercpuHash: 10, ringbuf: 27 } as const;

const units: readonly [suffix: string, unit: string][] = [
  ['_ns', 'ns'],
  ['_us', 'us'],
  ['_ms', 'ms'],
  ['_bytes', 'bytes'],
];

/** The unit a map name's suffix says, if any. */
export function unitOfMapName(name: string): string | undefined {
  return units.find(([suffix]) => name.endsWith(suffix))?.[1];
}

/** True for a libbpf-tools histogram value: a struct whose one member is an array `slots`. */
export function isSlotsHistogram(map: Pick<SpecMap, 'valueType'>): boolean {
  const v = map.valueType;
  return v?.kind === 'struct' && v.fields.length === 1 && v.fields[0]!.name === 'slots' && v.fields[0]!.type.kind === 'array';
}

/** The display hint the conventions give `map`. */
export function conventionDisplayHint(map: SpecMap): DisplayHint {
  const unit = unitOfMapName(map.name);
  const common = { source: 'convention' as const, ...(unit === undefined ? {} : { unit }) };
  if (map.type === MapTypeId.ringbuf || map.type === MapTypeId.perfEventArray) return { kind: 'events', ...common };
  if (map.globalSection !== undefined) return { kind: 'hidden', ...common };
  const integer = map.valueType?.kind === 'int';
  if (map.type === MapTypeId.percpuArray && map.maxEntries === 1 && !integer) return { kind: 'hidden', ...common };
  if (isSlotsHistogram(map)) return { kind: 'log2-histogram', bucket: 'libbpf-tools', ...common };
  if (integer) return { kind: 'counts', ...common };
  return { kind: 'table', ...common };
}

/** The hint a library map is published with: hidden by metadata for state maps, else the convention's. */
export function libraryDisplayHint(map: SpecMap, state: Readonly<Record<string, string>>): DisplayHint {
  if (Object.hasOwn(state, map.name)) return { kind: 'hidden', source: 'metadata' };
  return conventionDisplayHint(map);
}
