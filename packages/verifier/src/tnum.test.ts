// Soundness of tnum operations: for any members x of a and y of b, op(x, y) is a member of op(a, b).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Tnum,
  tnumAdd,
  tnumAnd,
  tnumArsh,
  tnumIn,
  tnumLsh,
  tnumMul,
  tnumOr,
  tnumRange,
  tnumRsh,
  tnumSub,
  tnumXor,
  U64,
} from './tnum.js';

const u64 = fc.bigInt({ min: 0n, max: U64 });
/** A tnum and one of its members. */
const member = fc.tuple(u64, u64, u64).map(([v, m, pick]): [Tnum, bigint] => {
  const mask = m & (pick % 3n === 0n ? 0xffn : U64); // many narrow tnums too
  const value = v & ~mask & U64;
  return [{ value, mask }, value | (pick & mask)];
});
const isIn = (t: Tnum, x: bigint) => tnumIn(t, { value: x & U64, mask: 0n });

describe('tnum soundness', () => {
  it.each([
    ['add', tnumAdd, (x: bigint, y: bigint) => (x + y) & U64],
    ['sub', tnumSub, (x: bigint, y: bigint) => (x - y) & U64],
    ['mul', tnumMul, (x: bigint, y: bigint) => (x * y) & U64],
    ['and', tnumAnd, (x: bigint, y: bigint) => x & y],
    ['or', tnumOr, (x: bigint, y: bigint) => x | y],
    ['xor', tnumXor, (x: bigint, y: bigint) => x ^ y],
  ] as const)('%s', (_, op, concrete) => {
    fc.assert(
      fc.property(member, member, ([a, x], [b, y]) => {
        expect(isIn(op(a, b), concrete(x, y))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('mul by a constant (either side)', () => {
    fc.assert(
      fc.property(member, u64, fc.boolean(), ([a, x], c, swap) => {
        const k: Tnum = { value: c, mask: 0n };
        const t = swap ? tnumMul(k, a) : tnumMul(a, k);
        expect(isIn(t, (x * c) & U64)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('shifts', () => {
    fc.assert(
      fc.property(member, fc.integer({ min: 0, max: 63 }), ([a, x], k) => {
        expect(isIn(tnumLsh(a, k), (x << BigInt(k)) & U64)).toBe(true);
        expect(isIn(tnumRsh(a, k), x >> BigInt(k))).toBe(true);
        expect(isIn(tnumArsh(a, k, 64), BigInt.asUintN(64, BigInt.asIntN(64, x) >> BigInt(k)))).toBe(true);
      }),
    );
  });

  it('range holds its bounds and everything between', () => {
    fc.assert(
      fc.property(u64, u64, u64, (p, q, r) => {
        const [lo, hi] = p < q ? [p, q] : [q, p];
        const t = tnumRange(lo, hi);
        const x = lo + (hi > lo ? r % (hi - lo + 1n) : 0n);
        expect(isIn(t, lo) && isIn(t, hi) && isIn(t, x)).toBe(true);
      }),
    );
  });
});
