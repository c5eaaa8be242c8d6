import { FormatError } from '../errors.js';
import type { HeaderPageLayout } from './header-page.js';
import { TraceRecord, type RecordEventFormat } from './trace-record.js';

/** `type_len` values of `struct ring_buffer_event` (kernel `RINGBUF_TYPE_*`). */
export const RingBufferType = {
  /** RINGBUF_TYPE_DATA_TYPE_LEN_MAX: type_len 1..28 is a data record of type_len * 4 bytes. */
  dataMaxTypeLen: 28,
  /** RINGBUF_TYPE_PADDING: time_delta 0 = rest of the page is empty; otherwise a discarded event. */
  padding: 29,
  /** RINGBUF_TYPE_TIME_EXTEND: time_delta | array[0] << 27 is added to the running time. */
  timeExtend: 30,
  /** RINGBUF_TYPE_TIME_STAMP: time_delta | array[0] << 27 is an absolute time (low 59 bits). */
  timeStamp: 31,
} as const;
export type RingBufferType = (typeof RingBufferType)[keyof typeof RingBufferType];

/** `commit` flag RB_MISSED_EVENTS: events were lost between the previous page and this one. */
export const missedEventsFlag = 0x80000000;
/** `commit` flag RB_MISSED_STORED: the lost-event count is stored (a `long`) after the data. */
export const missedStoredFlag = 0x40000000;
/** The data length bits of a sub-buffer's `commit` word (the two above them are flags). */
export const commitLengthMask = 0x3fffffff;
const TWO_32 = 4294967296;

/** The decoded header of one sub-buffer. */
export interface PageHeader {
  /** Absolute time of the page (ns). */
  timestamp: bigint;
  /** The `commit` word as stored (sign-extended flags included), unsigned. */
  commitRaw: bigint;
  /** Bytes of event data. */
  dataLength: number;
  /** RB_MISSED_EVENTS was set. */
  missedEvents: boolean;
  /** The stored lost-event count (RB_MISSED_STORED), or undefined. */
  missedCount: number | undefined;
}

function readLong(view: DataView, byteOffset: number, size: number, le: boolean): number {
  if (size === 4) return view.getUint32(byteOffset, le);
  const lo = view.getUint32(byteOffset + (le ? 0 : 4), le);
  const hi = view.getUint32(byteOffset + (le ? 4 : 0), le);
  return hi * TWO_32 + lo;
}

/** Decodes the header of the sub-buffer at `byteOffset` (see {@link HeaderPageLayout}). */
export function decodePageHeader(
  bytes: Uint8Array,
  byteOffset: number,
  layout: HeaderPageLayout,
  littleEndian = true,
): PageHeader {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const r = new PageReader(layout, littleEndian);
  r.load(bytes, view, byteOffset, Math.min(layout.subBufferSize, bytes.length - byteOffset));
  const le = littleEndian;
  const c = layout.commitOffset + byteOffset;
  const commitRaw =
    layout.commitSize === 8
      ? (BigInt(view.getUint32(c + (le ? 4 : 0), le)) << 32n) | BigInt(view.getUint32(c + (le ? 0 : 4), le))
      : BigInt(view.getUint32(c, le));
  return {
    timestamp: (BigInt(r.pageTsHigh) << 32n) | BigInt(r.pageTsLow),
    commitRaw,
    dataLength: r.dataLength,
    missedEvents: r.pageMissedEvents !== 0,
    missedCount: r.pageMissedEvents > 0 ? r.pageMissedEvents : undefined,
  };
}

/**
 * Decodes the events of one sub-buffer at a time, allocation-free: {@link load} a page, then call
 * {@link next} until it returns false; each true fills {@link record} (the same object every time).
 *
 * Time is kept as two 32-bit halves; time extends and absolute time stamps are applied as they
 * come, and are not returned as records (they are counted in {@link timeExtends}).
 * Every read is bounded by the page's data length; a record that crosses it is a
 * {@link FormatError} (`out-of-range`) with the input offset of the event header.
 */
