/**
 * Open-addressing hash table over fixed-size byte keys: the core of the hash maps. Keys live in
 * one `Uint8Array` arena indexed by slot; buckets hold slot numbers. No allocation per lookup.
 * Iteration order is bucket order (like the kernel's, unspecified and unstable across updates).
 */
const EMPTY = -1;
const TOMBSTONE = -2;

export class HashTable {
  readonly keySize: number;
  readonly maxEntries: number;
  readonly keys: Uint8Array;
  private buckets: Int32Array;
  private mask: number;
  /** Bucket of each used slot, -1 for a free slot. */
  private readonly slotBucket: Int32Array;
  private readonly freeSlots: Int32Array;
  private freeCount: number;
  private tombstones = 0;
  count = 0;

  constructor(keySize: number, maxEntries: number) {
    this.keySize = keySize;
    this.maxEntries = maxEntries;
    this.keys = new Uint8Array(keySize * maxEntries);
    let cap = 8;
    while (cap < maxEntries * 2) cap *= 2;
    this.buckets = new Int32Array(cap).fill(EMPTY);
    this.mask = cap - 1;
    this.slotBucket = new Int32Array(maxEntries).fill(-1);
    this.freeSlots = new Int32Array(maxEntries);
    for (let i = 0; i < maxEntries; i++) this.freeSlots[i] = maxEntries - 1 - i;
    this.freeCount = maxEntries;
  }

  private hash(bytes: Uint8Array, offset: number): number {
    let h = 0x811c9dc5;
    for (let i = 0; i < this.keySize; i++) h = Math.imul(h ^ (bytes[offset + i] as number), 0x01000193);
    h ^= h >>> 16;
    return Math.imul(h, 0x45d9f3b) ^ (h >>> 13);
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
    let h = Math.imul(0x811c9dc5 ^ k0, 0x01000193);
    h = Math.imul(h ^ k1, 0x01000193);
    h = Math.imul(h ^ k2, 0x01000193);
    h = Math.imul(h ^ k3, 0x01000193);
    h ^= h >>> 16;
    h = Math.imul(h, 0x45d9f3b) ^ (h >>> 13);
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
    let b = this.hash(bytes, offset) & mask;
    for (;;) {
      const s = this.buckets[b] as number;
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
    let b = this.hash(bytes, offset) & mask;
    for (;;) {
      const s = this.buckets[b] as number;
      if (s === EMPTY || s === TOMBSTONE) {
        if (s === TOMBSTONE) this.tombstones--;
        this.buckets[b] = slot;
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

  private rehash(): void {
    const cap = this.mask + 1;
    const buckets = new Int32Array(cap).fill(EMPTY);
    const ks = this.keySize;
    for (let b = 0; b < cap; b++) {
      const s = this.buckets[b] as number;
      if (s < 0) continue;
      let nb = this.hash(this.keys, s * ks) & this.mask;
      while ((buckets[nb] as number) !== EMPTY) nb = (nb + 1) & this.mask;
      buckets[nb] = s;
      this.slotBucket[s] = nb;
    }
    this.buckets = buckets;
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
