// Scalar values as the kernel tracks them (`struct bpf_reg_state` of a SCALAR_VALUE): a tnum
// (`var_off`) plus unsigned and signed bounds for the full 64 bits and for the low 32 bits.
// Scalars are immutable; every operation returns a new one. `null` means bottom: no concrete
// value fits (a contradiction, used to find infeasible branches).

import {
  type Tnum,
  TNUM_UNKNOWN,
  tnumAdd,
  tnumAnd,
  tnumArsh,
  tnumCast,
  tnumDisjoint,
  tnumIn,
  tnumIntersect,
  tnumLsh,
  tnumMul,
  tnumOr,
  tnumRange,
  tnumRsh,
  tnumSub,
  tnumXor,
  U32,
  U64,
} from './tnum.js';

export interface Scalar {
  readonly t: Tnum;
  readonly umin: bigint;
  readonly umax: bigint;
  readonly smin: bigint;
  readonly smax: bigint;
  readonly u32min: bigint;
  readonly u32max: bigint;
  readonly s32min: bigint;
  readonly s32max: bigint;
}

/** The view of a scalar at one width (32 or 64 bits): what ALU ops and jumps work on. */
export interface View {
  readonly w: 32 | 64;
  readonly t: Tnum;
  readonly umin: bigint;
  readonly umax: bigint;
  readonly smin: bigint;
  readonly smax: bigint;
}

const S64_MIN = -(1n << 63n);
const S64_MAX = (1n << 63n) - 1n;
const S32_MIN = -(1n << 31n);
const S32_MAX = (1n << 31n) - 1n;
const TWO_64 = 1n << 64n;
const TWO_32 = 1n << 32n;

const maxU = (w: 32 | 64): bigint => (w === 64 ? U64 : U32);
const minS = (w: 32 | 64): bigint => (w === 64 ? S64_MIN : S32_MIN);
const maxS = (w: 32 | 64): bigint => (w === 64 ? S64_MAX : S32_MAX);

/** Two's complement reinterpretation of the low `w` bits. */
export function toSigned(x: bigint, w: 32 | 64): bigint {
  // already a non-negative value of the width: the common case, no BigInt allocated
  if (x >= 0n && x <= maxS(w)) return x;
  const m = maxU(w);
  x &= m;
  return x > maxS(w) ? x - m - 1n : x;
}
export const toUnsigned = (x: bigint, w: 32 | 64): bigint => (x >= 0n && x <= maxU(w) ? x : x & maxU(w));

const big = (a: bigint, b: bigint): bigint => (a > b ? a : b);
const small = (a: bigint, b: bigint): bigint => (a < b ? a : b);

export const SCALAR_UNKNOWN: Scalar = {
  t: TNUM_UNKNOWN,
  umin: 0n,
  umax: U64,
  smin: S64_MIN,
  smax: S64_MAX,
  u32min: 0n,
  u32max: U32,
  s32min: S32_MIN,
  s32max: S32_MAX,
};

export function scalarConst(v: bigint): Scalar {
  // the hot path of straight-line code and counted loops: each BigInt operation allocates, so
  // a small non-negative value (the common case) is used as it is for every bound
  if (v >= 0n && v <= S32_MAX) {
    return { t: { value: v, mask: 0n }, umin: v, umax: v, smin: v, smax: v, u32min: v, u32max: v, s32min: v, s32max: v };
  }
  const u = v & U64;
  const lo = u & U32;
  const s = u > S64_MAX ? u - TWO_64 : u;
  const s32 = lo > S32_MAX ? lo - TWO_32 : lo;
  return { t: { value: u, mask: 0n }, umin: u, umax: u, smin: s, smax: s, u32min: lo, u32max: lo, s32min: s32, s32max: s32 };
}

export const isConst = (s: Scalar): boolean => s.t.mask === 0n;
export const constValue = (s: Scalar): bigint => s.t.value;

/** Unsigned value in [min, max] (64-bit). */
export function scalarRange(min: bigint, max: bigint): Scalar {
  return normalize({ ...SCALAR_UNKNOWN, umin: min, umax: max }) ?? SCALAR_UNKNOWN;
}

/** Signed value in [min, max] (64-bit). */
export function scalarSignedRange(min: bigint, max: bigint): Scalar {
  return normalize({ ...SCALAR_UNKNOWN, smin: min, smax: max }) ?? SCALAR_UNKNOWN;
}

