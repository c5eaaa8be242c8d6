import { VmError } from '../errors.js';
import { Errno, UpdateFlag } from './errno.js';
import { HashTable } from './hash-table.js';
import { BpfMap, type InlineLookup, type MapContext, type MapSpec, MapType, readUserValue, roundUp8, type ValueStore, writeUserValue } from './map.js';

/**
 * `BPF_MAP_TYPE_HASH`, `PERCPU_HASH`, `LRU_HASH` and `LRU_PERCPU_HASH`. A full hash map refuses
 * a new key with -E2BIG; an LRU map evicts its least recently used key instead (a lookup or
 * update from the program counts as a use; user-space lookups do not).
 */
export class HashMap extends BpfMap {
  private readonly table: HashTable;
  private readonly perCpu: boolean;
  private readonly lru: boolean;
  private readonly cpuCount: number;
  /** Bytes of one slot's values (all CPUs). */
  private readonly slotBytes: number;
  private readonly prev: Int32Array;
  private readonly next: Int32Array;
  private head = -1;
  private tail = -1;

  constructor(spec: MapSpec, context: MapContext) {
    const perCpu = spec.type === MapType.percpuHash || spec.type === MapType.lruPercpuHash;
    const cpus = perCpu ? context.cpuCount : 1;
    if (spec.keySize <= 0 || spec.valueSize <= 0 || spec.maxEntries <= 0) {
      throw new VmError('invalid-map', `create map ${spec.name}: key size, value size and max_entries must be > 0`);
    }
    super(spec, spec.valueSize * cpus * spec.maxEntries, HashTable.indexBytes(spec.keySize, spec.maxEntries));
    this.perCpu = perCpu;
    this.lru = spec.type === MapType.lruHash || spec.type === MapType.lruPercpuHash;
    this.cpuCount = cpus;
    this.slotBytes = spec.valueSize * cpus;
    // the index (buckets, keys) after the values, in the same storage (see BpfMap.placeStorage)
    this.table = new HashTable(spec.keySize, spec.maxEntries, this.values.buffer as ArrayBuffer, this.indexOffset);
    this.prev = new Int32Array(this.lru ? spec.maxEntries : 0);
    this.next = new Int32Array(this.lru ? spec.maxEntries : 0);
  }

  protected override placeIndex(buffer: ArrayBuffer, byteOffset: number, copy: boolean): void {
    this.table.place(buffer, byteOffset, copy);
  }

  /**
   * HASH and PERCPU_HASH: a lookup from the program only reads the table. LRU maps are not
   * looked up inline: a lookup from the program moves the key to the front of the LRU list,
   * which lives in JavaScript.
   */
  override get inlineLookup(): InlineLookup | undefined {
    if (this.lru) return undefined;
    const cap = this.table.mask + 1;
    return {
      kind: 'hash',
      keySize: this.spec.keySize,
      maxEntries: this.spec.maxEntries,
      slotBytes: this.slotBytes,
      cpuStride: this.perCpu ? this.spec.valueSize : 0,
      cpuCount: this.cpuCount,
      bucketsOffset: this.indexOffset,
      keysOffset: this.indexOffset + cap * 4,
      mask: this.table.mask,
    };
  }

  override get userValueSize(): number {
    return this.perCpu ? roundUp8(this.spec.valueSize) * this.cpuCount : this.spec.valueSize;
  }

  /** Number of keys present. */
  get size(): number {
    return this.table.count;
  }

  private unlink(slot: number): void {
    const p = this.prev[slot] as number;
    const n = this.next[slot] as number;
    if (p >= 0) this.next[p] = n;
    else this.head = n;
    if (n >= 0) this.prev[n] = p;
    else this.tail = p;
  }

  private pushFront(slot: number): void {
    this.prev[slot] = -1;
    this.next[slot] = this.head;
    if (this.head >= 0) this.prev[this.head] = slot;
    this.head = slot;
    if (this.tail < 0) this.tail = slot;
  }

  private touch(slot: number): void {
    if (this.head === slot) return;
    this.unlink(slot);
    this.pushFront(slot);
  }

