/**
 * 64-bit arithmetic on 32-bit halves, without BigInt. Each function returns the low half and
 * leaves the high half (and the remainder, for division) in {@link wide}.
 */

/** Scratch outputs: `[0]` high half of the result, `[1]`/`[2]` low/high half of a remainder. */
export const wide = new Int32Array(3);

/** Low 64 bits of a * b (two's complement, so signedness does not matter). */
export function mul64(al: number, ah: number, bl: number, bh: number): number {
  const a0 = al & 0xffff;
  const a1 = al >>> 16;
  const b0 = bl & 0xffff;
  const b1 = bl >>> 16;
  const p00 = a0 * b0;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  const hiOfLo = a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + Math.floor(mid / 0x10000);
  wide[0] = (hiOfLo + Math.imul(al, bh) + Math.imul(ah, bl)) | 0;
  return Math.imul(al, bl);
}

/**
 * Unsigned 64-bit division n / d with d != 0. Returns the quotient's low half; `wide[0]` gets
 * its high half, `wide[1]`/`wide[2]` the remainder.
 */
export function udivmod64(nl: number, nh: number, dl: number, dh: number): number {
  nl >>>= 0;
  nh >>>= 0;
  dl >>>= 0;
  dh >>>= 0;
  if (nh === 0 && dh === 0) {
    const q = Math.floor(nl / dl);
    wide[0] = 0;
    wide[1] = nl - q * dl;
    wide[2] = 0;
    return q | 0;
  }
  // Shift-subtract long division; rare (only when a high half is set).
  let ql = 0;
  let qh = 0;
  let rl = 0;
  let rh = 0;
  for (let i = 63; i >= 0; i--) {
    const overflow = rh >>> 31;
    rh = ((rh << 1) | (rl >>> 31)) >>> 0;
    const bit = i >= 32 ? (nh >>> (i - 32)) & 1 : (nl >>> i) & 1;
    rl = ((rl << 1) | bit) >>> 0;
    if (overflow === 1 || rh > dh || (rh === dh && rl >= dl)) {
      const l = rl - dl;
      rh = (rh - dh - (l < 0 ? 1 : 0)) >>> 0;
      rl = l >>> 0;
      if (i >= 32) qh |= 1 << (i - 32);
      else ql |= 1 << i;
    }
  }
  wide[0] = qh;
  wide[1] = rl | 0;
  wide[2] = rh | 0;
  return ql | 0;
}

/**
 * Signed 64-bit division truncating toward zero, d != 0 (`BPF_SDIV`). INT64_MIN / -1 wraps to
 * INT64_MIN. Returns the low half of the quotient; `wide[0]` its high half, `wide[1]`/`wide[2]`
 * the remainder (with the sign of the dividend, `BPF_SMOD`).
 */
export function sdivmod64(nl: number, nh: number, dl: number, dh: number): number {
  const nNeg = nh < 0;
  const dNeg = dh < 0;
  let al = nl;
  let ah = nh;
  if (nNeg) {
    al = -nl | 0;
    ah = (~nh + (nl === 0 ? 1 : 0)) | 0;
  }
  let bl = dl;
  let bh = dh;
  if (dNeg) {
    bl = -dl | 0;
    bh = (~dh + (dl === 0 ? 1 : 0)) | 0;
  }
  let ql = udivmod64(al, ah, bl, bh);
  let qh = wide[0] as number;
  let rl = wide[1] as number;
  let rh = wide[2] as number;
  if (nNeg !== dNeg) {
    qh = (~qh + (ql === 0 ? 1 : 0)) | 0;
    ql = -ql | 0;
  }
  if (nNeg) {
    rh = (~rh + (rl === 0 ? 1 : 0)) | 0;
    rl = -rl | 0;
  }
  wide[0] = qh;
  wide[1] = rl;
  wide[2] = rh;
  return ql;
}
