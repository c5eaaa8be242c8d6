/** `enum bpf_map_type` names (lowercase, without `BPF_MAP_TYPE_`), indexed by value. */
export const mapTypeNames = [
  'unspec',
  'hash',
  'array',
  'prog_array',
  'perf_event_array',
  'percpu_hash',
  'percpu_array',
  'stack_trace',
  'cgroup_array',
  'lru_hash',
  'lru_percpu_hash',
  'lpm_trie',
  'array_of_maps',
  'hash_of_maps',
  'devmap',
  'sockmap',
  'cpumap',
  'xskmap',
  'sockhash',
  'cgroup_storage',
  'reuseport_sockarray',
  'percpu_cgroup_storage',
  'queue',
  'stack',
  'sk_storage',
  'devmap_hash',
  'struct_ops',
  'ringbuf',
  'inode_storage',
  'task_storage',
  'bloom_filter',
  'user_ringbuf',
  'cgrp_storage',
  'arena',
] as const;

/** The name of a map type number (`27` → `ringbuf`), or `unknown(<n>)`. */
export function mapTypeName(type: number): string {
  return mapTypeNames[type] ?? `unknown(${type})`;
}

/** `BPF_MAP_TYPE_*` values this project's runtime cares about. */
export const MapType = {
  Hash: 1,
  Array: 2,
  ProgArray: 3,
  PerfEventArray: 4,
  PercpuHash: 5,
  PercpuArray: 6,
  LruHash: 9,
  LruPercpuHash: 10,
  ArrayOfMaps: 12,
  HashOfMaps: 13,
  Ringbuf: 27,
} as const;

/**
 * The `BPF_MAP_TYPE_*` numbers the verifier and the VM model, by camelCase name: one table that
 * packages/verifier and packages/vm both export as their `MapType` (names as `mapTypeNames`).
 */
export const BpfMapType = {
  hash: 1,
  array: 2,
  progArray: 3,
  perfEventArray: 4,
  percpuHash: 5,
  percpuArray: 6,
  stackTrace: 7,
  cgroupArray: 8,
  lruHash: 9,
  lruPercpuHash: 10,
  queue: 22,
  stack: 23,
  ringbuf: 27,
} as const;
export type BpfMapType = (typeof BpfMapType)[keyof typeof BpfMapType];
