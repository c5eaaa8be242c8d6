import { FormatError } from '../errors.js';
import type { ByteSource } from './byte-source.js';

const TWO_32 = 4294967296;
const textDecoder = new TextDecoder('utf-8');
const maxCString = 1 << 16;

/**
 * A reader with an offset over a {@link ByteSource} (a whole file, or one decompressed section).
 * `base` is added to offsets in errors, so they point into the input (for a compressed section,
 * `base` is the section's offset and the remainder an offset into its decompressed content).
 * Every read is bounded: past the end is `truncated`.
 */
export class Cursor {
  readonly source: ByteSource;
  readonly littleEndian: boolean;
  readonly base: number;
  readonly section: string;
  offset: number;

  constructor(source: ByteSource, littleEndian: boolean, base: number, section: string, offset = 0) {
    this.source = source;
    this.littleEndian = littleEndian;
    this.base = base;
    this.section = section;
    this.offset = offset;
  }

  get remaining(): number {
    return this.source.byteLength - this.offset;
  }

  error(code: 'truncated' | 'malformed' | 'out-of-range' | 'unsupported', message: string, at = this.offset): FormatError {
    return new FormatError(code, `${this.section}: ${message}`, { byteOffset: this.base + at, section: this.section });
  }

  private take(n: number, what: string): Uint8Array {
    if (!Number.isSafeInteger(n) || n < 0 || this.offset + n > this.source.byteLength) {
      // an offset read from the file may already point past the end: say so rather than "-N left"
      const left = this.remaining >= 0 ? `${this.remaining} left` : `past the end at ${this.base + this.source.byteLength}`;
      throw this.error('truncated', `${what} needs ${n} bytes at ${this.base + this.offset}, ${left}`);
    }
    const b = this.source.read(this.offset, n);
    this.offset += n;
    return b;
  }

  private dv(b: Uint8Array): DataView {
    return new DataView(b.buffer, b.byteOffset, b.byteLength);
  }

  u8(what = 'u8'): number {
    return this.take(1, what)[0]!;
  }
  u16(what = 'u16'): number {
    return this.dv(this.take(2, what)).getUint16(0, this.littleEndian);
  }
  u32(what = 'u32'): number {
    return this.dv(this.take(4, what)).getUint32(0, this.littleEndian);
  }
  /** A u64 that must be a safe integer (offsets and sizes). */
  u64(what = 'u64'): number {
    const at = this.offset;
    const v = this.dv(this.take(8, what));
    const le = this.littleEndian;
    const lo = v.getUint32(le ? 0 : 4, le);
    const hi = v.getUint32(le ? 4 : 0, le);
    if (hi >= 0x200000) throw this.error('out-of-range', `${what} ${BigInt(hi) * 4294967296n + BigInt(lo)} too large`, at);
    return hi * TWO_32 + lo;
  }
  /** A u64 as bigint. */
  u64Big(what = 'u64'): bigint {
    return this.dv(this.take(8, what)).getBigUint64(0, this.littleEndian);
  }
  i64Big(what = 'i64'): bigint {
    return this.dv(this.take(8, what)).getBigInt64(0, this.littleEndian);
  }
  bytes(n: number, what: string): Uint8Array {
    return this.take(n, what);
  }
  text(n: number, what: string): string {
    return textDecoder.decode(this.take(n, what));
  }
  /** A NUL-terminated string (at most 64 KiB). */
  cstring(what: string): string {
    const start = this.offset;
    let chunk = 64;
    for (;;) {
      const avail = Math.min(chunk, this.source.byteLength - start);
      if (avail <= 0) throw this.error('truncated', `${what}: no terminating NUL`, start);
      const b = this.source.read(start, avail);
      const end = b.indexOf(0);
      if (end >= 0) {
        this.offset = start + end + 1;
        return textDecoder.decode(b.subarray(0, end));
      }
      if (avail < chunk || chunk >= maxCString) throw this.error('truncated', `${what}: no terminating NUL`, start);
      chunk *= 4;
    }
  }
}

/** Decodes a NUL-terminated (or whole) UTF-8 string. */
export function decodeCString(bytes: Uint8Array): string {
  const end = bytes.indexOf(0);
  return textDecoder.decode(end < 0 ? bytes : bytes.subarray(0, end));
}