interface Bounds {
  t: Tnum;
  umin: bigint;
  umax: bigint;
  smin: bigint;
  smax: bigint;
}

const SIGN_64 = 1n << 63n;
const SIGN_32 = 1n << 31n;
/** Bits 32..63. */
const HIGH_32 = U64 ^ U32;

/**
 * Cross-derives tnum, unsigned and signed bounds of one width; false on contradiction. `b.t`
 * must lie inside the width. Every BigInt operation allocates, so each step is written with as
 * few of them as gives the same result as the plain formulas (`scalar.test.ts` checks this
 * against them): sign tests are comparisons with the sign bit, two's complement conversions a
 * single addition, and the tnum of the bounds is merged without building intermediate tnums.
 */
function syncWidth(b: Bounds, w: 32 | 64): boolean {
  if (w === 32) return syncWidth32(b);
  const sign = w === 64 ? SIGN_64 : SIGN_32;
  const two = w === 64 ? TWO_64 : TWO_32;
  const t = b.t;
  const tv = t.value;
  const tm = t.mask;
  const hi = tm === 0n ? tv : tv | tm;
  // tnum → unsigned (the tnum is inside the width: no mask needed)
  let umin = big(b.umin, tv);
  let umax = small(b.umax, hi);
  // tnum → signed: with the sign bit unknown, [value | sign, (value | mask) & ~sign] read signed
  let smin = b.smin;
  let smax = b.smax;
  let lo: bigint;
  let up: bigint;
  if (tm >= sign) {
    lo = tv - sign;
    up = hi - sign;
  } else if (tv >= sign) {
    lo = tv - two;
    up = hi - two;
  } else {
    lo = tv;
    up = hi;
  }
  if (lo > smin) smin = lo;
  if (up < smax) smax = up;
  if (umin > umax || smin > smax) return false;
  // from here every bound is inside its range
  // unsigned → signed when the range does not cross the sign boundary
  const uminNeg = umin >= sign;
  if (uminNeg === umax >= sign) {
    lo = uminNeg ? umin - two : umin;
    up = uminNeg ? umax - two : umax;
    if (lo > smin) smin = lo;
    if (up < smax) smax = up;
  }
  // signed → unsigned when the range has one sign
  if (smin >= 0n) {
    if (smin > umin) umin = smin;
    if (smax < umax) umax = smax;
  } else if (smax < 0n) {
    lo = smin + two;
    up = smax + two;
    if (lo > umin) umin = lo;
    if (up < umax) umax = up;
  }
  if (umin > umax || smin > smax) return false;
  // bounds → tnum: [umin, umax] is the tnum (umin's common prefix with umax; mask below it). The
  // signed range read unsigned holds [umin, umax] when it has one sign (synced just above), so
  // its tnum holds this one and adds nothing.
  if (umin !== 0n || umax !== (w === 64 ? U64 : U32)) {
    const r = tnumRange(umin, umax);
    const rv = r.value;
    const merged = rv | tv;
    // disjoint: a bit known in both with different values (the range knows every bit above its
    // mask, a contiguous run of low bits; the tnum knows every bit outside its mask): a known 0 of
    // the tnum where the range has 1, or a 1 of the tnum above the range's mask where it has 0
    if ((rv & hi) !== rv || (merged ^ rv) > r.mask) return false;
    // intersection: the range's unknown low bits where the tnum does not know them either;
    // value bits need no clearing (both sides have 0 under the merged mask)
    const mask = r.mask & tm;
    if (mask !== tm || merged !== tv) b.t = { value: merged, mask };
  }
  b.umin = umin;
  b.umax = umax;
  b.smin = smin;
  b.smax = smax;
  return true;
}

/**
 * `syncWidth` at 32 bits in float64 arithmetic: every value of the width is exact as a double, so
 * the same steps run without allocating, and BigInts are built only for the bounds that change.
 * Out-of-range inputs keep their order when converted (Number() is monotone), which is all the
 * first comparisons need; from the first check on every bound is inside the width.
 */
