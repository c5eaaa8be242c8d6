import type { DisplayHint, SpecMap, ValueType } from '@probeyard/compat';

/** `BPF_MAP_TYPE_*` numbers the conventions look at. */
const T = {
  hash: 1,
  array: 2,
  progArray: 3,
  perfEventArray: 4,
  percpuHash: 5,
  percpuArray: 6,
  stackTrace: 7,
  lruHash: 9,
  lruPercpuHash: 10,
  queue: 22,
  stack: 23,
  ringbuf: 27,
} as const;

const keyed = new Set<number>([T.hash, T.array, T.percpuHash, T.percpuArray, T.lruHash, T.lruPercpuHash]);

/** Units read from a map name's suffix (`runq_usecs`, `lat_ns`, `io_bytes`). */
const unitSuffixes: readonly [RegExp, string][] = [
  [/_(ns|nsecs?)$/, 'ns'],
  [/_(us|usecs?)$/, 'us'],
  [/_(ms|msecs?)$/, 'ms'],
  [/_bytes$/, 'bytes'],
];

/** The unit a map name's suffix names, if any (`_ns`, `_us`, `_ms`, `_bytes`, and `_nsecs`, `_usecs`, `_msecs`). */
export function unitOfMapName(name: string): string | undefined {
  for (const [re, unit] of unitSuffixes) if (re.test(name)) return unit;
  return undefined;
}

const isInt = (t: ValueType | undefined): boolean => t?.kind === 'int';

/** The one array member named `slots` of a struct value (libbpf-tools' `struct hist { __u32 slots[N]; }`). */
export function slotsMember(t: ValueType | undefined): { name: string; offset: number; type: Extract<ValueType, { kind: 'array' }> } | undefined {
  if (t?.kind !== 'struct') return undefined;
  const arrays = t.fields.filter((f) => f.type.kind === 'array');
  const slots = arrays.length === 1 && arrays[0]!.name === 'slots' && isInt((arrays[0]!.type as Extract<ValueType, { kind: 'array' }>).element) ? arrays[0]! : undefined;
  return slots as ReturnType<typeof slotsMember>;
}

const intMember = (t: Extract<ValueType, { kind: 'struct' }>, name: string) => t.fields.some((f) => f.name === name && f.type.kind === 'int');

/**
 * The display hint of a map: `map.display` when the spec carries one, otherwise by convention
 * (in this order; the package README lists them):
 *
 * 1. ring buffer, perf event array → `events`;
 * 2. global data (`.rodata`, `.data`, `.bss`, `.kconfig`), program arrays, stack trace maps, and
 *    per-CPU arrays with one entry whose value is not an integer (scratch buffers) → `hidden`;
 * 3. a struct value whose one array member is named `slots` (libbpf-tools' `struct hist`) →
 *    `log2-histogram` with `libbpf-tools` bucketing, one histogram per key;
 * 4. an array map of 64 entries with 4-byte keys and 8-byte values (a slot per entry) → the same;
 * 5. a struct value with integer members `count` and `total` → `stats` when it also has `min`
 *    and `max`, else `average`;
 * 6. hash and array maps (per-CPU and LRU too) with integer values, or with no value type and a
 *    value of 1, 2, 4 or 8 bytes → `counts`;
 * 7. struct (or other typed) values, queue and stack maps → `table`.
 *
 * Every hint by convention gets `source: 'convention'` and the unit of the name's suffix.
 */
export function resolveDisplayHint(map: SpecMap): DisplayHint {
  if (map.display !== undefined) return map.display;
  const unit = unitOfMapName(map.name);
  const hint = (h: DisplayHint): DisplayHint => {
    const out: DisplayHint = { ...h, source: 'convention' };
    if (unit !== undefined && h.kind !== 'events' && h.kind !== 'hidden') out.unit = unit;
    return out;
  };
  const t = map.type;
  if (t === T.ringbuf || t === T.perfEventArray) return hint({ kind: 'events' });
  if (map.globalSection !== undefined || /^\.(rodata|data|bss|kconfig)/.test(map.name)) return hint({ kind: 'hidden' });
  if (t === T.progArray || t === T.stackTrace) return hint({ kind: 'hidden' });
  const intValue = map.valueType === undefined ? [1, 2, 4, 8].includes(map.valueSize) : isInt(map.valueType);
  if (t === T.percpuArray && map.maxEntries === 1 && !intValue) return hint({ kind: 'hidden' });
  if (t === T.queue || t === T.stack) return hint({ kind: 'table' });
  if (!keyed.has(t)) return hint({ kind: 'hidden' });
  if (slotsMember(map.valueType) !== undefined) return hint({ kind: 'log2-histogram', bucket: 'libbpf-tools' });
  if (t === T.array && map.maxEntries === 64 && map.keySize === 4 && map.valueSize === 8 && (map.valueType === undefined || isInt(map.valueType))) {
    return hint({ kind: 'log2-histogram', bucket: 'libbpf-tools' });
  }
  const v = map.valueType;
  if (v?.kind === 'struct' && intMember(v, 'count') && intMember(v, 'total')) {
    return hint({ kind: intMember(v, 'min') && intMember(v, 'max') ? 'stats' : 'average' });
  }
  if (intValue) return hint({ kind: 'counts' });
  return hint({ kind: 'table' });
}
