/**
 * Open-addressing hash table over fixed-size byte keys: the core of the hash maps. Keys live in
 * one byte arena indexed by slot; buckets hold slot numbers (-1 empty, -2 a tombstone). No
 * allocation per lookup. Iteration order is bucket order (like the kernel's, unspecified and
 * unstable across updates).
 *
 * The buckets and the keys arena are views of a buffer the table is given (its map's storage:
 * see {@link HashTable.indexBytes}), so that the VM can place them in its linear memory next to
 * the map's values, where compiled code probes them without calling into JavaScript
 * (wasm/compile-wasm.ts, `emitHashFind`, computes the same hash and probe). The bookkeeping no
 * lookup reads (the bucket of each slot, the free list, the counts) stays in JavaScript. The
 * number of buckets never changes: a rehash (too many tombstones) rewrites them in place.
 */
export const EMPTY = -1;
export const TOMBSTONE = -2;

/** FNV-1a offset basis and prime, and the final mix's multiplier (the hash of {@link HashTable}). */
export const HashConst = { basis: 0x811c9dc5 | 0, prime: 0x01000193, mix: 0x45d9f3b } as const;

export class HashTable {
  readonly keySize: number;
  readonly maxEntries: number;
  /** Bytes of the keys arena: key of slot s at `keys[s * keySize..]`. */
  keys: Uint8Array;
  /** Slot in each bucket, or {@link EMPTY} / {@link TOMBSTONE}. */
  buckets: Int32Array;
  /** Buckets - 1 (a power of two minus one). */
  readonly mask: number;
  /** Bucket of each used slot, -1 for a free slot. */
  private readonly slotBucket: Int32Array;
  private readonly freeSlots: Int32Array;
  private freeCount: number;
  private tombstones = 0;
  count = 0;

  /** Number of buckets for `maxEntries` keys: a power of two, at least 8 and twice the keys. */
  static bucketCount(maxEntries: number): number {
    let cap = 8;
    while (cap < maxEntries * 2) cap *= 2;
    return cap;
  }

  /** Bytes of the buckets (4 per bucket) and, after them, of the keys arena. */
  static indexBytes(keySize: number, maxEntries: number): number {
    return HashTable.bucketCount(maxEntries) * 4 + keySize * maxEntries;
  }

  /**
   * A table over `buffer` at `byteOffset` (4-byte aligned): the buckets, then the keys arena
   * ({@link indexBytes} bytes); without a buffer, over one of its own.
   */
  constructor(keySize: number, maxEntries: number, buffer?: ArrayBuffer, byteOffset = 0) {
    this.keySize = keySize;
    this.maxEntries = maxEntries;
    const cap = HashTable.bucketCount(maxEntries);
    this.mask = cap - 1;
    const buf = buffer ?? new ArrayBuffer(HashTable.indexBytes(keySize, maxEntries));
    this.buckets = new Int32Array(buf, byteOffset, cap);
    this.keys = new Uint8Array(buf, byteOffset + cap * 4, keySize * maxEntries);
    this.buckets.fill(EMPTY);
    this.slotBucket = new Int32Array(maxEntries).fill(-1);
    this.freeSlots = new Int32Array(maxEntries);
    for (let i = 0; i < maxEntries; i++) this.freeSlots[i] = maxEntries - 1 - i;
    this.freeCount = maxEntries;
  }

  /**
   * Moves the buckets and keys to `buffer` at `byteOffset`, copying them there first when `copy`
   * (when the old views may be detached, after a memory.grow, the bytes are already there).
   */
  place(buffer: ArrayBuffer, byteOffset: number, copy: boolean): void {
    const buckets = new Int32Array(buffer, byteOffset, this.mask + 1);
    const keys = new Uint8Array(buffer, byteOffset + (this.mask + 1) * 4, this.keySize * this.maxEntries);
    if (copy) {
      buckets.set(this.buckets);
      keys.set(this.keys);
    }
    this.buckets = buckets;
    this.keys = keys;
  }

  private hash(bytes: Uint8Array, offset: number): number {
    let h = HashConst.basis;
    for (let i = 0; i < this.keySize; i++) h = Math.imul(h ^ (bytes[offset + i] as number), HashConst.prime);
    h ^= h >>> 16;
    return Math.imul(h, HashConst.mix) ^ (h >>> 13);
  }

