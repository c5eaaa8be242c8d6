const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');
const lowerDigits = new Uint8Array([48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102]);
const upperDigits = new Uint8Array([48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 65, 66, 67, 68, 69, 70]);
const twoTo32 = 4294967296;

/**
 * Text built as UTF-8 bytes in one reused buffer (grown by doubling), taken out as a string in
 * large pieces: a report writes millions of short pieces (numbers, names, literals) without a
 * string per piece. Numbers are written digit by digit, without `toString`.
 */
export class TextWriter {
  private buf: Uint8Array;
  /** Bytes written since the last {@link take}. */
  length = 0;

  constructor(initialBytes = 1 << 17) {
    this.buf = new Uint8Array(initialBytes);
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    const need = this.length + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  /** Drops everything written after `length` (a piece that turned out not to be wanted). */
  truncate(length: number): void {
    if (length < this.length) this.length = length;
  }

  /** One byte (an ASCII character code). */
  byte(c: number): void {
    this.ensure(1);
    this.buf[this.length++] = c;
  }

  /** Bytes as they are (pre-encoded UTF-8). */
  bytes(b: Uint8Array): void {
    const n = b.length;
    this.ensure(n);
    const pos = this.length;
    if (n > 32) this.buf.set(b, pos);
    else {
      // A loop beats TypedArray.set for the short pieces a report writes (names, literals).
      const buf = this.buf;
      for (let k = 0; k < n; k++) buf[pos + k] = b[k]!;
    }
    this.length = pos + n;
  }

  /** A string, encoded as UTF-8 (ASCII byte by byte; anything else through TextEncoder). */
  text(s: string): void {
    const n = s.length;
    this.ensure(n);
    const buf = this.buf;
    let pos = this.length;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.length = pos;
        this.ensure((n - i) * 3);
        const r = encoder.encodeInto(s.slice(i), this.buf.subarray(this.length));
        this.length += r.written;
        return;
      }
      buf[pos++] = c;
    }
    this.length = pos;
  }

  /** A safe integer in decimal, `-` first when negative. */
  decimal(value: number): void {
    this.ensure(24);
    const buf = this.buf;
    let v = value;
    if (v < 0) {
      buf[this.length++] = 45;
      v = -v;
    }
    if (v < 10) {
      buf[this.length++] = 48 + v;
      return;
    }
    if (v <= 0x7fffffff) {
      this.smallDecimal(v);
      return;
    }
    // Above 2^31: the top digits and the last eight, each in 32-bit integer arithmetic. A float
    // quotient may be one off near 2^53; the remainder puts it right.
    let high = Math.floor(v / 1e8);
    let low = v - high * 1e8;
    if (low < 0) {
      high--;
      low += 1e8;
    } else if (low >= 1e8) {
      high++;
      low -= 1e8;
    }
    this.smallDecimal(high);
    this.decimalZeroPadded(low, 8);
  }

  /** 0 <= v < 2^31, in decimal. */
  private smallDecimal(value: number): void {
    const buf = this.buf;
    let v = value;
    let digits = 1;
    for (let t = (v / 10) | 0; t > 0; t = (t / 10) | 0) digits++;
    let at = this.length + digits;
    this.length = at;
    do {
      const q = (v / 10) | 0;
      buf[--at] = 48 + v - q * 10;
      v = q;
    } while (v > 0);
  }

  /** An integer 0 <= value < min(10^width, 2^31) in decimal, zero-padded to `width` digits. */
  decimalZeroPadded(value: number, width: number): void {
    this.ensure(width);
    const buf = this.buf;
    let v = value;
    let at = this.length + width;
    this.length = at;
    for (let k = 0; k < width; k++) {
      const q = (v / 10) | 0;
      buf[--at] = 48 + v - q * 10;
      v = q;
    }
  }

  /** An unsigned 32-bit value in hex, no leading zeros (`upper`: `A-F`). */
  hex32(value: number, upper = false): void {
    const v = value >>> 0;
    const digits = v === 0 ? 1 : (35 - Math.clz32(v)) >> 2;
    this.ensure(digits);
    const table = upper ? upperDigits : lowerDigits;
    const buf = this.buf;
    let at = this.length + digits;
    this.length = at;
    for (let k = 0, x = v; k < digits; k++, x >>>= 4) buf[--at] = table[x & 15]!;
  }

  /** An unsigned 64-bit value given as two 32-bit halves, in hex without leading zeros. */
  hex64(high: number, low: number, upper = false): void {
    if (high === 0) {
      this.hex32(low, upper);
      return;
    }
    this.hex32(high, upper);
    this.ensure(8);
    const table = upper ? upperDigits : lowerDigits;
    const buf = this.buf;
    let at = this.length + 8;
    this.length = at;
    for (let k = 0, x = low >>> 0; k < 8; k++, x >>>= 4) buf[--at] = table[x & 15]!;
  }

  /** A non-negative safe integer in hex. */
  hexNumber(value: number, upper = false): void {
    if (value < twoTo32) this.hex32(value, upper);
    else {
      const high = Math.floor(value / twoTo32);
      this.hex64(high, value - high * twoTo32, upper);
    }
  }

  /** `count` copies of one byte (padding). */
  repeat(c: number, count: number): void {
    if (count <= 0) return;
    this.ensure(count);
    this.buf.fill(c, this.length, this.length + count);
    this.length += count;
  }

  /** Everything written so far as a string; the writer starts over empty. */
  take(): string {
    const s = decoder.decode(this.buf.subarray(0, this.length));
    this.length = 0;
    return s;
  }
}

/** A string as UTF-8 bytes (for pieces written many times). */
export function encodeText(s: string): Uint8Array {
  return encoder.encode(s);
}