function syncWidth32(b: Bounds): boolean {
  const tv = Number(b.t.value);
  const tm = Number(b.t.mask);
  const hi = (tv | tm) >>> 0;
  const umin0 = Number(b.umin);
  const umax0 = Number(b.umax);
  const smin0 = Number(b.smin);
  const smax0 = Number(b.smax);
  // tnum → unsigned, tnum → signed
  let umin = Math.max(umin0, tv);
  let umax = Math.min(umax0, hi);
  let smin = smin0;
  let smax = smax0;
  let lo: number;
  let up: number;
  if (tm >= 0x80000000) {
    lo = tv - 0x80000000;
    up = hi - 0x80000000;
  } else if (tv >= 0x80000000) {
    lo = tv - 0x100000000;
    up = hi - 0x100000000;
  } else {
    lo = tv;
    up = hi;
  }
  if (lo > smin) smin = lo;
  if (up < smax) smax = up;
  if (umin > umax || smin > smax) return false;
  // unsigned → signed when the range does not cross the sign boundary
  const uminNeg = umin >= 0x80000000;
  if (uminNeg === umax >= 0x80000000) {
    lo = uminNeg ? umin - 0x100000000 : umin;
    up = uminNeg ? umax - 0x100000000 : umax;
    if (lo > smin) smin = lo;
    if (up < smax) smax = up;
  }
  // signed → unsigned when the range has one sign
  if (smin >= 0) {
    if (smin > umin) umin = smin;
    if (smax < umax) umax = smax;
  } else if (smax < 0) {
    lo = smin + 0x100000000;
    up = smax + 0x100000000;
    if (lo > umin) umin = lo;
    if (up < umax) umax = up;
  }
  if (umin > umax || smin > smax) return false;
  // bounds → tnum (see syncWidth)
  if (umin !== 0 || umax !== 0xffffffff) {
    let rv = umin;
    let rm = 0;
    if (umin !== umax) {
      const bits = 32 - Math.clz32(umin ^ umax);
      rm = 2 ** bits - 1;
      rv = (umin & ~rm) >>> 0;
    }
    const merged = (rv | tv) >>> 0;
    if (((rv & hi) >>> 0) !== rv || ((merged ^ rv) >>> 0) > rm) return false;
    const mask = (rm & tm) >>> 0;
    if (mask !== tm || merged !== tv) b.t = { value: BigInt(merged), mask: BigInt(mask) };
  }
  if (umin !== umin0) b.umin = BigInt(umin);
  if (umax !== umax0) b.umax = BigInt(umax);
  if (smin !== smin0) b.smin = BigInt(smin);
  if (smax !== smax0) b.smax = BigInt(smax);
  return true;
}

/** Makes all bounds of a scalar consistent with each other; null when they contradict. */
export function normalize(s: Scalar): Scalar | null {
  if (s.t.mask === 0n) {
    const v = s.t.value;
    const c = scalarConst(v);
    const fits =
      s.umin <= v &&
      v <= s.umax &&
      s.smin <= c.smin &&
      c.smin <= s.smax &&
      s.u32min <= c.u32min &&
      c.u32min <= s.u32max &&
      s.s32min <= c.s32min &&
      c.s32min <= s.s32max;
    return fits ? c : null;
  }
  const b64: Bounds = { t: s.t, umin: s.umin, umax: s.umax, smin: s.smin, smax: s.smax };
  if (!syncWidth(b64, 64)) return null;
  const b32: Bounds = {
    t: tnumCast(b64.t, 4),
    umin: s.u32min,
    umax: s.u32max,
    smin: s.s32min,
    smax: s.s32max,
  };
  // 64 → 32: same upper half (no bit above 31 differs) means the low halves form a range
  const sameHighU = (b64.umin ^ b64.umax) <= U32;
  if (sameHighU) {
    const lo = b64.umin & U32;
    const up = b64.umax & U32;
    if (lo > b32.umin) b32.umin = lo;
    if (up < b32.umax) b32.umax = up;
  }
  // (BigInt xor of two negatives is non-negative, of mixed signs negative)
  const sx = b64.smin ^ b64.smax;
  const sameHighS = sx >= 0n && sx <= U32;
  if (sameHighS) {
    const lo = b64.smin & U32;
    const up = b64.smax & U32;
    if (lo > b32.umin) b32.umin = lo;
    if (up < b32.umax) b32.umax = up;
  }
  if (b64.smin >= S32_MIN && b64.smax <= S32_MAX) {
    // the value fits in 32 signed bits: the low half read as s32 is the value itself
    if (b64.smin > b32.smin) b32.smin = b64.smin;
    if (b64.smax < b32.smax) b32.smax = b64.smax;
  }
  // the 32-bit tnum starts as the low half of the synced 64-bit one (intersecting the low half
  // with itself adds nothing)
  if (!syncWidth(b32, 32)) return null;
  // 32 → 64
  if (sameHighU) {
    const hi = b64.umin & HIGH_32;
    const lo = hi | b32.umin;
    const up = hi | b32.umax;
    if (lo > b64.umin) b64.umin = lo;
    if (up < b64.umax) b64.umax = up;
  }
  if (sameHighS) {
    const hi = b64.smin & ~U32;
    const lo = hi + b32.umin;
    const up = hi + b32.umax;
    if (lo > b64.smin) b64.smin = lo;
    if (up < b64.smax) b64.smax = up;
  }
  const t32 = b32.t;
  const t64 = b64.t;
  if ((t64.value & U32) !== t32.value || (t64.mask & U32) !== t32.mask) {
    b64.t = { value: (t64.value & HIGH_32) | t32.value, mask: (t64.mask & HIGH_32) | t32.mask };
  }
  if (!syncWidth(b64, 64)) return null;
  return {
    t: b64.t,
    umin: b64.umin,
    umax: b64.umax,
    smin: b64.smin,
    smax: b64.smax,
    u32min: b32.umin,
    u32max: b32.umax,
    s32min: b32.smin,
    s32max: b32.smax,
  };
}

