import { FormatError } from '../errors.js';

/**
 * Random-access bytes of an input (a trace.dat in memory, or an open file on the Node side).
 * `read` returns exactly `length` bytes at `byteOffset` or throws {@link FormatError}
 * (`truncated`) when the input ends before; the result may share memory with the source.
 */
export interface ByteSource {
  readonly byteLength: number;
  read(byteOffset: number, length: number): Uint8Array;
}

/** A {@link ByteSource} over bytes already in memory (no copies: `read` returns subarrays). */
export class MemoryByteSource implements ByteSource {
  readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }
  get byteLength(): number {
    return this.bytes.length;
  }
  read(byteOffset: number, length: number): Uint8Array {
    checkRange(this.bytes.length, byteOffset, length);
    return this.bytes.subarray(byteOffset, byteOffset + length);
  }
}

/** Throws `truncated`/`out-of-range` unless [byteOffset, byteOffset + length) lies inside `size`. */
export function checkRange(size: number, byteOffset: number, length: number, section?: string): void {
  if (!Number.isSafeInteger(byteOffset) || !Number.isSafeInteger(length) || byteOffset < 0 || length < 0) {
    throw new FormatError('out-of-range', `read of ${length} bytes at ${byteOffset}: invalid range`, { byteOffset, section });
  }
  if (byteOffset + length > size) {
    throw new FormatError(
      byteOffset >= size ? 'out-of-range' : 'truncated',
      `read of ${length} bytes at ${byteOffset}: input ends at ${size}`,
      { byteOffset, section },
    );
  }
}
