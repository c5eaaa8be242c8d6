import { describe, expect, it } from 'vitest';
import { HashTable } from './hash-table.js';

// find() takes an unrolled path for 4-byte keys and the loop for every other size: both must
// find exactly the keys present (collisions, tombstones, a key read at an offset of a buffer)
describe('HashTable.find', () => {
  it.each([1, 3, 4, 5, 8])('finds the present keys and only them, key size %i', (keySize) => {
    const t = new HashTable(keySize, 64);
    const key = (n: number) => Uint8Array.from({ length: keySize }, (_, i) => (n >> (8 * (i % 4))) & 0xff);
    const slots = new Map<number, number>();
    for (let n = 0; n < 64; n++) slots.set(n, t.insert(key(n), 0));
    for (let n = 0; n < 64; n += 3) {
      t.remove(slots.get(n)!);
      slots.delete(n);
    }
    // 0..199 are distinct keys at every size (one byte holds them): 64..199 were never inserted
    for (let n = 0; n < 200; n++) {
      // the key at offset 5 of a larger buffer, as a program's stack holds it
      const buf = new Uint8Array(keySize + 9);
      buf.set(key(n), 5);
      expect(t.find(buf, 5)).toBe(slots.get(n) ?? -1);
    }
  });
});
