// The scalar domain is written to allocate as few BigInts as it can (each BigInt operation
// allocates, and bound normalization is the verifier's hot path). These properties pin it to the
// plain formulas it replaced (test/reference/): every result must be exactly the same, bottom
// included, on random inputs biased to the edges (0, ±1, 2^31, 2^32, 2^63, 2^64 - 1), also on
// inputs whose bounds are out of order or outside their range.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as ref from '../test/reference/scalar.js';
import * as refT from '../test/reference/tnum.js';
import {
  aluView,
  fromView,
  normalize,
  refineCompare,
  type Scalar,
  signExtend,
  toSigned,
  truncate,
  type View,
  viewOf,
  withView,
} from './scalar.js';
import {
  type Tnum,
  tnumAdd,
  tnumAnd,
  tnumArsh,
  tnumMul,
  tnumOr,
  tnumRange,
  tnumRsh,
  tnumLsh,
  tnumSub,
  tnumXor,
  U32,
  U64,
} from './tnum.js';

const EDGES = [0n, 1n, 2n, 0x7fn, 0xffn, (1n << 31n) - 1n, 1n << 31n, U32 - 1n, U32, 1n << 32n, (1n << 32n) + 1n, (1n << 63n) - 1n, 1n << 63n, (1n << 63n) + 1n, U64 - 1n, U64];
/** A value in [0, 2^64): an edge, an edge ± a little, small, or anything. */
const u64 = fc.oneof(
  fc.constantFrom(...EDGES),
  fc.tuple(fc.constantFrom(...EDGES), fc.integer({ min: -3, max: 3 })).map(([e, d]) => BigInt.asUintN(64, e + BigInt(d))),
  fc.bigInt({ min: 0n, max: 300n }),
  fc.bigInt({ min: 0n, max: U32 }),
  fc.bigInt({ min: 0n, max: U64 }),
);
/** A mask: all ones, the low 32 bits, a run of low bits, or random bits. */
const mask64 = fc.oneof(
  fc.constantFrom(0n, U64, U32, 0xffn, 1n << 63n, 1n << 31n),
  fc.integer({ min: 0, max: 64 }).map((k) => (1n << BigInt(k)) - 1n),
  fc.tuple(fc.integer({ min: 0, max: 64 }), fc.integer({ min: 0, max: 64 })).map(([a, b]) => ((1n << BigInt(Math.max(a, b))) - 1n) ^ ((1n << BigInt(Math.min(a, b))) - 1n)),
  fc.bigInt({ min: 0n, max: U64 }),
);
const tnum = (w: 32 | 64) =>
  fc.tuple(u64, mask64).map(([v, mk]): Tnum => {
    const m = w === 64 ? U64 : U32;
    const mask = mk & m;
    return { value: v & m & ~mask, mask };
  });
const ordered = (a: bigint, b: bigint): [bigint, bigint] => (a <= b ? [a, b] : [b, a]);

/** Raw (not normalized) bounds of one width: mostly ordered, sometimes not; rarely outside the range. */
const rawView = (w: 32 | 64) =>
  fc.tuple(tnum(w), u64, u64, u64, u64, fc.integer({ min: 0, max: 9 })).map(([t, a, b, c, d, how]): View => {
    const m = w === 64 ? U64 : U32;
    const [umin, umax] = how === 0 ? [a & m, b & m] : ordered(a & m, b & m);
    const [smin, smax] = how === 1 ? [toSigned(c, w), toSigned(d, w)] : ordered(toSigned(c, w), toSigned(d, w));
    if (how === 2) return { w, t, umin: umin - 1n, umax: umax + 1n, smin: smin - 1n, smax: smax + 1n };
    if (how >= 6) return { w, t, umin: 0n, umax: m, smin: -(m + 1n) / 2n, smax: m / 2n };
    return { w, t, umin, umax, smin, smax };
  });
const rawScalar = fc.tuple(rawView(64), rawView(32), fc.boolean()).map(([v64, v32, agree]): Scalar => {
  // half the time the 64-bit tnum's low half is the 32-bit one, as in real scalars
  const t = agree ? { value: (v64.t.value & ~U32) | v32.t.value, mask: (v64.t.mask & ~U32 & U64) | v32.t.mask } : v64.t;
  return { t, umin: v64.umin, umax: v64.umax, smin: v64.smin, smax: v64.smax, u32min: v32.umin, u32max: v32.umax, s32min: v32.smin, s32max: v32.smax };
});
/** A consistent scalar (normalized by the reference), or a constant. */
const scalar = fc.oneof(
  rawScalar.map((s) => ref.normalize(s) ?? ref.SCALAR_UNKNOWN),
  u64.map((v) => ref.scalarConst(v)),
);

