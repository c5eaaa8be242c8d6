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
  private readonly from = new Float64Array(WINDOWS);
  private readonly to = new Float64Array(WINDOWS);
  private next = 0;
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
    const buffer = context.buffer;
    const at = context.byteOffset + byteOffset;
    // keyed by the array object, not only its buffer: a reader that decodes into a new view of a
    // reused buffer (a decompressor's heap) makes a new key
    const end = at + length;
    const source = this.source;
    for (let k = 0; k < WINDOWS; k++) {
      if (source[k] === context && at >= (this.from[k] as number) && end <= (this.to[k] as number)) {
        return this.addr + k * WINDOW_BYTES + (at - (this.from[k] as number));
      }
    }
    if (buffer === this.own) return 0;
    const from = at - (at % 4096);
    const to = Math.min(from + WINDOW_BYTES, buffer.byteLength);
    if (end > to) return 0;
    const k = this.next;
    this.next = (k + 1) % WINDOWS;
    this.bytes.set(new Uint8Array(buffer, from, to - from), k * WINDOW_BYTES);
    source[k] = context;
    this.from[k] = from;
    this.to[k] = to;
    this.staged++;
    return this.addr + k * WINDOW_BYTES + (at - from);
  }
}
