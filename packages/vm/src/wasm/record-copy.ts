/**
 * Copying an event record into the context region in JavaScript (a run whose record is not read
 * in place, see page-stage.ts), as fast as Node 20 allows:
 *
 * - `TypedArray.prototype.set` costs ~30 ns for 64 bytes (a builtin call with its checks), more
 *   than the 15-instruction program it feeds; a loop of 32-bit words through typed arrays the
 *   optimizing compiler knows costs about half of it.
 * - A typed array's `byteOffset` and `buffer` are getters the optimizing compiler does not inline
 *   (~11-28 ns a read each), so the word view of a source and its offset are cached by the array
 *   object: a caller that passes the same array (a reader's page, a reused record buffer) reads
 *   neither again. Views of a buffer are cached too, so a new array over a known buffer costs
 *   the two getters and no allocation.
 *
 * The bytes copied are the same as `set` would copy (rounded up to whole words: up to 3 bytes
 * past the record, from the same buffer, land past the context's length, where no access reaches).
 */
export class RecordCopy {
  /** Two source arrays, their buffer's word view and their byte offset in that buffer. */
  private array0: Uint8Array | undefined;
  private words0: Int32Array<ArrayBufferLike> = new Int32Array(0);
  private base0 = 0;
  private array1: Uint8Array | undefined;
  private words1: Int32Array<ArrayBufferLike> = new Int32Array(0);
  private base1 = 0;
  /** Two buffers and their word views (a new array over a known buffer allocates none). */
  private buffer0: ArrayBufferLike | undefined;
  private bufferWords0: Int32Array<ArrayBufferLike> = new Int32Array(0);
  private buffer1: ArrayBufferLike | undefined;
  private bufferWords1: Int32Array<ArrayBufferLike> = new Int32Array(0);

  /**
   * Copies `context[byteOffset .. + n]` to `dst[0 .. n]`; `dstWords` is a 32-bit view of `dst`
   * from its byte 0 (empty when `dst` is not 4-byte aligned), at least `n` bytes long.
   */
  copy(dst: Uint8Array, dstWords: Int32Array<ArrayBufferLike>, context: Uint8Array, byteOffset: number, n: number): void {
    if (n <= 16) {
      for (let i = 0; i < n; i++) dst[i] = context[byteOffset + i] as number;
      return;
    }
    let words: Int32Array<ArrayBufferLike>;
    let base: number;
    if (context === this.array0) {
      words = this.words0;
      base = this.base0;
    } else if (context === this.array1) {
      words = this.words1;
      base = this.base1;
    } else {
      base = context.byteOffset;
      words = this.wordsOf(context.buffer);
      this.array1 = this.array0;
      this.words1 = this.words0;
      this.base1 = this.base0;
      this.array0 = context;
      this.words0 = words;
      this.base0 = base;
    }
    const at = base + byteOffset;
    const w = (n + 3) >> 2;
    const s = at >> 2;
    if ((at & 3) === 0 && at >= 0 && byteOffset >= 0 && byteOffset + n <= context.length && s + w <= words.length && w <= dstWords.length) {
      // four words a step (measured: about a third faster than one a step on 64 bytes)
      let i = 0;
      for (; i + 4 <= w; i += 4) {
        dstWords[i] = words[s + i] as number;
        dstWords[i + 1] = words[s + i + 1] as number;
        dstWords[i + 2] = words[s + i + 2] as number;
        dstWords[i + 3] = words[s + i + 3] as number;
      }
      for (; i < w; i++) dstWords[i] = words[s + i] as number;
    } else if (byteOffset === 0 && n === context.length) dst.set(context);
    else dst.set(context.subarray(byteOffset, byteOffset + n));
  }

  /** A word view of `buffer` from the two-entry cache (empty for a buffer shorter than 64 bytes). */
  private wordsOf(buffer: ArrayBufferLike): Int32Array<ArrayBufferLike> {
    if (buffer === this.buffer0) return this.bufferWords0;
    if (buffer === this.buffer1) return this.bufferWords1;
    const words = buffer.byteLength < 64 ? new Int32Array(0) : new Int32Array(buffer, 0, buffer.byteLength >> 2);
    this.buffer1 = this.buffer0;
    this.bufferWords1 = this.bufferWords0;
    this.buffer0 = buffer;
    this.bufferWords0 = words;
    return words;
  }
}
