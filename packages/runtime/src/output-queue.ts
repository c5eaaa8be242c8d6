import type { VmOutput } from '@probeyard/vm';

/** Bounds of an {@link OutputQueue} between two `take()`s. */
export interface OutputBounds {
  /** Outputs kept at most (default 10,000). */
  maxOutputs?: number;
  /** Bytes of record data and printk text kept at most (default 4 MiB). */
  maxBytes?: number;
}

const outputBytes = (o: VmOutput): number => (o.kind === 'printk' ? o.text.length : o.data.length);

/**
 * The outputs of one loaded spec (ring-buffer and perf records, printk lines) between two takes,
 * bounded by count and bytes: what does not fit is counted in {@link dropped}, never silent.
 * Taken at the agent's interval, the bounds are a rate.
 */
export class OutputQueue {
  private pending: VmOutput[] = [];
  private bytes = 0;
  private readonly maxOutputs: number;
  private readonly maxBytes: number;
  /** Outputs dropped since the last take. */
  dropped = 0;
  /** Outputs dropped since the queue was made. */
  droppedTotal = 0;
  /** Outputs accepted since the queue was made. */
  acceptedTotal = 0;

  constructor(bounds: OutputBounds = {}) {
    this.maxOutputs = bounds.maxOutputs ?? 10_000;
    this.maxBytes = bounds.maxBytes ?? 4 << 20;
  }

  /** Offers one output; false (and counted) when over a bound. */
  push(o: VmOutput): boolean {
    const n = outputBytes(o);
    if (this.pending.length >= this.maxOutputs || this.bytes + n > this.maxBytes) {
      this.dropped++;
      this.droppedTotal++;
      return false;
    }
    this.pending.push(o);
    this.bytes += n;
    this.acceptedTotal++;
    return true;
  }

  /** Outputs waiting. */
  get length(): number {
    return this.pending.length;
  }

  /** The outputs since the last take and how many were dropped; starts a new window. */
  take(): { outputs: VmOutput[]; dropped: number } {
    const out = { outputs: this.pending, dropped: this.dropped };
    this.pending = [];
    this.bytes = 0;
    this.dropped = 0;
    return out;
  }
}
