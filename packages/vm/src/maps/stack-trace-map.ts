import { VmError } from '../errors.js';
import { Errno } from './errno.js';
import { OpaqueMap, type MapSpec } from './map.js';

/** `map_flags` a stack trace map takes (`STACK_CREATE_FLAG_MASK`). */
const CREATE_FLAGS = (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5);
/** `BPF_F_STACK_BUILD_ID`: values are `struct bpf_stack_build_id` (32 bytes) instead of u64 ips. */
const BPF_F_STACK_BUILD_ID = 1 << 5;
/** `sysctl_perf_event_max_stack`'s default (`PERF_MAX_STACK_DEPTH`). */
const MAX_STACK = 127;

/**
 * `BPF_MAP_TYPE_STACK_TRACE`, created as kernel/bpf/stackmap.c checks it (key size 4, value
 * size a multiple of 8 — of 32 with `BPF_F_STACK_BUILD_ID` — and at most 127 frames), so that
 * objects declaring one load. It stays empty: a replay of trace records has no call chains, so
 * `bpf_get_stackid` never stores one (it returns -EFAULT, as the kernel does when it cannot fetch
 * a chain). User space sees what the kernel shows of an empty map: lookups -ENOENT, get_next_key
 * -ENOENT, delete -E2BIG past the buckets (max_entries rounded up to a power of 2) else -ENOENT,
 * update -EINVAL.
 */
export class StackTraceMap extends OpaqueMap {
  /** `n_buckets`: max_entries rounded up to a power of 2. */
  readonly buckets: number;

  constructor(spec: MapSpec) {
    const flags = spec.flags ?? 0;
    const vs = spec.valueSize;
    const frameBytes = (flags & BPF_F_STACK_BUILD_ID) !== 0 ? 32 : 8;
    if ((flags & ~CREATE_FLAGS) !== 0 || (flags & 0x18) === 0x18) {
      throw new VmError('invalid-map', `create map ${spec.name}: flags 0x${(flags >>> 0).toString(16)} are not valid for a stack trace map`);
    }
    if (spec.keySize !== 4) throw new VmError('invalid-map', `create map ${spec.name}: a stack trace map's key size must be 4, is ${spec.keySize}`);
    if (!(vs >= 8) || vs % 8 !== 0 || vs % frameBytes !== 0 || vs / frameBytes > MAX_STACK) {
      throw new VmError(
        'invalid-map',
        `create map ${spec.name}: a stack trace map's value size must be a multiple of ${frameBytes} up to ${MAX_STACK * frameBytes}, is ${vs}`,
      );
    }
    if (spec.maxEntries > 2 ** 31) throw new VmError('invalid-map', `create map ${spec.name}: max_entries ${spec.maxEntries} is above 2^31 (E2BIG)`);
    super(spec, 0);
    let n = 1;
    while (n < spec.maxEntries) n *= 2;
    this.buckets = n;
  }

  override deleteFromProgram(keyBytes: Uint8Array, keyOffset: number): number {
    const id =
      ((keyBytes[keyOffset] as number) |
        ((keyBytes[keyOffset + 1] as number) << 8) |
        ((keyBytes[keyOffset + 2] as number) << 16) |
        ((keyBytes[keyOffset + 3] as number) << 24)) >>>
      0;
    return id >= this.buckets ? -Errno.E2BIG : -Errno.ENOENT;
  }

  lookup(key: Uint8Array): Uint8Array | undefined {
    this.checkKey(key);
    return undefined;
  }
  update(key: Uint8Array, _value?: Uint8Array, _flags?: number): number {
    this.checkKey(key);
    return -Errno.EINVAL;
  }
  delete(key: Uint8Array): number {
    this.checkKey(key);
    return this.deleteFromProgram(key, 0);
  }
  getNextKey(key: Uint8Array | undefined): Uint8Array | number {
    if (key !== undefined) this.checkKey(key);
    return -Errno.ENOENT;
  }
}