export function viewOf(s: Scalar, w: 32 | 64): View {
  if (w === 64) return { w, t: s.t, umin: s.umin, umax: s.umax, smin: s.smin, smax: s.smax };
  return { w, t: tnumCast(s.t, 4), umin: s.u32min, umax: s.u32max, smin: s.s32min, smax: s.s32max };
}

const unknownView = (w: 32 | 64, t: Tnum = TNUM_UNKNOWN): View => ({
  w,
  t: cutTnum(maxU(w), t),
  umin: 0n,
  umax: maxU(w),
  smin: minS(w),
  smax: maxS(w),
});

/** The 64-bit scalar of an ALU result view: 64-bit views as they are, 32-bit ones zero-extended. */
export function fromView(v: View): Scalar {
  // nothing known (div, mod, shifts by unknown amounts): the result needs no normalizing
  if (v.w === 64) {
    if (v.t.mask === U64 && v.umin === 0n && v.umax === U64 && v.smin === S64_MIN && v.smax === S64_MAX) return SCALAR_UNKNOWN;
    return (
      normalize({
        ...SCALAR_UNKNOWN,
        t: v.t,
        umin: v.umin,
        umax: v.umax,
        smin: v.smin,
        smax: v.smax,
      }) ?? SCALAR_UNKNOWN
    );
  }
  if (v.t.mask === U32 && v.umin === 0n && v.umax === U32 && v.smin === S32_MIN && v.smax === S32_MAX) return SCALAR_U32;
  const b: Bounds = { t: v.t, umin: v.umin, umax: v.umax, smin: v.smin, smax: v.smax };
  if (!syncWidth(b, 32)) return scalarRange(0n, U32);
  return (
    normalize({
      t: b.t,
      umin: b.umin,
      umax: b.umax,
      smin: b.umin,
      smax: b.umax,
      u32min: b.umin,
      u32max: b.umax,
      s32min: b.smin,
      s32max: b.smax,
    }) ?? scalarRange(0n, U32)
  );
}

/** Any zero-extended 32-bit value. */
const SCALAR_U32 = scalarRange(0n, U32);

/** Replaces the view at width `v.w` inside `s` (a refined branch), keeping what else is known. */
export function withView(s: Scalar, v: View): Scalar | null {
  if (v.w === 64) {
    if (tnumDisjoint(s.t, v.t)) return null;
    return normalize({
      ...s,
      t: tnumIntersect(s.t, v.t),
      umin: big(s.umin, v.umin),
      umax: small(s.umax, v.umax),
      smin: big(s.smin, v.smin),
      smax: small(s.smax, v.smax),
    });
  }
  const low = tnumCast(s.t, 4);
  if (tnumDisjoint(low, v.t)) return null;
  const lt = tnumIntersect(low, v.t);
  return normalize({
    ...s,
    t: { value: (s.t.value & ~U32 & U64) | lt.value, mask: (s.t.mask & ~U32 & U64) | lt.mask },
    u32min: big(s.u32min, v.umin),
    u32max: small(s.u32max, v.umax),
    s32min: big(s.s32min, v.smin),
    s32max: small(s.s32max, v.smax),
  });
}

