import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextWriter } from './text-writer.js';

function written(f: (w: TextWriter) => void, initialBytes = 4): string {
  const w = new TextWriter(initialBytes);
  f(w);
  return w.take();
}

describe('TextWriter', () => {
  it.each([
    [0, '0'],
    [9, '9'],
    [10, '10'],
    [-1, '-1'],
    [2147483647, '2147483647'],
    [2147483648, '2147483648'],
    [-2147483648, '-2147483648'],
    [Number.MAX_SAFE_INTEGER, '9007199254740991'],
    [-Number.MAX_SAFE_INTEGER, '-9007199254740991'],
  ])('decimal(%s) is %s', (n, text) => {
    expect(written((w) => w.decimal(n))).toBe(text);
  });

  it.each([
    [0, 0, false, '0'],
    [0, 0xf, false, 'f'],
    [0, 0xdeadbeef, true, 'DEADBEEF'],
    [1, 0, false, '100000000'],
    [0x7fff, 0x8281a632, false, '7fff8281a632'],
    [0xffffffff, 0xffffffff, false, 'ffffffffffffffff'],
  ])('hex64(%s, %s) is %s', (hi, lo, upper, text) => {
    expect(written((w) => w.hex64(hi, lo, upper))).toBe(text);
  });

  it('writes numbers as String and toString(16) do, growing from a tiny buffer', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.nat({ max: 0xffffffff }), fc.nat({ max: 0xffffffff }), fc.integer({ min: 0, max: 999999 }), (n, hi, lo, us) => {
        const text = written((w) => {
          w.decimal(n);
          w.byte(32);
          w.hexNumber(Math.abs(n));
          w.byte(32);
          w.hex64(hi, lo);
          w.byte(32);
          w.decimalZeroPadded(us, 6);
        }, 1);
        const hex64 = hi === 0 ? lo.toString(16) : hi.toString(16) + lo.toString(16).padStart(8, '0');
        expect(text).toBe(`${n} ${Math.abs(n).toString(16)} ${hex64} ${String(us).padStart(6, '0')}`);
      }),
    );
  });

  it('round-trips any text, ASCII or not, and truncates back to a mark', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme' })), (parts) => {
        const w = new TextWriter(2);
        for (const p of parts) {
          w.text(p);
          const mark = w.length;
          w.text('discarded');
          w.truncate(mark);
        }
        expect(w.take()).toBe(parts.join(''));
        expect(w.length).toBe(0);
      }),
    );
  });
});
