// The scalar domain as it was before its allocation-saving rewrite (plain BigInt formulas), kept
// as the reference that src/scalar-reference.test.ts compares the current one against.

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

/** Cross-derives tnum, unsigned and signed bounds of one width; false on contradiction. */
function syncWidth(b: Bounds, w: 32 | 64): boolean {
  const m = maxU(w);
  const sign = 1n << BigInt(w - 1);
  {
    // tnum → unsigned
    b.umin = big(b.umin, b.t.value);
    b.umax = small(b.umax, (b.t.value | b.t.mask) & m);
    // tnum → signed
    if (b.t.mask & sign) {
      b.smin = big(b.smin, toSigned(b.t.value | sign, w));
      b.smax = small(b.smax, toSigned((b.t.value | b.t.mask) & ~sign & m, w));
    } else {
      b.smin = big(b.smin, toSigned(b.t.value, w));
      b.smax = small(b.smax, toSigned(b.t.value | b.t.mask, w));
    }
    if (b.umin > b.umax || b.smin > b.smax) return false;
    // unsigned → signed when the range does not cross the sign boundary
    if ((b.umin & sign) === (b.umax & sign)) {
      b.smin = big(b.smin, toSigned(b.umin, w));
      b.smax = small(b.smax, toSigned(b.umax, w));
    }
    // signed → unsigned when the range has one sign
    if (b.smin >= 0n || b.smax < 0n) {
      b.umin = big(b.umin, toUnsigned(b.smin, w));
      b.umax = small(b.umax, toUnsigned(b.smax, w));
    }
    if (b.umin > b.umax || b.smin > b.smax) return false;
    // bounds → tnum
    const r = tnumRange(b.umin, b.umax);
    const rm: Tnum = { value: r.value & m, mask: r.mask & m };
    if (tnumDisjoint(b.t, rm)) return false;
    b.t = tnumIntersect(b.t, rm);
    if (b.smin >= 0n || b.smax < 0n) {
      const rs = tnumRange(toUnsigned(b.smin, w), toUnsigned(b.smax, w));
      const rsm: Tnum = { value: rs.value & m, mask: rs.mask & m };
      if (tnumDisjoint(b.t, rsm)) return false;
      b.t = tnumIntersect(b.t, rsm);
    }
  }
  return b.umin <= b.umax && b.smin <= b.smax;
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
  const b32: Bounds = {
    t: tnumCast(s.t, 4),
    umin: s.u32min,
    umax: s.u32max,
    smin: s.s32min,
    smax: s.s32max,
  };
  {
    if (!syncWidth(b64, 64)) return null;
    // 64 → 32: same upper half means the low halves form a range
    if (b64.umin >> 32n === b64.umax >> 32n) {
      b32.umin = big(b32.umin, b64.umin & U32);
      b32.umax = small(b32.umax, b64.umax & U32);
    }
    if (b64.smin >> 32n === b64.smax >> 32n) {
      b32.umin = big(b32.umin, toUnsigned(b64.smin, 32));
      b32.umax = small(b32.umax, toUnsigned(b64.smax, 32));
    }
    if (b64.smin >= S32_MIN && b64.smax <= S32_MAX) {
      // the value fits in 32 signed bits: the low half read as s32 is the value itself
      b32.smin = big(b32.smin, b64.smin);
      b32.smax = small(b32.smax, b64.smax);
    }
    const low = tnumCast(b64.t, 4);
    if (tnumDisjoint(low, b32.t)) return null;
    b32.t = tnumIntersect(low, b32.t);
    if (!syncWidth(b32, 32)) return null;
    // 32 → 64
    if (b64.umin >> 32n === b64.umax >> 32n) {
      const hi = b64.umin & ~U32 & U64;
      b64.umin = big(b64.umin, hi | b32.umin);
      b64.umax = small(b64.umax, hi | b32.umax);
    }
    if (b64.smin >> 32n === b64.smax >> 32n) {
      const hi = (b64.smin >> 32n) << 32n;
      b64.smin = big(b64.smin, hi + b32.umin);
      b64.smax = small(b64.smax, hi + b32.umax);
    }
    const merged: Tnum = {
      value: (b64.t.value & ~U32 & U64) | b32.t.value,
      mask: (b64.t.mask & ~U32 & U64) | b32.t.mask,
    };
    b64.t = merged;
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
  t: { value: t.value & maxU(w), mask: t.mask & maxU(w) },
  umin: 0n,
  umax: maxU(w),
  smin: minS(w),
  smax: maxS(w),
});

/** The 64-bit scalar of an ALU result view: 64-bit views as they are, 32-bit ones zero-extended. */
export function fromView(v: View): Scalar {
  if (v.w === 64) {
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

/** Binary ALU operations the bounds logic understands (`BPF_ADD` …), by their `aluOp` number. */
export function aluView(op: number, a: View, b: View): View {
  const w = a.w;
  const m = maxU(w);
  const cut = (t: Tnum): Tnum => ({ value: t.value & m, mask: t.mask & m });
  switch (op) {
    case 0x0: {
      // add
      const t = cut(tnumAdd(a.t, b.t));
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
      const t = cut(tnumSub(a.t, b.t));
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
      const t = cut(tnumMul(a.t, b.t));
      const r = unknownView(w, t);
      if (a.umax * b.umax <= m) return { ...r, umin: a.umin * b.umin, umax: a.umax * b.umax };
      return r;
    }
    case 0x5: {
      // and
      const t = cut(tnumAnd(a.t, b.t));
      const r = { ...unknownView(w, t), umin: t.value, umax: small(a.umax, b.umax) };
      if (a.smin >= 0n || b.smin >= 0n) return { ...r, smin: 0n, smax: small(a.smin >= 0n ? a.smax : maxS(w), b.smin >= 0n ? b.smax : maxS(w)) };
      return r;
    }
    case 0x4: {
      // or
      const t = cut(tnumOr(a.t, b.t));
      return { ...unknownView(w, t), umin: big(a.umin, b.umin), umax: t.value | t.mask };
    }
    case 0xa: {
      // xor
      const t = cut(tnumXor(a.t, b.t));
      return { ...unknownView(w, t), umin: t.value, umax: t.value | t.mask };
    }
    case 0x6:
    case 0x7:
    case 0xc: {
      // shifts; the caller rejects constant amounts >= width
      if (!isConstView(b) || b.t.value >= BigInt(w)) return unknownView(w);
      const k = Number(b.t.value);
      if (op === 0x6) {
        const t = cut(tnumLsh(a.t, k));
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
      const dodge = (r: Bounds, v: bigint) => {
        if (r.umin === v) r.umin++;
        if (r.umax === v) r.umax--;
        const sv = toSigned(v, w);
        if (r.smin === sv) r.smin++;
        if (r.smax === sv) r.smax--;
      };
      if (cb) dodge(ra, b.t.value);
      if (ca) dodge(rb, a.t.value);
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