  private removeSlot(slot: number): void {
    if (this.lru) this.unlink(slot);
    this.table.remove(slot);
  }

  /** Finds or makes the slot for an update; returns a slot, or a negative errno. */
  private slotForUpdate(keyBytes: Uint8Array, keyOffset: number, flags: number): number {
    if (flags < 0 || flags > UpdateFlag.exist) return -Errno.EINVAL;
    const found = this.table.find(keyBytes, keyOffset);
    if (found >= 0) {
      if (flags === UpdateFlag.noExist) return -Errno.EEXIST;
      if (this.lru) this.touch(found);
      return found;
    }
    if (flags === UpdateFlag.exist) return -Errno.ENOENT;
    if (this.table.isFull) {
      if (!this.lru) return -Errno.E2BIG;
      this.removeSlot(this.tail);
    }
    const slot = this.table.insert(keyBytes, keyOffset);
    if (this.lru) this.pushFront(slot);
    this.values.fill(0, slot * this.slotBytes, (slot + 1) * this.slotBytes);
    return slot;
  }

  lookupFromProgram(keyBytes: Uint8Array, keyOffset: number, cpu: number): number {
    const slot = this.table.find(keyBytes, keyOffset);
    if (slot < 0) return -1;
    if (this.lru) this.touch(slot);
    return slot * this.slotBytes + (this.perCpu ? (cpu % this.cpuCount) * this.spec.valueSize : 0);
  }

  updateFromProgram(
    keyBytes: Uint8Array,
    keyOffset: number,
    valueBytes: Uint8Array,
    valueOffset: number,
    flags: number,
    cpu: number,
  ): number {
    const slot = this.slotForUpdate(keyBytes, keyOffset, flags);
    if (slot < 0) return slot;
    const at = slot * this.slotBytes + (this.perCpu ? (cpu % this.cpuCount) * this.spec.valueSize : 0);
    this.values.set(valueBytes.subarray(valueOffset, valueOffset + this.spec.valueSize), at);
    return 0;
  }

  deleteFromProgram(keyBytes: Uint8Array, keyOffset: number): number {
    const slot = this.table.find(keyBytes, keyOffset);
    if (slot < 0) return -Errno.ENOENT;
    this.removeSlot(slot);
    return 0;
  }

  lookup(key: Uint8Array): Uint8Array | undefined {
    this.checkKey(key);
    const slot = this.table.find(key, 0);
    if (slot < 0) return undefined;
    return this.userValue(slot);
  }

  private userValue(slot: number): Uint8Array {
    return readUserValue(this.store(), slot);
  }

  private store(): ValueStore {
    const { values, slotBytes, perCpu, cpuCount } = this;
    return { values, slotBytes, valueSize: this.spec.valueSize, perCpu, cpuCount };
  }

  update(key: Uint8Array, value: Uint8Array, flags = 0): number {
    this.checkKey(key);
    this.checkUserValue(value);
    const slot = this.slotForUpdate(key, 0, flags);
    if (slot < 0) return slot;
    writeUserValue(this.store(), slot, value);
    return 0;
  }

  delete(key: Uint8Array): number {
    this.checkKey(key);
    return this.deleteFromProgram(key, 0);
  }

  getNextKey(key: Uint8Array | undefined): Uint8Array | number {
    let from = -1;
    if (key !== undefined) {
      this.checkKey(key);
      from = this.table.find(key, 0);
    }
    const s = this.table.nextSlot(from);
    return s < 0 ? -Errno.ENOENT : this.table.keyOf(s);
  }

  /** Per-slot access for snapshots: [key, user value] pairs in iteration order. */
  *entries(): IterableIterator<[Uint8Array, Uint8Array]> {
    for (let s = this.table.nextSlot(-1); s >= 0; s = this.table.nextSlot(s)) {
      yield [this.table.keyOf(s), this.userValue(s)];
    }
  }

  clear(): void {
    this.table.clear();
    this.head = -1;
    this.tail = -1;
  }
}