const isConstView = (v: View): boolean => v.t.mask === 0n;

/** The low bits of `t` under the all-ones mask `m` (itself when it has no other bit). */
function cutTnum(m: bigint, t: Tnum): Tnum {
  if (t.value <= m && t.mask <= m) return t;
  return { value: t.value & m, mask: t.mask & m };
}

/** Binary ALU operations the bounds logic understands (`BPF_ADD` …), by their `aluOp` number. */
export function aluView(op: number, a: View, b: View): View {
  const w = a.w;
  const m = maxU(w);
  switch (op) {
    case 0x0: {
      // add
      const t = cutTnum(m, tnumAdd(a.t, b.t));
      let umin = a.umin + b.umin;
      let umax = a.umax + b.umax;
      if (umax > m) {
        if (umin > m) {
          umin -= m + 1n;
          umax -= m + 1n;
        } else {
          umin = 0n;
          umax = m;
        }
      }
      let smin = a.smin + b.smin;
      let smax = a.smax + b.smax;
      if (smin < minS(w) || smax > maxS(w)) {
        smin = minS(w);
        smax = maxS(w);
      }
      return { w, t, umin, umax, smin, smax };
    }
    case 0x1: {
      // sub
      const t = cutTnum(m, tnumSub(a.t, b.t));
      let umin = 0n;
      let umax = m;
      if (a.umin >= b.umax) {
        umin = a.umin - b.umax;
        umax = a.umax - b.umin;
      } else if (a.umax < b.umin) {
        umin = a.umin - b.umax + m + 1n;
        umax = a.umax - b.umin + m + 1n;
      }
      let smin = a.smin - b.smax;
      let smax = a.smax - b.smin;
      if (smin < minS(w) || smax > maxS(w)) {
        smin = minS(w);
        smax = maxS(w);
      }
      return { w, t, umin, umax, smin, smax };
    }
    case 0x2: {
      // mul
      const t = cutTnum(m, tnumMul(a.t, b.t));
      const r = unknownView(w, t);
      if (a.umax * b.umax <= m) return { ...r, umin: a.umin * b.umin, umax: a.umax * b.umax };
      return r;
    }
    case 0x5: {
      // and
      const t = cutTnum(m, tnumAnd(a.t, b.t));
      const r = { ...unknownView(w, t), umin: t.value, umax: small(a.umax, b.umax) };
      if (a.smin >= 0n || b.smin >= 0n) return { ...r, smin: 0n, smax: small(a.smin >= 0n ? a.smax : maxS(w), b.smin >= 0n ? b.smax : maxS(w)) };
      return r;
    }
    case 0x4: {
      // or
      const t = cutTnum(m, tnumOr(a.t, b.t));
      return { ...unknownView(w, t), umin: big(a.umin, b.umin), umax: t.value | t.mask };
    }
    case 0xa: {
      // xor
      const t = cutTnum(m, tnumXor(a.t, b.t));
      return { ...unknownView(w, t), umin: t.value, umax: t.value | t.mask };
    }
    case 0x6:
    case 0x7:
    case 0xc: {
      // shifts; the caller rejects constant amounts >= width
      if (!isConstView(b) || b.t.value >= BigInt(w)) return unknownView(w);
      const k = Number(b.t.value);
      if (op === 0x6) {
        const t = cutTnum(m, tnumLsh(a.t, k));
        if (a.umax << BigInt(k) <= m) return { ...unknownView(w, t), umin: a.umin << BigInt(k), umax: a.umax << BigInt(k) };
        return unknownView(w, t);
      }
      if (op === 0x7) {
        const t = tnumRsh(a.t, k);
        return { ...unknownView(w, t), umin: a.umin >> BigInt(k), umax: a.umax >> BigInt(k) };
      }
      const t = tnumArsh(a.t, k, w);
      return { ...unknownView(w, t), smin: a.smin >> BigInt(k), smax: a.smax >> BigInt(k) };
    }
    default:
      // div, mod and anything else: the kernel tracks no bounds
      return unknownView(w);
  }
}

