// Tristate numbers (`struct tnum` in the kernel): a 64-bit value where each bit is known 0,
// known 1 or unknown. `value` holds the known 1 bits, `mask` the unknown bits; a bit is never set
// in both. Values are BigInt in [0, 2^64): the verifier is not a per-event hot path, and exact
// 64-bit arithmetic keeps the bounds logic obviously right.

export const U64 = (1n << 64n) - 1n;
export const U32 = (1n << 32n) - 1n;

export interface Tnum {
  readonly value: bigint;
  readonly mask: bigint;
}

export const tnumConst = (value: bigint): Tnum => ({ value: value & U64, mask: 0n });
export const TNUM_UNKNOWN: Tnum = { value: 0n, mask: U64 };

export const tnumIsConst = (a: Tnum): boolean => a.mask === 0n;

/** `2^k - 1` and its complement in 64 bits, for k in [0, 64]: no shifted BigInt built per call. */
export const LOW_BITS: readonly bigint[] = Array.from({ length: 65 }, (_, k) => (1n << BigInt(k)) - 1n);
const HIGH_BITS: readonly bigint[] = LOW_BITS.map((low) => U64 ^ low);

/** The smallest tnum holding every value in [min, max] (unsigned). */
export function tnumRange(min: bigint, max: bigint): Tnum {
  if (min === max) return { value: min & U64, mask: 0n };
  const bits = bitLength(min ^ max);
  if (bits > 63) return TNUM_UNKNOWN;
  return { value: min & HIGH_BITS[bits]!, mask: LOW_BITS[bits]! };
}

export function tnumAdd(a: Tnum, b: Tnum): Tnum {
  const sm = (a.mask + b.mask) & U64;
  const sv = (a.value + b.value) & U64;
  const sigma = (sm + sv) & U64;
  const chi = sigma ^ sv;
  const mu = chi | a.mask | b.mask;
  return { value: sv & ~mu & U64, mask: mu };
}

export function tnumSub(a: Tnum, b: Tnum): Tnum {
  const dv = (a.value - b.value) & U64;
  const alpha = (dv + a.mask) & U64;
  const beta = (dv - b.mask) & U64;
  const chi = alpha ^ beta;
  const mu = chi | a.mask | b.mask;
  return { value: dv & ~mu & U64, mask: mu };
}

export function tnumAnd(a: Tnum, b: Tnum): Tnum {
  const alpha = a.value | a.mask;
  const beta = b.value | b.mask;
  const v = a.value & b.value;
  return { value: v, mask: alpha & beta & ~v & U64 };
}

export function tnumOr(a: Tnum, b: Tnum): Tnum {
  const v = a.value | b.value;
  const mu = a.mask | b.mask;
  return { value: v, mask: mu & ~v & U64 };
}

export function tnumXor(a: Tnum, b: Tnum): Tnum {
  const v = a.value ^ b.value;
  const mu = a.mask | b.mask;
  return { value: v & ~mu & U64, mask: mu };
}

/**
 * Multiplication: sum of the partial products, each a known or unknown shifted copy of `b`.
 * Partial products are added in ascending bit order as in the plain loop, but only set bits
 * are visited (a bit index from the two 32-bit halves of the constant, no BigInt shifted per bit).
 */
export function tnumMul(a: Tnum, b: Tnum): Tnum {
  if (a.mask === 0n && b.mask !== 0n) return tnumMul(b, a);
  if (b.mask === 0n) {
    // by a constant: the sum of a shifted once per set bit of the constant
    let accV = 0n;
    let accM = 0n;
    const c = b.value;
    const lo = Number(c & U32);
    const hi = Number(c >> 32n);
    for (let k = 0; k < 64; k++) {
      if (k < 32 ? ((lo >>> k) & 1) === 0 : ((hi >>> (k - 32)) & 1) === 0) continue;
      const kb = BigInt(k);
      const sv = k === 0 ? a.value : (a.value << kb) & U64;
      const smk = k === 0 ? a.mask : (a.mask << kb) & U64;
      // tnumAdd of the accumulator and the shifted copy
      const sm = (accM + smk) & U64;
      const vv = (accV + sv) & U64;
      const mu = (((sm + vv) & U64) ^ vv) | accM | smk;
      accV = vv & ~mu & U64;
      accM = mu;
    }
    return { value: accV, mask: accM };
  }
  const known = (a.value * b.value) & U64;
  let acc: Tnum = { value: 0n, mask: 0n };
  let av = a.value;
  let am = a.mask;
  let bv = b.value;
  let bm = b.mask;
  while (av !== 0n || am !== 0n) {
    if (av & 1n) acc = tnumAdd(acc, { value: 0n, mask: bm });
    else if (am & 1n) acc = tnumAdd(acc, { value: 0n, mask: (bv | bm) & U64 });
    av >>= 1n;
    am >>= 1n;
    bv = (bv << 1n) & U64;
    bm = (bm << 1n) & U64;
  }
  return tnumAdd({ value: known, mask: 0n }, acc);
}

export const tnumLsh = (a: Tnum, k: number): Tnum => ({
  value: (a.value << BigInt(k)) & U64,
  mask: (a.mask << BigInt(k)) & U64,
});
export const tnumRsh = (a: Tnum, k: number): Tnum => ({ value: a.value >> BigInt(k), mask: a.mask >> BigInt(k) });

/** Arithmetic shift right of the low `width` bits (32 or 64), sign bit replicated. */
export function tnumArsh(a: Tnum, k: number, width: 32 | 64): Tnum {
  const m = width === 64 ? U64 : U32;
  const sign = width === 64 ? SIGN_64 : SIGN_32;
  const kb = BigInt(k);
  const value = a.value & sign ? a.value - m - 1n : a.value;
  const mask = a.mask & sign ? a.mask - m - 1n : a.mask;
  return { value: (value >> kb) & m, mask: (mask >> kb) & m };
}
const SIGN_64 = 1n << 63n;
const SIGN_32 = 1n << 31n;

export function tnumIntersect(a: Tnum, b: Tnum): Tnum {
  const v = a.value | b.value;
  const mu = a.mask & b.mask;
  return { value: v & ~mu & U64, mask: mu };
}

/** Keeps the low `bytes` bytes. */
export function tnumCast(a: Tnum, bytes: number): Tnum {
  const m = bytes >= 8 ? U64 : (1n << BigInt(bytes * 8)) - 1n;
  return { value: a.value & m, mask: a.mask & m };
}

/** True when every value of `b` is a value of `a`. */
export function tnumIn(a: Tnum, b: Tnum): boolean {
  if (b.mask & ~a.mask) return false;
  return a.value === (b.value & ~a.mask);
}

/** True when `a` and `b` share no value (some bit known in both with different values). */
export function tnumDisjoint(a: Tnum, b: Tnum): boolean {
  return ((a.value ^ b.value) & ~a.mask & ~b.mask) !== 0n;
}

/** The kernel's text for a tnum: `(0x0; 0xff)` (value; mask). */
export const formatTnum = (a: Tnum): string => `(0x${a.value.toString(16)}; 0x${a.mask.toString(16)})`;

/** Number of significant bits of a value in [0, 2^64). */
export function bitLength(x: bigint): number {
  if (x === 0n) return 0;
  // below 2^32 the double is exact and no shifted BigInt is allocated
  if (x < 4294967296n) return 32 - Math.clz32(Number(x));
  const hi = Number(x >> 32n);
  if (hi !== 0) return 64 - Math.clz32(hi);
  return 32 - Math.clz32(Number(x));
}
