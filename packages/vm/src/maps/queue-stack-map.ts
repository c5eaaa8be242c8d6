import { VmError } from '../errors.js';
import { Errno, UpdateFlag } from './errno.js';
import { OpaqueMap, type MapSpec, MapType } from './map.js';

/** `map_flags` a queue or stack map takes (`QUEUE_STACK_CREATE_FLAG_MASK`: `BPF_F_NUMA_NODE | BPF_F_ACCESS_MASK`). */
const CREATE_FLAGS = (1 << 2) | (1 << 3) | (1 << 4) | (1 << 7) | (1 << 8);
const BPF_F_RDONLY = 1 << 3;
const BPF_F_WRONLY = 1 << 4;
const BPF_F_RDONLY_PROG = 1 << 7;
const BPF_F_WRONLY_PROG = 1 << 8;
/** `KMALLOC_MAX_SIZE` on x86-64 (2^(MAX_PAGE_ORDER + PAGE_SHIFT)): the largest value the kernel takes. */
const MAX_VALUE_SIZE = 1 << 22;
const NO_KEY = new Uint8Array(0);

/**
 * `BPF_MAP_TYPE_QUEUE` (FIFO) and `BPF_MAP_TYPE_STACK` (LIFO), as kernel/bpf/queue_stack_maps.c
 * keeps them: a ring of max_entries + 1 slots of value_size bytes between `tail` (the oldest
 * value) and `head` (the next free slot). No keys (key_size 0); the program pushes, pops and
 * peeks through helpers, user space pushes with `BPF_MAP_UPDATE_ELEM`, peeks with
 * `BPF_MAP_LOOKUP_ELEM` and pops with `BPF_MAP_LOOKUP_AND_DELETE_ELEM`. A push into a full map
 * is -E2BIG, or with `BPF_EXIST` overwrites the oldest value (for a stack too: the bottom one);
 * a pop or peek of an empty map is -ENOENT with the destination zeroed. The values live outside
 * `values`, so a program can never point into them (the kernel gives no pointer either).
 */
export class QueueStackMap extends OpaqueMap {
  /** Last in, first out (`BPF_MAP_TYPE_STACK`); else first in, first out. */
  readonly lifo: boolean;
  private readonly elements: Uint8Array;
  /** Slots in the ring: max_entries + 1 (one stays free, so head == tail means empty). */
  private readonly slots: number;
  private head = 0;
  private tail = 0;