/** Sign-extends the low `bits` bits of a 64-bit scalar to 64 bits (`movsx`, `ldxs`). */
export function signExtend(s: Scalar, bits: 8 | 16 | 32): Scalar {
  const low = truncate(s, bits / 8);
  const half = 1n << BigInt(bits - 1);
  if (low.umax < half) return low;
  const ext = U64 ^ ((half << 1n) - 1n);
  if (low.umin >= half) {
    return (
      normalize({
        ...SCALAR_UNKNOWN,
        t: { value: low.t.value | ext, mask: low.t.mask },
        smin: low.umin - (half << 1n),
        smax: low.umax - (half << 1n),
      }) ?? scalarSignedRange(-half, -1n)
    );
  }
  return scalarSignedRange(-half, half - 1n);
}

/** Keeps the low `bytes` bytes (a narrow load or truncation): zero-extended. */
export function truncate(s: Scalar, bytes: number): Scalar {
  if (bytes >= 8) return s;
  const m = (1n << BigInt(bytes * 8)) - 1n;
  const t = tnumCast(s.t, bytes);
  const sameHigh = s.umin >> BigInt(bytes * 8) === s.umax >> BigInt(bytes * 8);
  return normalize({
    ...SCALAR_UNKNOWN,
    t,
    umin: sameHigh ? s.umin & m : 0n,
    umax: sameHigh ? s.umax & m : m,
  }) ?? scalarRange(0n, m);
}

/** True when every value of `cur` is a value of `old` (bounds and tnum). */
export function scalarCovers(old: Scalar, cur: Scalar): boolean {
  return (
    old.umin <= cur.umin &&
    cur.umax <= old.umax &&
    old.smin <= cur.smin &&
    cur.smax <= old.smax &&
    old.u32min <= cur.u32min &&
    cur.u32max <= old.u32max &&
    old.s32min <= cur.s32min &&
    cur.s32max <= old.s32max &&
    tnumIn(old.t, cur.t)
  );
}

export function scalarEquals(a: Scalar, b: Scalar): boolean {
  return (
    a.t.value === b.t.value &&
    a.t.mask === b.t.mask &&
    a.umin === b.umin &&
    a.umax === b.umax &&
    a.smin === b.smin &&
    a.smax === b.smax &&
    a.u32min === b.u32min &&
    a.u32max === b.u32max &&
    a.s32min === b.s32min &&
    a.s32max === b.s32max
  );
}

/** Jump conditions (`BPF_JEQ` …) by their `aluOp` number, with their negation. */
const NEGATE: Record<number, number> = {
  1: 5, // == / !=
  5: 1,
  2: 11, // > / <=
  11: 2,
  3: 10, // >= / <
  10: 3,
  6: 13, // s> / s<=
  13: 6,
  7: 12, // s>= / s<
  12: 7,
};

/**
 * Refines both operands of a comparison under the assumption that `a op b` is `outcome`.
 * Returns the narrowed views, or null when that outcome is impossible.
 */