describe('scalar domain = reference formulas', () => {
  it('normalize (bounds sync), bottom included', () => {
    fc.assert(
      fc.property(rawScalar, (s) => {
        expect(normalize(s)).toEqual(ref.normalize(s));
      }),
      { numRuns: 20_000 },
    );
  });

  it('fromView and withView of raw views', () => {
    const anyView = fc.constantFrom(32, 64).chain((w) => rawView(w as 32 | 64));
    fc.assert(
      fc.property(scalar, anyView, (s, v) => {
        expect(fromView(v)).toEqual(ref.fromView(v));
        expect(withView(s, v)).toEqual(ref.withView(s, v));
      }),
      { numRuns: 10_000 },
    );
  });

  // add sub mul div or and lsh rsh neg mod xor arsh (BPF_ALU op numbers; neg is sub from 0)
  const OPS = [0x0, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0xa, 0xc];
  for (const w of [64, 32] as const) {
    it(`ALU results (${w}-bit): add, sub, mul, div, mod, neg, and, or, xor, shifts`, () => {
      fc.assert(
        fc.property(fc.constantFrom(...OPS), scalar, scalar, fc.integer({ min: 0, max: 70 }), fc.boolean(), (op, a, b, k, shiftConst) => {
          if (op === 0x8) {
            // neg: 0 - a
            const zero = ref.scalarConst(0n);
            expect(fromView(aluView(0x1, viewOf(zero, w), viewOf(a, w)))).toEqual(ref.fromView(ref.aluView(0x1, ref.viewOf(zero, w), ref.viewOf(a, w))));
            return;
          }
          // shifts mostly by a constant amount (what the bounds logic tracks)
          const bb = (op === 0x6 || op === 0x7 || op === 0xc) && shiftConst ? ref.scalarConst(BigInt(k % w)) : b;
          const got = aluView(op, viewOf(a, w), viewOf(bb, w));
          const want = ref.aluView(op, ref.viewOf(a, w), ref.viewOf(bb, w));
          expect(got).toEqual(want);
          expect(fromView(got)).toEqual(ref.fromView(want));
        }),
        { numRuns: 6000 },
      );
    });

    it(`branch refinement (${w}-bit), both outcomes`, () => {
      fc.assert(
        fc.property(fc.constantFrom(0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0xa, 0xb, 0xc, 0xd), scalar, scalar, fc.boolean(), (op, a, b, outcome) => {
          expect(refineCompare(op, viewOf(a, w), viewOf(b, w), outcome)).toEqual(ref.refineCompare(op, ref.viewOf(a, w), ref.viewOf(b, w), outcome));
        }),
        { numRuns: 6000 },
      );
    });
  }

  it('a constant operand is never narrowed by a possible branch (verify skips refining immediates)', () => {
    fc.assert(
      fc.property(fc.constantFrom(0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0xa, 0xb, 0xc, 0xd), fc.constantFrom(32, 64) as fc.Arbitrary<32 | 64>, scalar, u64, fc.boolean(), (op, w, a, c, outcome) => {
        const k = ref.scalarConst(w === 32 ? c & U32 : c);
        const r = refineCompare(op, viewOf(a, w), viewOf(k, w), outcome);
        if (r) expect(withView(k, r[1])).toEqual(k);
      }),
      { numRuns: 20_000 },
    );
  });

  it('truncate and sign extension', () => {
    fc.assert(
      fc.property(scalar, fc.constantFrom(1, 2, 4, 8), (s, bytes) => {
        expect(truncate(s, bytes)).toEqual(ref.truncate(s, bytes));
        if (bytes < 8) expect(signExtend(s, (bytes * 8) as 8 | 16 | 32)).toEqual(ref.signExtend(s, (bytes * 8) as 8 | 16 | 32));
      }),
      { numRuns: 4000 },
    );
  });

  it('tnum operations', () => {
    fc.assert(
      fc.property(tnum(64), tnum(64), fc.integer({ min: 0, max: 63 }), fc.constantFrom(32, 64) as fc.Arbitrary<32 | 64>, u64, u64, (a, b, k, w, x, y) => {
        expect(tnumAdd(a, b)).toEqual(refT.tnumAdd(a, b));
        expect(tnumSub(a, b)).toEqual(refT.tnumSub(a, b));
        expect(tnumMul(a, b)).toEqual(refT.tnumMul(a, b));
        expect(tnumAnd(a, b)).toEqual(refT.tnumAnd(a, b));
        expect(tnumOr(a, b)).toEqual(refT.tnumOr(a, b));
        expect(tnumXor(a, b)).toEqual(refT.tnumXor(a, b));
        expect(tnumLsh(a, k)).toEqual(refT.tnumLsh(a, k));
        expect(tnumRsh(a, k)).toEqual(refT.tnumRsh(a, k));
        const a32 = { value: a.value & U32, mask: a.mask & U32 };
        expect(tnumArsh(w === 64 ? a : a32, k % w, w)).toEqual(refT.tnumArsh(w === 64 ? a : a32, k % w, w));
        const [lo, hi] = ordered(x, y);
        expect(tnumRange(lo, hi)).toEqual(refT.tnumRange(lo, hi));
      }),
      { numRuns: 10_000 },
    );
  });
});
