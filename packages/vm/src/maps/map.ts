import { BpfMapType, mapTypeNames as formatsMapTypeNames } from '@probeyard/formats';
import { VmError } from '../errors.js';
import { Errno } from './errno.js';

/** Map types (`enum bpf_map_type`, `BPF_MAP_TYPE_*`), with the kernel's numbers (packages/formats' table). */
export const MapType = BpfMapType;
export type MapType = BpfMapType;

/** The kernel's name of each map type the VM knows (`hash`, `prog_array`, …). */
export const mapTypeNames = Object.fromEntries(Object.values(MapType).map((t) => [t, formatsMapTypeNames[t]])) as Record<MapType, string>;

/** What a map is: the fields of `BPF_MAP_CREATE` the VM uses. */
export interface MapSpec {
  name: string;
  type: MapType;
  keySize: number;
  valueSize: number;
  maxEntries: number;
  /** `map_flags` (kept; `BPF_F_NO_PREALLOC` and friends change nothing here). */
  flags?: number;
}

/** Where a map reads its current CPU and how many CPUs there are (per-CPU maps). */
export interface MapContext {
  cpuCount: number;
}

/**
 * How compiled code looks a key up in a map without calling into JavaScript
 * (wasm/compile-wasm.ts, for `bpf_map_lookup_elem` on a map handle it knows): the map's shape,
 * fixed for its life. A pointer to the value found is (the map's region, `slot * slotBytes +
 * (cpu % cpuCount) * cpuStride`).
 */
export interface InlineLookup {
  /** `array`: the key is a u32 index below maxEntries; `hash`: the probe of the map's hash table (hash-table.ts). */
  kind: 'array' | 'hash';
  keySize: number;
  /** An array's index bound; a hash map's slots. */
  maxEntries: number;
  /** Bytes of one entry's values (every CPU's for per-CPU maps). */
  slotBytes: number;
  /** Per-CPU maps: bytes of one CPU's value, and the CPUs; otherwise 0 and 1. */
  cpuStride: number;
  cpuCount: number;
  /** Hash maps: where the buckets and the keys arena start in the map's storage, and buckets - 1. */
  bucketsOffset: number;
  keysOffset: number;
  mask: number;
}

/** A short text naming an {@link InlineLookup} (a part of the compiled module cache's key). */
export function inlineLookupKey(l: InlineLookup): string {
  return `${l.kind}/${l.keySize}/${l.maxEntries}/${l.slotBytes}/${l.cpuStride}/${l.cpuCount}/${l.bucketsOffset}/${l.keysOffset}/${l.mask}`;
}

/**
 * Base of every map. Values of maps a program can point into live in one `Uint8Array`
 * (`values`), which the VM maps as one memory region; a program's pointer to a value is
 * (region, byte offset of the value). The values, and after them the map's index when it has
 * one (a hash map's buckets and keys), are one block of storage ({@link storageBytes}) that the
 * VM places in its linear memory ({@link placeStorage}).
 */
export abstract class BpfMap {
  readonly spec: Readonly<MapSpec>;
  /** Value storage the program may point into, or an empty array. */
  values: Uint8Array;
  /** Bytes of {@link values} (kept apart: a view's length reads 0 once memory.grow detached it). */
  readonly valuesBytes: number;
  /** Bytes of the index after the values (a hash map's buckets and keys), 0 for other maps. */
  private readonly indexBytes: number;
  /** Region id the VM gave `values` (0 until a VM maps it). */
  regionId = 0;

  protected constructor(spec: MapSpec, valuesBytes: number, indexBytes = 0) {
    this.spec = Object.freeze({ ...spec });
    if (valuesBytes > 1 << 30 || indexBytes > 1 << 30) {
      throw new VmError('invalid-map', `create map ${spec.name}: value storage of ${valuesBytes} bytes is too large`);
    }
    this.valuesBytes = valuesBytes;
    this.indexBytes = indexBytes;
    this.values = new Uint8Array(new ArrayBuffer(this.storageBytes), 0, valuesBytes);
  }

  /** Bytes of the map's storage: its values (rounded up to 8 bytes), then its index. */
  get storageBytes(): number {
    return roundUp8(this.valuesBytes) + this.indexBytes;
  }

  /** Where the index starts in the storage (8-byte aligned). */
  protected get indexOffset(): number {
    return roundUp8(this.valuesBytes);
  }

  /**
   * Moves the storage ({@link storageBytes}) to `buffer` at `byteOffset` (8-byte aligned),
   * copying the current bytes there first when `copy` (not after a memory.grow: the bytes are
   * already there and the old views are detached).
   */
  placeStorage(buffer: ArrayBuffer, byteOffset: number, copy: boolean): void {
    const values = new Uint8Array(buffer, byteOffset, this.valuesBytes);
    if (copy) values.set(this.values);
    this.values = values;
    if (this.indexBytes > 0) this.placeIndex(buffer, byteOffset + this.indexOffset, copy);
  }

  /** Moves the index (see {@link placeStorage}); maps with one override it. */
  protected placeIndex(_buffer: ArrayBuffer, _byteOffset: number, _copy: boolean): void {}

