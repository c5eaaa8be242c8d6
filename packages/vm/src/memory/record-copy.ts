/**
 * Copying an event record into the context region in JavaScript (a run whose record is not read
 * in place, see page-stage.ts), as fast as Node 20 allows:
 *
 * - `TypedArray.prototype.set` costs ~22-30 ns for 64 bytes (a builtin call with its checks),
 *   more than the 15-instruction program it feeds; a loop of 32-bit words through typed arrays
 *   the optimizing compiler knows costs about half of it, of 64-bit words (BigInt64Array, which
 *   the optimizing compiler copies as raw words) about a quarter.
 * - A typed array's `byteOffset` and `buffer` are getters the optimizing compiler does not inline
 *   (~11-28 ns a read each), so the word view of a source and its offset are cached by the array
 *   object: a caller that passes the same array (a reader's page, a reused record buffer) reads
 *   neither again. Views of a buffer are cached too, so a new array over a known buffer costs
 *   the two getters and no allocation.
 *
 * The bytes copied are the same as `set` would copy (rounded up to whole words: up to 7 bytes
 * past the record, from the same buffer, land past the context's length, where no access reaches).
 */
export class RecordCopy {
  /** Two source arrays: their buffer's word views (32 and 64 bits) and their byte offset in it. */
  private array0: Uint8Array | undefined;
  private views0: BufferViews = NO_VIEWS;
  private base0 = 0;
  private array1: Uint8Array | undefined;
  private views1: BufferViews = NO_VIEWS;
  private base1 = 0;
  /** Two buffers and their word views (a new array over a known buffer allocates none). */
  private buffer0: ArrayBufferLike | undefined;
  private bufferViews0: BufferViews = NO_VIEWS;
  private buffer1: ArrayBufferLike | undefined;
  private bufferViews1: BufferViews = NO_VIEWS;
  /** The destination's 64-bit view, made from its 32-bit view when that changes. */
  private dstWords: Int32Array<ArrayBufferLike> | undefined;
  private dstLongs: BigInt64Array<ArrayBufferLike> = new BigInt64Array(0);

  /**
   * Copies `context[byteOffset .. + n]` to `dst[0 .. n]`; `dstWords` is a 32-bit view of `dst`
   * from its byte 0 (empty when `dst` is not 4-byte aligned), at least `n` bytes long.
   */
  copy(dst: Uint8Array, dstWords: Int32Array<ArrayBufferLike>, context: Uint8Array, byteOffset: number, n: number): void {
    if (n <= 16) {
      for (let i = 0; i < n; i++) dst[i] = context[byteOffset + i] as number;
      return;
    }
    let views: BufferViews;
    let base: number;
    if (context === this.array0) {
      views = this.views0;
      base = this.base0;
    } else if (context === this.array1) {
      views = this.views1;
      base = this.base1;
    } else {
      base = context.byteOffset;
      views = this.viewsOf(context.buffer);
      this.array1 = this.array0;
      this.views1 = this.views0;
      this.base1 = this.base0;
      this.array0 = context;
      this.views0 = views;
      this.base0 = base;
    }
    const at = base + byteOffset;
    if (at >= 0 && byteOffset >= 0 && byteOffset + n <= context.length) {
      if ((at & 7) === 0) {
        // 64-bit words (BigInt64Array: every bit pattern copied as is, unlike a Float64Array's
        // NaNs), four a step: about twice as fast as 32-bit words on 64 bytes
        if (dstWords !== this.dstWords) this.bindDestination(dstWords);
        const src = views.longs;
        const out = this.dstLongs;
        const l = (n + 7) >> 3;
        const s = at >> 3;
        if (s + l <= src.length && l <= out.length) {
          let i = 0;
          for (; i + 4 <= l; i += 4) {
            out[i] = src[s + i] as bigint;
            out[i + 1] = src[s + i + 1] as bigint;
            out[i + 2] = src[s + i + 2] as bigint;
            out[i + 3] = src[s + i + 3] as bigint;
          }
          for (; i < l; i++) out[i] = src[s + i] as bigint;
          return;
        }
      }
      const words = views.words;
      const w = (n + 3) >> 2;
      const s = at >> 2;
      if ((at & 3) === 0 && s + w <= words.length && w <= dstWords.length) {
        // four words a step (measured: about a third faster than one a step on 64 bytes)
        let i = 0;
        for (; i + 4 <= w; i += 4) {
          dstWords[i] = words[s + i] as number;
          dstWords[i + 1] = words[s + i + 1] as number;
          dstWords[i + 2] = words[s + i + 2] as number;
          dstWords[i + 3] = words[s + i + 3] as number;
        }
        for (; i < w; i++) dstWords[i] = words[s + i] as number;
        return;
      }
    }
    if (byteOffset === 0 && n === context.length) dst.set(context);
    else dst.set(context.subarray(byteOffset, byteOffset + n));
  }

  /** The 64-bit view of a new destination (empty when it is not 8-byte aligned). */
  private bindDestination(dstWords: Int32Array<ArrayBufferLike>): void {
    this.dstWords = dstWords;
    const at = dstWords.byteOffset;
    this.dstLongs = at % 8 === 0 ? new BigInt64Array(dstWords.buffer, at, dstWords.length >> 1) : new BigInt64Array(0);
  }

  /** Word views of `buffer` from the two-entry cache (empty for a buffer shorter than 64 bytes). */
  private viewsOf(buffer: ArrayBufferLike): BufferViews {
    if (buffer === this.buffer0) return this.bufferViews0;
    if (buffer === this.buffer1) return this.bufferViews1;
    const views: BufferViews =
      buffer.byteLength < 64
        ? NO_VIEWS
        : { words: new Int32Array(buffer, 0, buffer.byteLength >> 2), longs: new BigInt64Array(buffer, 0, buffer.byteLength >> 3) };
    this.buffer1 = this.buffer0;
    this.bufferViews1 = this.bufferViews0;
    this.buffer0 = buffer;
    this.bufferViews0 = views;
    return views;
  }
}

interface BufferViews {
  readonly words: Int32Array<ArrayBufferLike>;
  readonly longs: BigInt64Array<ArrayBufferLike>;
}
const NO_VIEWS: BufferViews = { words: new Int32Array(0), longs: new BigInt64Array(0) };