  /**
   * {@link find} of a 4-byte key (a pid, a syscall id, a CPU: most tracing maps), unrolled: the
   * same hash and the same probe as the loop over `keySize`, without the loops.
   */
  private find4(bytes: Uint8Array, offset: number): number {
    const k0 = bytes[offset] as number;
    const k1 = bytes[offset + 1] as number;
    const k2 = bytes[offset + 2] as number;
    const k3 = bytes[offset + 3] as number;
    let h = Math.imul(HashConst.basis ^ k0, HashConst.prime);
    h = Math.imul(h ^ k1, HashConst.prime);
    h = Math.imul(h ^ k2, HashConst.prime);
    h = Math.imul(h ^ k3, HashConst.prime);
    h ^= h >>> 16;
    h = Math.imul(h, HashConst.mix) ^ (h >>> 13);
    const mask = this.mask;
    const buckets = this.buckets;
    const keys = this.keys;
    let b = h & mask;
    for (;;) {
      const s = buckets[b] as number;
      if (s === EMPTY) return -1;
      if (s >= 0) {
        const base = s * 4;
        if (keys[base] === k0 && keys[base + 1] === k1 && keys[base + 2] === k2 && keys[base + 3] === k3) return s;
      }
      b = (b + 1) & mask;
    }
  }

  private equals(slot: number, bytes: Uint8Array, offset: number): boolean {
    const ks = this.keySize;
    const base = slot * ks;
    const keys = this.keys;
    for (let i = 0; i < ks; i++) if (keys[base + i] !== bytes[offset + i]) return false;
    return true;
  }

  /** Slot of the key at `bytes[offset..]`, or -1. */
  find(bytes: Uint8Array, offset: number): number {
    if (this.keySize === 4) return this.find4(bytes, offset);
    const mask = this.mask;
    const buckets = this.buckets;
    let b = this.hash(bytes, offset) & mask;
    for (;;) {
      const s = buckets[b] as number;
      if (s === EMPTY) return -1;
      if (s >= 0 && this.equals(s, bytes, offset)) return s;
      b = (b + 1) & mask;
    }
  }

  /** Whether a slot is free for an insert. */
  get isFull(): boolean {
    return this.freeCount === 0;
  }

  /** Inserts a key known to be absent; returns its slot, or -1 when full. */
  insert(bytes: Uint8Array, offset: number): number {
    if (this.freeCount === 0) return -1;
    const slot = this.freeSlots[--this.freeCount] as number;
    this.keys.set(bytes.subarray(offset, offset + this.keySize), slot * this.keySize);
    const mask = this.mask;
    const buckets = this.buckets;
    let b = this.hash(bytes, offset) & mask;
    for (;;) {
      const s = buckets[b] as number;
      if (s === EMPTY || s === TOMBSTONE) {
        if (s === TOMBSTONE) this.tombstones--;
        buckets[b] = slot;
        this.slotBucket[slot] = b;
        this.count++;
        return slot;
      }
      b = (b + 1) & mask;
    }
  }

  /** Removes a used slot. */
  remove(slot: number): void {
    const b = this.slotBucket[slot] as number;
    this.buckets[b] = TOMBSTONE;
    this.tombstones++;
    this.slotBucket[slot] = -1;
    this.freeSlots[this.freeCount++] = slot;
    this.count--;
    if (this.tombstones > (this.mask + 1) >> 2) this.rehash();
  }

  /** Drops the tombstones: every key placed again from its hash, in place (the buckets stay where they are). */
  private rehash(): void {
    const mask = this.mask;
    const buckets = this.buckets;
    const old = buckets.slice();
    buckets.fill(EMPTY);
    const ks = this.keySize;
    for (let b = 0; b <= mask; b++) {
      const s = old[b] as number;
      if (s < 0) continue;
      let nb = this.hash(this.keys, s * ks) & mask;
      while ((buckets[nb] as number) !== EMPTY) nb = (nb + 1) & mask;
      buckets[nb] = s;
      this.slotBucket[s] = nb;
    }
    this.tombstones = 0;
  }

  /** The used slot after `slot` in bucket order (or the first when slot is -1), or -1. */
  nextSlot(slot: number): number {
    const cap = this.mask + 1;
    const start = slot < 0 ? 0 : (this.slotBucket[slot] as number) + 1;
    for (let b = start; b < cap; b++) {
      const s = this.buckets[b] as number;
      if (s >= 0) return s;
    }
    return -1;
  }

  keyOf(slot: number): Uint8Array {
    return this.keys.slice(slot * this.keySize, (slot + 1) * this.keySize);
  }

  clear(): void {
    this.buckets.fill(EMPTY);
    this.slotBucket.fill(-1);
    for (let i = 0; i < this.maxEntries; i++) this.freeSlots[i] = this.maxEntries - 1 - i;
    this.freeCount = this.maxEntries;
    this.count = 0;
    this.tombstones = 0;
  }
}