export class PageReader<F extends RecordEventFormat = RecordEventFormat> {
  readonly layout: HeaderPageLayout;
  readonly littleEndian: boolean;
  /** The cursor `next()` fills; reused. */
  readonly record: TraceRecord<F>;
  /** Page timestamp, high and low halves. */
  pageTsHigh = 0;
  pageTsLow = 0;
  /** Bytes of event data in the current page. */
  dataLength = 0;
  /** Lost events announced by the current page: 0, -1 (count unknown) or the count. */
  pageMissedEvents = 0;
  /** Time extends and absolute time stamps seen in the current page. */
  timeExtends = 0;

  private bytes: Uint8Array = new Uint8Array(0);
  private view: DataView = new DataView(new ArrayBuffer(0));
  private pos = 0;
  private end = 0;
  private tsHigh = 0;
  private tsLow = 0;
  private first = true;
  private inputBase = 0;
  private pageStart = 0;

  constructor(layout: HeaderPageLayout, littleEndian = true, record: TraceRecord<F> = new TraceRecord<F>()) {
    this.layout = layout;
    this.littleEndian = littleEndian;
    this.record = record;
  }

  /**
   * Starts on the sub-buffer at `byteOffset` of `bytes` (`view` covers `bytes`), of which
   * `available` bytes exist (normally the sub-buffer size). `inputOffset` is the page's offset in
   * the whole input, used in errors.
   */
  load(bytes: Uint8Array, view: DataView, byteOffset: number, available: number, inputOffset = byteOffset): void {
    const L = this.layout;
    const le = this.littleEndian;
    if (available < L.dataOffset) {
      throw new FormatError('truncated', `ring-buffer page: ${available} bytes, header needs ${L.dataOffset}`, {
        byteOffset: inputOffset,
        section: 'ring-buffer page',
      });
    }
    const tsOff = byteOffset + L.timestampOffset;
    this.pageTsLow = view.getUint32(tsOff + (le ? 0 : 4), le);
    this.pageTsHigh = view.getUint32(tsOff + (le ? 4 : 0), le);
    const commitLow = view.getUint32(byteOffset + L.commitOffset + (le || L.commitSize === 4 ? 0 : 4), le);
    const dataLength = commitLow & commitLengthMask;
    const limit = Math.min(L.dataSize, available - L.dataOffset);
    if (dataLength > limit) {
      throw new FormatError('out-of-range', `ring-buffer page: commit ${dataLength} exceeds data size ${limit}`, {
        byteOffset: inputOffset + L.commitOffset,
        section: 'ring-buffer page',
      });
    }
    let missed = 0;
    if ((commitLow & missedEventsFlag) !== 0) {
      missed = -1;
      if ((commitLow & missedStoredFlag) !== 0) {
        const at = L.dataOffset + dataLength;
        if (at + L.commitSize > available) {
          throw new FormatError('out-of-range', `ring-buffer page: missed-events count at ${at} past the page`, {
            byteOffset: inputOffset + at,
            section: 'ring-buffer page',
          });
        }
        missed = readLong(view, byteOffset + at, L.commitSize, le);
      }
    }
    this.bytes = bytes;
    this.view = view;
    this.dataLength = dataLength;
    this.pageMissedEvents = missed;
    this.pageStart = byteOffset;
    this.pos = byteOffset + L.dataOffset;
    this.end = this.pos + dataLength;
    this.tsHigh = this.pageTsHigh;
    this.tsLow = this.pageTsLow;
    this.first = true;
    this.timeExtends = 0;
    this.inputBase = inputOffset - byteOffset;
  }

  /** Offset of the next event header in the input (for errors and resumption). */
  get inputPosition(): number {
    return this.inputBase + this.pos;
  }

  /** Offset of the current page in `bytes`. */
  get pageOffset(): number {
    return this.pageStart;
  }

  private fail(code: 'out-of-range' | 'malformed', what: string, at: number): never {
    throw new FormatError(code, `ring-buffer page: ${what}`, { byteOffset: this.inputBase + at, section: 'ring-buffer page' });
  }

