/**
 * Records read in place: pages of the trace feed staged in the compiled tier's linear memory, so
 * that a run copies its record into the context region with one wasm `memory.copy` (in the
 * `start` entry) instead of a copy in JavaScript per run (which cost more than a short program
 * itself: see the README's per-run cost).
 *
 * A window is a 4 KiB-aligned span of the source buffer (the page of the record, and what
 * follows it up to {@link WINDOW_BYTES}), copied once into one of {@link WINDOWS} slots; every
 * later record of the same array inside the window runs from the slot. Several slots because the
 * live feed merges the CPUs' pages in time order, so records alternate between pages of different
 * buffers. Staging is only correct while the source bytes do not change: the caller turns it on
 * for a batch whose bytes stay put (`Vm.stageRecords(true)`: the trace feed's batches, valid
 * until the next one), and every `stageRecords` call drops what was staged.
 */
export const WINDOW_BYTES = 8192;
export const WINDOWS = 8;
/** Bytes of linear memory the stage takes (before the context). */
export const STAGE_BYTES = WINDOW_BYTES * WINDOWS;

export class PageStage {
  /** Whether runs may take their record from a staged window. */
  on = false;
  private bytes: Uint8Array = new Uint8Array(0);
  private readonly source: (Uint8Array | undefined)[] = new Array(WINDOWS).fill(undefined);
  /**
   * Per slot: the window's first and end byte as indexes of its source array (the first may be
   * negative: a window starts at the 4 KiB boundary of the buffer, which can lie before the
   * array's byte 0), and linear address - first. Indexes of the array, not of its buffer, so a
   * hit reads no `byteOffset` (a getter that is not inlined: ~11-20 ns a read in Node 20).
   */
  private readonly from: number[] = new Array(WINDOWS).fill(0);
  private readonly to: number[] = new Array(WINDOWS).fill(0);
  private readonly delta: number[] = new Array(WINDOWS).fill(0);
  private next = 0;
  private last = 0;
  /** Windows staged since created (tests, the bench). */
  staged = 0;

  /** `addr`: the linear address of the stage in `buffer` (the VM's memory). */
  constructor(
    readonly addr: number,
    private own: ArrayBufferLike,
  ) {
    this.bind(own);
  }

  /** Renews the view after the memory grew (its old buffer is detached). */
  bind(buffer: ArrayBufferLike): void {
    this.own = buffer;
    this.bytes = new Uint8Array(buffer, this.addr, STAGE_BYTES);
  }

  /** Forgets every staged window. */
  clear(): void {
    this.source.fill(undefined);
  }

  /**
   * The linear address of `context[byteOffset .. + length]` in a staged window, staging its
   * window first when no slot holds it; 0 when it cannot be staged (its own memory, or a record
   * that does not fit in one window).
   */
  locate(context: Uint8Array, byteOffset: number, length: number): number {
    // keyed by the array object, not only its buffer: a reader that decodes into a new view of a
    // reused buffer (a decompressor's heap) makes a new key
    const end = byteOffset + length;
    const source = this.source;
    const from = this.from;
    const to = this.to;
    // the window of the last hit first: a page's records come one after the other
    let k = this.last;
    if (source[k] === context && byteOffset >= (from[k] as number) && end <= (to[k] as number)) return (this.delta[k] as number) + byteOffset;
    for (k = 0; k < WINDOWS; k++) {
      if (source[k] === context && byteOffset >= (from[k] as number) && end <= (to[k] as number)) {
        this.last = k;
        return (this.delta[k] as number) + byteOffset;
      }
    }
    const buffer = context.buffer;
    if (buffer === this.own) return 0;
    const base = context.byteOffset;
    const at = base + byteOffset;
    const start = at - (at % 4096);
    const stop = Math.min(start + WINDOW_BYTES, buffer.byteLength);
    if (at < 0 || at + length > stop) return 0;
    k = this.next;
    this.next = (k + 1) % WINDOWS;
    this.bytes.set(new Uint8Array(buffer, start, stop - start), k * WINDOW_BYTES);
    source[k] = context;
    from[k] = start - base;
    to[k] = stop - base;
    this.delta[k] = this.addr + k * WINDOW_BYTES - (start - base);
    this.last = k;
    this.staged++;
    return (this.delta[k] as number) + byteOffset;
  }
}
