import type { RecordEventFormat, TraceRecord } from '../ring-buffer/trace-record.js';

/** Anything that yields records in time order, reusing one object. */
export interface RecordReader<F extends RecordEventFormat = RecordEventFormat> {
  next(): TraceRecord<F> | undefined;
}

/**
 * Merges per-CPU readers into one stream in timestamp order (ties: buffer index, then CPU), with
 * a binary heap of the readers' current records. Each reader's record object is returned as is,
 * so a returned record is valid until the following `next()`.
 */
export class MergedRecordReader<F extends RecordEventFormat = RecordEventFormat> implements RecordReader<F> {
  private readonly heap: TraceRecord<F>[] = [];
  private readonly owner: RecordReader<F>[] = [];
  private pending: RecordReader<F> | undefined;
  private started = false;
  private readonly readers: RecordReader<F>[];

  constructor(readers: RecordReader<F>[]) {
    this.readers = readers;
  }

  private push(rec: TraceRecord<F>, reader: RecordReader<F>): void {
    const h = this.heap;
    const o = this.owner;
    let i = h.length;
    h.push(rec);
    o.push(reader);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(rec, h[p]!)) break;
      h[i] = h[p]!;
      o[i] = o[p]!;
      i = p;
    }
    h[i] = rec;
    o[i] = reader;
  }

  private siftDown(i: number): void {
    const h = this.heap;
    const o = this.owner;
    const n = h.length;
    const rec = h[i]!;
    const reader = o[i]!;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && before(h[c + 1]!, h[c]!)) c++;
      if (!before(h[c]!, rec)) break;
      h[i] = h[c]!;
      o[i] = o[c]!;
      i = c;
    }
    h[i] = rec;
    o[i] = reader;
  }

  next(): TraceRecord<F> | undefined {
    if (!this.started) {
      this.started = true;
      for (const r of this.readers) {
        const rec = r.next();
        if (rec) this.push(rec, r);
      }
    } else if (this.pending) {
      // Advance the reader whose record was returned last time (its object is being reused).
      const rec = this.pending.next();
      this.pending = undefined;
      if (rec) {
        this.heap[0] = rec;
        this.siftDown(0);
      } else {
        const lastRec = this.heap.pop()!;
        const lastOwner = this.owner.pop()!;
        if (this.heap.length > 0) {
          this.heap[0] = lastRec;
          this.owner[0] = lastOwner;
          this.siftDown(0);
        }
      }
    }
    if (this.heap.length === 0) return undefined;
    this.pending = this.owner[0];
    return this.heap[0];
  }
}

function before(a: TraceRecord, b: TraceRecord): boolean {
  if (a.tsHigh !== b.tsHigh) return a.tsHigh < b.tsHigh;
  if (a.tsLow !== b.tsLow) return a.tsLow < b.tsLow;
  if (a.bufferIndex !== b.bufferIndex) return a.bufferIndex < b.bufferIndex;
  return a.cpu < b.cpu;
}
