// Soundness of the scalar domain: concrete results stay inside the abstract ones, branch
// refinement keeps every pair of values that satisfies the condition, and exact cases.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Scalar,
  type View,
  aluView,
  fromView,
  normalize,
  refineCompare,
  SCALAR_UNKNOWN,
  scalarConst,
  signExtend,
  toSigned,
  truncate,
  viewOf,
} from './scalar.js';
import { U32, U64 } from './tnum.js';

const u64 = fc.bigInt({ min: 0n, max: U64 });
const small = fc.bigInt({ min: 0n, max: 300n });
const signedBounds = (a: bigint, b: bigint) => (a <= b ? { smin: a, smax: b } : { smin: b, smax: a });
/** An abstract scalar from an unsigned or signed range, and a member of it. */
const member = fc.tuple(u64, small, u64, fc.boolean(), fc.boolean()).map(([base, width, pick, signed, narrow]): [Scalar, bigint] => {
  const lo = narrow ? base & 0xffffn : base;
  const hi = lo + width > U64 ? U64 : lo + width;
  const s = signed
    ? normalize({ ...SCALAR_UNKNOWN, ...signedBounds(toSigned(lo, 64), toSigned(hi, 64)) })
    : normalize({ ...SCALAR_UNKNOWN, umin: lo, umax: hi });
  const x = lo + (hi > lo ? pick % (hi - lo + 1n) : 0n);
  return [s!, x];
});

function contains(s: Scalar, x: bigint): boolean {
  const lo = x & U32;
  return (
    s.umin <= x &&
    x <= s.umax &&
    s.smin <= toSigned(x, 64) &&
    toSigned(x, 64) <= s.smax &&
    s.u32min <= lo &&
    lo <= s.u32max &&
    s.s32min <= toSigned(lo, 32) &&
    toSigned(lo, 32) <= s.s32max &&
    (x & ~s.t.mask & U64) === s.t.value
  );
}
const viewContains = (v: View, x: bigint) => {
  const m = v.w === 64 ? U64 : U32;
  const u = x & m;
  return v.umin <= u && u <= v.umax && v.smin <= toSigned(u, v.w) && toSigned(u, v.w) <= v.smax && (u & ~v.t.mask & m) === v.t.value;
};

const OPS: [string, number, (x: bigint, y: bigint, m: bigint, w: 32 | 64) => bigint | null][] = [
  ['add', 0x0, (x, y, m) => (x + y) & m],
  ['sub', 0x1, (x, y, m) => (x - y) & m],
  ['mul', 0x2, (x, y, m) => (x * y) & m],
  ['or', 0x4, (x, y) => x | y],
  ['and', 0x5, (x, y) => x & y],
  ['xor', 0xa, (x, y) => x ^ y],
  ['lsh', 0x6, (x, y, m, w) => (y < BigInt(w) ? (x << y) & m : null)],
  ['rsh', 0x7, (x, y, _m, w) => (y < BigInt(w) ? x >> y : null)],
  ['arsh', 0xc, (x, y, m, w) => (y < BigInt(w) ? BigInt.asUintN(w, toSigned(x, w) >> y) & m : null)],
];

describe('scalar ALU soundness', () => {
  for (const w of [64, 32] as const) {
    it.each(OPS)(`%s (${w}-bit)`, (_, op, concrete) => {
      fc.assert(
        fc.property(member, member, ([a, x], [b, y]) => {
          const m = w === 64 ? U64 : U32;
          const want = concrete(x & m, y & m, m, w);
          if (want === null) return;
          expect(contains(fromView(aluView(op, viewOf(a, w), viewOf(b, w))), want)).toBe(true);
        }),
        { numRuns: 1500 },
      );
    });
  }

  it('truncate and sign extension', () => {
    fc.assert(
      fc.property(member, fc.constantFrom(1, 2, 4), ([a, x], bytes) => {
        const bits = BigInt(bytes * 8);
        const low = x & ((1n << bits) - 1n);
        expect(contains(truncate(a, bytes), low)).toBe(true);
        expect(contains(signExtend(a, (bytes * 8) as 8 | 16 | 32), BigInt.asUintN(64, BigInt.asIntN(Number(bits), low)))).toBe(true);
      }),
    );
  });
});

const CONDS: [string, number, (x: bigint, y: bigint, w: 32 | 64) => boolean][] = [
  ['==', 0x1, (x, y) => x === y],
  ['!=', 0x5, (x, y) => x !== y],
  ['>', 0x2, (x, y) => x > y],
  ['>=', 0x3, (x, y) => x >= y],
  ['<', 0xa, (x, y) => x < y],
  ['<=', 0xb, (x, y) => x <= y],
  ['s>', 0x6, (x, y, w) => toSigned(x, w) > toSigned(y, w)],
  ['s>=', 0x7, (x, y, w) => toSigned(x, w) >= toSigned(y, w)],
  ['s<', 0xc, (x, y, w) => toSigned(x, w) < toSigned(y, w)],
  ['s<=', 0xd, (x, y, w) => toSigned(x, w) <= toSigned(y, w)],
  ['&', 0x4, (x, y) => (x & y) !== 0n],
];

describe('branch refinement keeps every satisfying pair', () => {
  for (const w of [64, 32] as const) {
    it.each(CONDS)(`%s (${w}-bit)`, (_, op, holds) => {
      fc.assert(
        fc.property(member, member, fc.boolean(), ([a, x], [b, y], sameValue) => {
          const m = w === 64 ? U64 : U32;
          if (sameValue) [b, y] = [a, x];
          const outcome = holds(x & m, y & m, w);
          const r = refineCompare(op, viewOf(a, w), viewOf(b, w), outcome);
          expect(r).not.toBeNull();
          expect(viewContains(r![0], x) && viewContains(r![1], y)).toBe(true);
        }),
        { numRuns: 1500 },
      );
    });
  }
});

describe('exact values', () => {
  it.each([
    ['const', scalarConst(-1n), { umin: U64, smax: -1n, u32max: U32, s32min: -1n }],
    ['u8 load', truncate(SCALAR_UNKNOWN, 1), { umin: 0n, umax: 255n, smin: 0n, smax: 255n }],
    ['s8 load', signExtend(SCALAR_UNKNOWN, 8), { smin: -128n, smax: 127n, s32min: -128n, s32max: 127n }],
  ] as const)('%s', (_, s, want) => {
    expect(s).toMatchObject(want);
  });

  it('contradictory bounds are bottom', () => {
    expect(normalize({ ...SCALAR_UNKNOWN, umin: 10n, umax: 5n })).toBeNull();
    expect(refineCompare(0xa, viewOf(scalarConst(5n), 64), viewOf(scalarConst(5n), 64), true)).toBeNull();
  });
});