  /** Advances to the next data record of the page; false when the page is done. */
  next(): boolean {
    const view = this.view;
    const le = this.littleEndian;
    const end = this.end;
    let pos = this.pos;
    while (pos < end) {
      if (pos + 4 > end) this.fail('out-of-range', `event header at ${pos - this.pageStart} crosses the data end`, pos);
      const word = view.getUint32(pos, le);
      let typeLen: number;
      let delta: number;
      if (le) {
        typeLen = word & 31;
        delta = word >>> 5;
      } else {
        typeLen = word >>> 27;
        delta = word & 0x7ffffff;
      }
      if (typeLen === 0 || typeLen <= RingBufferType.dataMaxTypeLen) {
        let dataAt: number;
        let length: number;
        if (typeLen === 0) {
          if (pos + 8 > end) this.fail('out-of-range', `long record at ${pos - this.pageStart} crosses the data end`, pos);
          const stored = view.getUint32(pos + 4, le);
          if (stored < 4) this.fail('malformed', `long record length ${stored} below 4`, pos + 4);
          length = stored - 4;
          dataAt = pos + 8;
        } else {
          length = typeLen * 4;
          dataAt = pos + 4;
        }
        // Aligned to 4 without 32-bit bitwise ops on the length (a hostile one may exceed 2^31).
        const next = dataAt + length + ((4 - (length & 3)) & 3);
        if (next > end) {
          this.fail('out-of-range', `record of ${length} bytes at ${pos - this.pageStart} crosses the data end ${end - this.pageStart}`, pos);
        }
        // ts += delta (27 bits), carried into the high half.
        let lo = this.tsLow + delta;
        if (lo >= TWO_32) {
          lo -= TWO_32;
          this.tsHigh = (this.tsHigh + 1) >>> 0;
        }
        this.tsLow = lo;
        this.pos = next;
        const r = this.record;
        r.tsHigh = this.tsHigh;
        r.tsLow = lo;
        r.bytes = this.bytes;
        r.view = view;
        r.recordOffset = dataAt;
        r.recordLength = length;
        r.inputOffset = this.inputBase + dataAt;
        r.eventId = length >= 2 ? view.getUint16(dataAt, le) : -1;
        r.missedEvents = this.first ? this.pageMissedEvents : 0;
        this.first = false;
        return true;
      }
      if (typeLen === RingBufferType.padding) {
        if (delta === 0) break; // the rest of the page is padding
        if (pos + 8 > end) this.fail('out-of-range', `padding at ${pos - this.pageStart} crosses the data end`, pos);
        const size = view.getUint32(pos + 4, le);
        const next = pos + 4 + size;
        if (size < 4 || next > end) this.fail('out-of-range', `padding of ${size} bytes at ${pos - this.pageStart} crosses the data end`, pos);
        this.addDelta(0, delta);
        pos = (next + 3) & ~3;
        continue;
      }
      if (pos + 8 > end) this.fail('out-of-range', `time event at ${pos - this.pageStart} crosses the data end`, pos);
      const array = view.getUint32(pos + 4, le);
      // 59-bit value: array << 27 | delta, as high and low halves.
      const hi = array >>> 5;
      const lo = (((array & 31) << 27) | delta) >>> 0;
      if (typeLen === RingBufferType.timeExtend) {
        this.addDelta(hi, lo);
      } else {
        // Absolute time stamp: the kernel keeps the top 5 bits of the running time (rb_fix_abs_ts).
        const msb = this.tsHigh & 0xf8000000;
        let absHigh = (hi | msb) >>> 0;
        if (msb !== 0 && (absHigh < this.tsHigh || (absHigh === this.tsHigh && lo < this.tsLow))) {
          absHigh = (absHigh + 0x8000000) >>> 0;
        }
        this.tsHigh = absHigh;
        this.tsLow = lo;
      }
      this.timeExtends++;
      pos += 8;
    }
    this.pos = end;
    return false;
  }

  private addDelta(hi: number, lo: number): void {
    let l = this.tsLow + lo;
    let h = this.tsHigh + hi;
    if (l >= TWO_32) {
      l -= TWO_32;
      h += 1;
    }
    this.tsLow = l;
    this.tsHigh = h >>> 0;
  }
}
