import { FormatError } from '../errors.js';

/**
 * Bounds-checked reads of fixed-width integers from one buffer, endianness decided once.
 * Every read names its absolute byte offset in the error, so a truncated input never turns into
 * a `RangeError` from DataView. 64-bit values come back as numbers only when they are exact
 * (below 2^53); anything larger is `out-of-range` — BPF objects never need such offsets.
 */
export class ByteView {
  readonly bytes: Uint8Array;
  readonly littleEndian: boolean;
  /** Absolute offset of `bytes[0]` in the outer input, for error messages. */
  readonly baseOffset: number;
  readonly #view: DataView;
  readonly #what: string;

  constructor(bytes: Uint8Array, littleEndian: boolean, what: string, baseOffset = 0) {
    this.bytes = bytes;
    this.littleEndian = littleEndian;
    this.baseOffset = baseOffset;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#what = what;
  }

  get length(): number {
    return this.bytes.length;
  }

  /**
   * Throws `truncated` unless `[byteOffset, byteOffset + size)` lies inside the buffer. The
   * error's `byteOffset` is where the structure starts, or the end of the input when it starts
   * past it (the message keeps the announced offset).
   */
  need(byteOffset: number, size: number, what: string): void {
    if (byteOffset < 0 || size < 0 || byteOffset + size > this.bytes.length) {
      throw new FormatError(
        'truncated',
        `${what}: needs ${size} bytes at offset ${byteOffset}, ${this.#what} has ${this.bytes.length}`,
        { byteOffset: this.baseOffset + Math.min(Math.max(byteOffset, 0), this.bytes.length) },
      );
    }
  }

  u8(byteOffset: number, what = 'u8'): number {
    this.need(byteOffset, 1, what);
    return this.#view.getUint8(byteOffset);
  }

  u16(byteOffset: number, what = 'u16'): number {
    this.need(byteOffset, 2, what);
    return this.#view.getUint16(byteOffset, this.littleEndian);
  }

  i16(byteOffset: number, what = 'i16'): number {
    this.need(byteOffset, 2, what);
    return this.#view.getInt16(byteOffset, this.littleEndian);
  }

  u32(byteOffset: number, what = 'u32'): number {
    this.need(byteOffset, 4, what);
    return this.#view.getUint32(byteOffset, this.littleEndian);
  }

  i32(byteOffset: number, what = 'i32'): number {
    this.need(byteOffset, 4, what);
    return this.#view.getInt32(byteOffset, this.littleEndian);
  }

  /** The two 32-bit halves of a u64, low first. */
  u64Halves(byteOffset: number, what = 'u64'): [lo: number, hi: number] {
    this.need(byteOffset, 8, what);
    const a = this.#view.getUint32(byteOffset, this.littleEndian);
    const b = this.#view.getUint32(byteOffset + 4, this.littleEndian);
    return this.littleEndian ? [a, b] : [b, a];
  }

  /** A u64 that must fit a safe integer (offsets, sizes, counts). */
  u64(byteOffset: number, what = 'u64'): number {
    const [lo, hi] = this.u64Halves(byteOffset, what);
    if (hi >= 0x200000) {
      throw new FormatError('out-of-range', `${what}: value 0x${hi.toString(16)}${lo.toString(16).padStart(8, '0')} is too large`, {
        byteOffset: this.baseOffset + byteOffset,
      });
    }
    return hi * 0x1_0000_0000 + lo;
  }

  /** A slice that shares memory with the input (no copy). */
  slice(byteOffset: number, size: number, what: string): Uint8Array {
    this.need(byteOffset, size, what);
    return this.bytes.subarray(byteOffset, byteOffset + size);
  }
}

const utf8 = new TextDecoder('utf-8');

/** Decodes a NUL-terminated string starting at `byteOffset`; returns undefined without a NUL. */
export function cString(bytes: Uint8Array, byteOffset: number): string | undefined {
  const end = bytes.indexOf(0, byteOffset);
  if (end < 0) return undefined;
  return utf8.decode(bytes.subarray(byteOffset, end));
}
