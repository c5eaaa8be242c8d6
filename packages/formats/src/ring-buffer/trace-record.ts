/**
 * The fields of an event format that record readers need. The full `EventFormat` of the
 * event-format parser satisfies it structurally.
 */
export interface RecordEventFormat {
  system: string;
  name: string;
  id: number;
}

const TWO_32 = 4294967296;

/**
 * One decoded ring-buffer data record: where its bytes are, when and on which CPU it happened,
 * and which event it is. Field access is lazy: the record's bytes stay in the page they came from
 * (`bytes`/`view` at `recordOffset`, `recordLength` bytes, starting at `common_type`).
 *
 * Readers REUSE one instance: every `next()` overwrites it. Call {@link TraceRecord.clone} to
 * keep a record past the next call.
 *
 * The 64-bit timestamp is held as two unsigned 32-bit halves (`tsHigh`, `tsLow`, nanoseconds);
 * {@link TraceRecord.timestampNs} is a number (exact below 2^53 ns, about 104 days of uptime;
 * check {@link TraceRecord.isTimestampExact}) and {@link TraceRecord.timestamp} a bigint.
 */
export class TraceRecord<F extends RecordEventFormat = RecordEventFormat> {
  /** CPU whose buffer the record came from. */
  cpu = 0;
  /** Index of the buffer (trace-cmd instance) in its source; 0 for the top instance. */
  bufferIndex = 0;
  /** Name of the buffer (trace-cmd instance, tracefs instance); '' for the top instance. */
  bufferName = '';
  /** Upper 32 bits of the timestamp (ns). */
  tsHigh = 0;
  /** Lower 32 bits of the timestamp (ns), unsigned. */
  tsLow = 0;
  /** The bytes the record lives in (a page or a decompressed chunk). */
  bytes: Uint8Array = new Uint8Array(0);
  /** A DataView over exactly `bytes` (same buffer, same byte offset). */
  view: DataView = new DataView(new ArrayBuffer(0));
  /** Offset of the record (its `common_type`) in `bytes`. */
  recordOffset = 0;
  /** Length of the record in bytes (a multiple of 4 for short records: includes alignment padding). */
  recordLength = 0;
  /** `common_type`: the event id. */
  eventId = 0;
  /** The event's format when the source knows it. */
  format: F | undefined = undefined;
  /**
   * Events lost just before this record (the first record of a page whose header carries the
   * kernel's missed-events flag): 0 none, -1 lost but count unknown, otherwise the count.
   */
  missedEvents = 0;
  /** Offset of the record in the whole input (file offset for trace.dat), for error messages. */
  inputOffset = 0;

  /** The timestamp in ns as a number (exact when {@link isTimestampExact}). */
  get timestampNs(): number {
    return this.tsHigh * TWO_32 + this.tsLow;
  }

  /** True when {@link timestampNs} is exact (below 2^53). */
  get isTimestampExact(): boolean {
    return this.tsHigh < 0x200000;
  }

  /** The exact 64-bit timestamp in ns. */
  timestamp(): bigint {
    return (BigInt(this.tsHigh) << 32n) | BigInt(this.tsLow);
  }

  /** The record's bytes as a view (no copy; valid while the source keeps the page). */
  data(): Uint8Array {
    return this.bytes.subarray(this.recordOffset, this.recordOffset + this.recordLength);
  }

  /** A detached copy that owns its bytes (the record starts at offset 0). */
  clone(): TraceRecord<F> {
    const c = new TraceRecord<F>();
    c.cpu = this.cpu;
    c.bufferIndex = this.bufferIndex;
    c.bufferName = this.bufferName;
    c.tsHigh = this.tsHigh;
    c.tsLow = this.tsLow;
    c.bytes = this.data().slice();
    c.view = new DataView(c.bytes.buffer, c.bytes.byteOffset, c.bytes.byteLength);
    c.recordOffset = 0;
    c.recordLength = this.recordLength;
    c.eventId = this.eventId;
    c.format = this.format;
    c.missedEvents = this.missedEvents;
    c.inputOffset = this.inputOffset;
    return c;
  }
}

/** Compares two records by timestamp (then buffer, then CPU): negative when `a` comes first. */
export function compareRecords(a: TraceRecord, b: TraceRecord): number {
  return a.tsHigh - b.tsHigh || a.tsLow - b.tsLow || a.bufferIndex - b.bufferIndex || a.cpu - b.cpu;
}
