import { FormatError } from '../errors.js';
import { cString } from '../elf/byte-view.js';

/** The BTF string section: NUL-terminated strings addressed by byte offset, decoded on demand. */
export class BtfStrings {
  readonly bytes: Uint8Array;
  /** Absolute offset of the string section in the .BTF blob, for errors. */
  readonly byteOffset: number;
  readonly #cache = new Map<number, string>();

  constructor(bytes: Uint8Array, byteOffset: number) {
    this.bytes = bytes;
    this.byteOffset = byteOffset;
  }

  /** The string at `offset`; `out-of-range` past the section. */
  get(offset: number, what = 'string'): string {
    const hit = this.#cache.get(offset);
    if (hit !== undefined) return hit;
    if (offset < 0 || offset >= this.bytes.length) {
      throw new FormatError('out-of-range', `${what}: string offset ${offset} past the string section (${this.bytes.length} bytes)`, {
        byteOffset: this.byteOffset,
      });
    }
    // The header check guarantees a final NUL, so cString always finds one.
    const s = cString(this.bytes, offset) ?? '';
    this.#cache.set(offset, s);
    return s;
  }
}