  /** The shape compiled code needs to look keys up without JavaScript, or undefined (the helper then runs). */
  get inlineLookup(): InlineLookup | undefined {
    return undefined;
  }

  get name(): string {
    return this.spec.name;
  }

  /**
   * Program-side lookup: byte offset into `values` of the value for the key at
   * `keyBytes[keyOffset..]` (for per-CPU maps, the value of `cpu`), or -1.
   */
  abstract lookupFromProgram(keyBytes: Uint8Array, keyOffset: number, cpu: number): number;
  /** Program-side update: 0 or a negative errno. */
  abstract updateFromProgram(
    keyBytes: Uint8Array,
    keyOffset: number,
    valueBytes: Uint8Array,
    valueOffset: number,
    flags: number,
    cpu: number,
  ): number;
  /** Program-side delete: 0 or a negative errno. */
  abstract deleteFromProgram(keyBytes: Uint8Array, keyOffset: number): number;

  /**
   * User-side lookup (`BPF_MAP_LOOKUP_ELEM`): a copy of the value, or undefined. Per-CPU maps
   * return every CPU's value, each rounded up to 8 bytes, as the kernel does.
   */
  abstract lookup(key: Uint8Array): Uint8Array | undefined;
  /** User-side update (`BPF_MAP_UPDATE_ELEM`): 0 or a negative errno. */
  abstract update(key: Uint8Array, value: Uint8Array, flags?: number): number;
  /** User-side delete (`BPF_MAP_DELETE_ELEM`): 0 or a negative errno. */
  abstract delete(key: Uint8Array): number;
  /**
   * `BPF_MAP_GET_NEXT_KEY`: the key after `key` (the first key when `key` is undefined or, for
   * hash maps, absent), or a negative errno (-ENOENT after the last key).
   */
  abstract getNextKey(key: Uint8Array | undefined): Uint8Array | number;

  /** Every key, in get_next_key order. */
  *keys(): IterableIterator<Uint8Array> {
    let k = this.getNextKey(undefined);
    while (typeof k !== 'number') {
      yield k;
      k = this.getNextKey(k);
    }
  }

  /** Bytes of a value as the user API sees it (per-CPU: all CPUs, 8-byte rounded). */
  get userValueSize(): number {
    return this.spec.valueSize;
  }

  protected checkKey(key: Uint8Array): void {
    if (key.length !== this.spec.keySize) {
      throw new VmError(
        'invalid-argument',
        `map ${this.spec.name}: key of ${key.length} bytes, expected ${this.spec.keySize}`,
      );
    }
  }

  protected checkUserValue(value: Uint8Array): void {
    if (value.length !== this.userValueSize) {
      throw new VmError(
        'invalid-argument',
        `map ${this.spec.name}: value of ${value.length} bytes, expected ${this.userValueSize}`,
      );
    }
  }
}

export function roundUp8(n: number): number {
  return (n + 7) & ~7;
}

/** Where a map keeps its values: `slotBytes` per slot; per-CPU maps hold one `valueSize` value per CPU in a slot. */
export interface ValueStore {
  values: Uint8Array;
  slotBytes: number;
  valueSize: number;
  perCpu: boolean;
  cpuCount: number;
}

/**
 * The value of `slot` as user space sees it (`BPF_MAP_LOOKUP_ELEM`): a copy; for per-CPU maps
 * each CPU's value padded to 8 bytes, one after another.
 */
export function readUserValue(store: ValueStore, slot: number): Uint8Array {
  const { values, slotBytes, valueSize: vs, cpuCount } = store;
  if (!store.perCpu) return values.slice(slot * vs, (slot + 1) * vs);
  const stride = roundUp8(vs);
  const out = new Uint8Array(stride * cpuCount);
  for (let c = 0; c < cpuCount; c++) {
    const at = slot * slotBytes + c * vs;
    out.set(values.subarray(at, at + vs), c * stride);
  }
  return out;
}

/** Stores a user-space value (the layout {@link readUserValue} returns) into `slot`. */
export function writeUserValue(store: ValueStore, slot: number, value: Uint8Array): void {
  const { values, slotBytes, valueSize: vs, cpuCount } = store;
  if (!store.perCpu) {
    values.set(value, slot * vs);
    return;
  }
  const stride = roundUp8(vs);
  for (let c = 0; c < cpuCount; c++) values.set(value.subarray(c * stride, c * stride + vs), slot * slotBytes + c * vs);
}

/**
 * A map whose values programs never point into (ring buffers, queues and stacks, stack traces):
 * through `bpf_map_lookup_elem` nothing is found, update and delete are -EINVAL. (The verifier
 * refuses those helpers on these map types; only a harness without it gets here.)
 */
export abstract class OpaqueMap extends BpfMap {
  lookupFromProgram(): number {
    return -1;
  }
  updateFromProgram(): number {
    return -Errno.EINVAL;
  }
  deleteFromProgram(_keyBytes: Uint8Array, _keyOffset: number): number {
    return -Errno.EINVAL;
  }
}