export function refineCompare(op: number, a: View, b: View, outcome: boolean): [View, View] | null {
  const w = a.w;
  if (op === 0x4) return refineJset(a, b, outcome);
  if (!outcome) op = NEGATE[op]!;
  const m = maxU(w);
  let ra: Bounds = { t: a.t, umin: a.umin, umax: a.umax, smin: a.smin, smax: a.smax };
  let rb: Bounds = { t: b.t, umin: b.umin, umax: b.umax, smin: b.smin, smax: b.smax };
  switch (op) {
    case 0x1: {
      // ==
      if (tnumDisjoint(a.t, b.t)) return null;
      const both: Bounds = {
        t: tnumIntersect(a.t, b.t),
        umin: big(a.umin, b.umin),
        umax: small(a.umax, b.umax),
        smin: big(a.smin, b.smin),
        smax: small(a.smax, b.smax),
      };
      ra = both;
      rb = { ...both };
      break;
    }
    case 0x5: {
      // !=
      const ca = isConstView(a);
      const cb = isConstView(b);
      if (ca && cb) {
        if (a.t.value === b.t.value) return null;
        break;
      }
      if (cb) dodge(ra, b.t.value, w);
      if (ca) dodge(rb, a.t.value, w);
      break;
    }
    case 0x2: // a > b
      if (b.umin >= m || a.umax === 0n) return null;
      ra.umin = big(ra.umin, b.umin + 1n);
      rb.umax = small(rb.umax, a.umax - 1n);
      break;
    case 0x3: // a >= b
      ra.umin = big(ra.umin, b.umin);
      rb.umax = small(rb.umax, a.umax);
      break;
    case 0xa: // a < b
      if (a.umin >= m || b.umax === 0n) return null;
      ra.umax = small(ra.umax, b.umax - 1n);
      rb.umin = big(rb.umin, a.umin + 1n);
      break;
    case 0xb: // a <= b
      ra.umax = small(ra.umax, b.umax);
      rb.umin = big(rb.umin, a.umin);
      break;
    case 0x6: // a s> b
      if (b.smin >= maxS(w) || a.smax === minS(w)) return null;
      ra.smin = big(ra.smin, b.smin + 1n);
      rb.smax = small(rb.smax, a.smax - 1n);
      break;
    case 0x7: // a s>= b
      ra.smin = big(ra.smin, b.smin);
      rb.smax = small(rb.smax, a.smax);
      break;
    case 0xc: // a s< b
      if (a.smin >= maxS(w) || b.smax === minS(w)) return null;
      ra.smax = small(ra.smax, b.smax - 1n);
      rb.smin = big(rb.smin, a.smin + 1n);
      break;
    case 0xd: // a s<= b
      ra.smax = small(ra.smax, b.smax);
      rb.smin = big(rb.smin, a.smin);
      break;
    default:
      return [a, b];
  }
  if (!syncWidth(ra, w) || !syncWidth(rb, w)) return null;
  return [
    { w, ...ra },
    { w, ...rb },
  ];
}

/** Bounds that exclude `v` where it sits at one of their ends (`!=` against a constant). */
function dodge(r: Bounds, v: bigint, w: 32 | 64): void {
  if (r.umin === v) r.umin++;
  if (r.umax === v) r.umax--;
  const sv = toSigned(v, w);
  if (r.smin === sv) r.smin++;
  if (r.smax === sv) r.smax--;
}

function refineJset(a: View, b: View, outcome: boolean): [View, View] | null {
  const w = a.w;
  const possible = (a.t.value | a.t.mask) & (b.t.value | b.t.mask);
  const certain = a.t.value & b.t.value;
  if (outcome) {
    if (possible === 0n) return null;
    if (isConstView(b) && b.t.value !== 0n && (b.t.value & (b.t.value - 1n)) === 0n) {
      const bit = b.t.value;
      const ra: Bounds = { t: { value: a.t.value | bit, mask: a.t.mask & ~bit }, umin: a.umin, umax: a.umax, smin: a.smin, smax: a.smax };
      if (!syncWidth(ra, w)) return null;
      return [{ w, ...ra }, b];
    }
    return [a, b];
  }
  if (certain !== 0n) return null;
  if (isConstView(b)) {
    const k = b.t.value;
    const ra: Bounds = { t: { value: a.t.value & ~k, mask: a.t.mask & ~k }, umin: a.umin, umax: a.umax, smin: a.smin, smax: a.smax };
    if (!syncWidth(ra, w)) return null;
    return [{ w, ...ra }, b];
  }
  return [a, b];
}

/** The kernel's way of printing a scalar in the state log (`scalar(umax=255,var_off=(0x0; 0xff))`). */
export function formatScalar(s: Scalar): string {
  if (isConst(s)) return `${toSigned(s.t.value, 64)}`;
  const parts: string[] = [];
  if (s.smin !== S64_MIN) parts.push(`smin=${s.smin}`);
  if (s.smax !== S64_MAX) parts.push(`smax=${s.smax}`);
  if (s.umin !== 0n) parts.push(`umin=${s.umin}`);
  if (s.umax !== U64) parts.push(`umax=${s.umax}`);
  if (s.s32min !== S32_MIN) parts.push(`smin32=${s.s32min}`);
  if (s.s32max !== S32_MAX) parts.push(`smax32=${s.s32max}`);
  if (s.u32min !== 0n) parts.push(`umin32=${s.u32min}`);
  if (s.u32max !== U32) parts.push(`umax32=${s.u32max}`);
  if (s.t.mask !== U64) parts.push(`var_off=(0x${s.t.value.toString(16)}; 0x${s.t.mask.toString(16)})`);
  return `scalar(${parts.join(',')})`;
}
