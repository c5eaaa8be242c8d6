// The tnum operations as they were before their allocation-saving rewrite: the reference for
// src/scalar-reference.test.ts.

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

/** The smallest tnum holding every value in [min, max] (unsigned). */
export function tnumRange(min: bigint, max: bigint): Tnum {
  const chi = min ^ max;
  const bits = bitLength(chi);
  if (bits > 63) return TNUM_UNKNOWN;
  const delta = (1n << BigInt(bits)) - 1n;
  return { value: min & ~delta & U64, mask: delta };
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

/** Multiplication: sum of the partial products, each a known or unknown shifted copy of `b`. */
export function tnumMul(a: Tnum, b: Tnum): Tnum {
  if (a.mask === 0n && b.mask !== 0n) return tnumMul(b, a);
  if (b.mask === 0n) {
    // by a constant: the sum of a shifted once per set bit of the constant
    let acc: Tnum = { value: 0n, mask: 0n };
    let c = b.value;
    let shifted = a;
    while (c !== 0n) {
      if (c & 1n) acc = tnumAdd(acc, shifted);
      c >>= 1n;
      shifted = { value: (shifted.value << 1n) & U64, mask: (shifted.mask << 1n) & U64 };
    }
    return acc;
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
  const sign = 1n << BigInt(width - 1);
  const sx = (x: bigint): bigint => (x & sign ? x - (1n << BigInt(width)) : x);
  return { value: (sx(a.value) >> BigInt(k)) & m, mask: (sx(a.mask) >> BigInt(k)) & m };
}

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
