import type { RecordEventFormat, TraceRecord } from './ring-buffer/trace-record.js';
import type { RecordReader } from './trace-dat/merge.js';
import type { TraceDatReader } from './trace-dat/trace-dat-reader.js';

/**
 * What a consumer of records needs to know about where they come from, whether a trace.dat
 * replay or the live tracefs feed.
 */
export interface RecordStreamInfo<F extends RecordEventFormat = RecordEventFormat> {
  kind: 'trace-dat' | 'tracefs';
  /** CPUs of the traced machine. */
  cpuCount: number;
  /** Byte order of the records. */
  littleEndian: boolean;
  /** Size of the kernel's `long` (4 or 8). */
  longSize: 4 | 8;
  /** Event id → format. */
  format(id: number): F | undefined;
  /** The command name of a pid (saved_cmdlines), when known. */
  comm(pid: number): string | undefined;
}

/** Counters of a stream so far. */
export interface RecordStreamStats {
  /** Records delivered. */
  records: number;
  /** Events the kernel reported lost (sum of stored counts). */
  lostEvents: number;
  /** Pages that reported lost events without a count. */
  lostUnknown: number;
  /**
   * Events lost per CPU (index = CPU): stored counts, plus one for each page that reported a loss
   * without a count (a lower bound), or, on the live feed, the ring buffer's own per-CPU
   * accounting (`per_cpu/cpuN/stats`: overrun, commit overrun, dropped events) when that is larger.
   */
  lostByCpu: number[];
}

/**
 * A run of records available synchronously. `next()` returns one reused {@link TraceRecord}
 * (valid until the following call) or undefined at the end of the batch.
 */
export interface RecordBatch<F extends RecordEventFormat = RecordEventFormat> {
  next(): TraceRecord<F> | undefined;
}

/**
 * The one stream interface of records: an async sequence of synchronous batches (so the per-record
 * path has no `await`), in time order, from a trace.dat replay or the live tracefs feed alike.
 * Iterate it once; `close()` releases what it holds (file, tracefs instance) and ends iteration.
 */
export interface RecordStream<F extends RecordEventFormat = RecordEventFormat> extends AsyncIterable<RecordBatch<F>> {
  readonly info: RecordStreamInfo<F>;
  readonly stats: RecordStreamStats;
  close(): Promise<void>;
}

/** Flattens a stream into single records (each the reused cursor of its batch). */
export async function* streamRecords<F extends RecordEventFormat>(stream: RecordStream<F>): AsyncGenerator<TraceRecord<F>> {
  for await (const batch of stream) {
    for (let r = batch.next(); r; r = batch.next()) yield r;
  }
}

/** Wraps a synchronous reader as batches of at most `size` records, counting into `stats`. */
export class CountingBatch<F extends RecordEventFormat> implements RecordBatch<F> {
  private left = 0;
  ended = false;
  constructor(
    private readonly reader: RecordReader<F>,
    private readonly stats: RecordStreamStats,
  ) {}
  reset(size: number): void {
    this.left = size;
  }
  next(): TraceRecord<F> | undefined {
    if (this.left <= 0) return undefined;
    const r = this.reader.next();
    if (r === undefined) {
      this.ended = true;
      this.left = 0;
      return undefined;
    }
    this.left--;
    this.stats.records++;
    if (r.missedEvents !== 0) {
      const by = this.stats.lostByCpu;
      while (by.length <= r.cpu) by.push(0);
      if (r.missedEvents > 0) {
        this.stats.lostEvents += r.missedEvents;
        by[r.cpu]! += r.missedEvents;
      } else {
        this.stats.lostUnknown++;
        by[r.cpu]!++;
      }
    }
    return r;
  }
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/** Options of {@link traceDatRecordStream}. */
export interface TraceDatStreamOptions {
  /** Records per batch (default 65536). */
  batchSize?: number;
  /** Buffer names to replay ('' = top instance); default all. */
  buffers?: readonly string[];
}

/** A trace.dat replay as a {@link RecordStream}: all selected CPUs merged in time order. */
export function traceDatRecordStream<F extends RecordEventFormat>(
  reader: TraceDatReader<F>,
  options: TraceDatStreamOptions = {},
): RecordStream<F> {
  const dat = reader.dat;
  const stats: RecordStreamStats = { records: 0, lostEvents: 0, lostUnknown: 0, lostByCpu: new Array<number>(dat.cpuCount).fill(0) };
  const batchSize = options.batchSize ?? 65536;
  let closed = false;
  return {
    info: {
      kind: 'trace-dat',
      cpuCount: dat.cpuCount,
      littleEndian: dat.littleEndian,
      longSize: dat.headerPage.commitSize === 4 ? 4 : 8,
      format: (id) => reader.formats.get(id),
      comm: (pid) => (pid === 0 ? '<idle>' : dat.cmdlines.get(pid)),
    },
    stats,
    async close() {
      closed = true;
    },
    async *[Symbol.asyncIterator]() {
      const batch = new CountingBatch<F>(reader.records(options.buffers ? { buffers: options.buffers } : {}), stats);
      while (!closed && !batch.ended) {
        batch.reset(batchSize);
        yield batch;
        if (!batch.ended) await yieldToEventLoop();
      }
    },
  };
}