  constructor(spec: MapSpec) {
    const flags = spec.flags ?? 0;
    const what = spec.type === MapType.stack ? 'a stack map' : 'a queue map';
    if (spec.keySize !== 0) throw new VmError('invalid-map', `create map ${spec.name}: ${what}'s key size must be 0, is ${spec.keySize}`);
    if (!(spec.valueSize > 0) || !(spec.maxEntries > 0)) {
      throw new VmError('invalid-map', `create map ${spec.name}: ${what}'s value size and max_entries must be > 0`);
    }
    if ((flags & ~CREATE_FLAGS) !== 0 || (flags & (BPF_F_RDONLY | BPF_F_WRONLY)) === (BPF_F_RDONLY | BPF_F_WRONLY) ||
      (flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)) === (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)) {
      throw new VmError('invalid-map', `create map ${spec.name}: flags 0x${(flags >>> 0).toString(16)} are not valid for ${what}`);
    }
    if (spec.valueSize > MAX_VALUE_SIZE) {
      throw new VmError('invalid-map', `create map ${spec.name}: value size ${spec.valueSize} is above ${MAX_VALUE_SIZE} (E2BIG)`);
    }
    const bytes = (spec.maxEntries + 1) * spec.valueSize;
    if (bytes > 1 << 30) throw new VmError('invalid-map', `create map ${spec.name}: value storage of ${bytes} bytes is too large`);
    super(spec, 0);
    this.lifo = spec.type === MapType.stack;
    this.slots = spec.maxEntries + 1;
    this.elements = new Uint8Array(bytes);
  }

  /** Values held. */
  get count(): number {
    return (this.head - this.tail + this.slots) % this.slots;
  }

  /**
   * `map_push_elem`: copies value_size bytes from `bytes[offset..]`; 0, -E2BIG when full
   * (unless `BPF_EXIST`, which drops the oldest value), -EINVAL for flags other than 0 and
   * `BPF_EXIST` (`flags` < 0 stands for any flags above 32 bits).
   */
  push(bytes: Uint8Array, offset: number, flags: number): number {
    if (flags !== UpdateFlag.any && flags !== UpdateFlag.exist) return -Errno.EINVAL;
    const vs = this.spec.valueSize;
    let next = this.head + 1;
    if (next >= this.slots) next = 0;
    if (next === this.tail) {
      if (flags !== UpdateFlag.exist) return -Errno.E2BIG;
      this.tail = this.tail + 1 >= this.slots ? 0 : this.tail + 1;
    }
    this.elements.set(bytes.subarray(offset, offset + vs), this.head * vs);
    this.head = next;
    return 0;
  }

  /**
   * `map_pop_elem` (`remove`) or `map_peek_elem`: copies the next value (the oldest of a queue,
   * the newest of a stack) to `dst[offset..]`; 0, or -ENOENT with value_size zero bytes there.
   */
  take(dst: Uint8Array, offset: number, remove: boolean): number {
    const vs = this.spec.valueSize;
    if (this.head === this.tail) {
      dst.fill(0, offset, offset + vs);
      return -Errno.ENOENT;
    }
    const slot = this.nextSlot();
    dst.set(this.elements.subarray(slot * vs, slot * vs + vs), offset);
    if (remove) {
      if (this.lifo) this.head = slot;
      else this.tail = this.tail + 1 >= this.slots ? 0 : this.tail + 1;
    }
    return 0;
  }

  /** Slot a pop or peek reads (the map is not empty). */
  private nextSlot(): number {
    if (!this.lifo) return this.tail;
    return this.head === 0 ? this.slots - 1 : this.head - 1;
  }

  /** Copies of the values held, in the order pops would take them; the map is unchanged. */
  *valuesInPopOrder(): IterableIterator<Uint8Array> {
    const vs = this.spec.valueSize;
    const n = this.count;
    for (let i = 0; i < n; i++) {
      const slot = this.lifo ? (this.head - 1 - i + 2 * this.slots) % this.slots : (this.tail + i) % this.slots;
      yield this.elements.slice(slot * vs, slot * vs + vs);
    }
  }


  /** `BPF_MAP_LOOKUP_ELEM` (key of 0 bytes): a peek, or undefined when empty. */
  lookup(key: Uint8Array = NO_KEY): Uint8Array | undefined {
    this.checkKey(key);
    const out = new Uint8Array(this.spec.valueSize);
    return this.take(out, 0, false) === 0 ? out : undefined;
  }

  /** `BPF_MAP_LOOKUP_AND_DELETE_ELEM`: a pop, or undefined when empty. */
  lookupAndDelete(key: Uint8Array = NO_KEY): Uint8Array | undefined {
    this.checkKey(key);
    const out = new Uint8Array(this.spec.valueSize);
    return this.take(out, 0, true) === 0 ? out : undefined;
  }

  /** `BPF_MAP_UPDATE_ELEM` (key of 0 bytes): a push with `flags`. */
  update(key: Uint8Array, value: Uint8Array, flags = 0): number {
    this.checkKey(key);
    this.checkUserValue(value);
    return this.push(value, 0, flags);
  }

  /** `BPF_MAP_DELETE_ELEM`: -EINVAL, as the kernel (pop instead). */
  delete(key: Uint8Array): number {
    this.checkKey(key);
    return -Errno.EINVAL;
  }

  /** `BPF_MAP_GET_NEXT_KEY`: -EINVAL (no keys). */
  getNextKey(_key?: Uint8Array): Uint8Array | number {
    return -Errno.EINVAL;
  }
}
