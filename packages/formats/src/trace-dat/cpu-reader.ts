import { FormatError } from '../errors.js';
import { PageReader } from '../ring-buffer/page.js';
import type { RecordEventFormat, TraceRecord } from '../ring-buffer/trace-record.js';
import { Cursor } from './cursor.js';
import { decompressBlock, type BlockDecompressor } from './decompress.js';
import type { EventFormatTable } from './event-format-table.js';
import { type TimeShiftSample, type TraceDat, type TraceDatBuffer, timeShiftInterpolateFlag } from './trace-dat.js';

/** Pages read per window from uncompressed CPU data (bounded memory: 256 pages). */
const pagesPerWindow = 256;

/**
 * Reads the records of one CPU of one buffer of a trace.dat, in order, without touching other
 * CPUs' data. Memory is one window: 256 pages, or one decompressed chunk (version 7).
 * {@link next} returns the reader's one reused {@link TraceRecord}.
 */
export class CpuRecordReader<F extends RecordEventFormat = RecordEventFormat> {
  readonly cpu: number;
  readonly buffer: TraceDatBuffer;
  readonly record: TraceRecord<F>;
  /** Pages decoded so far. */
  pages = 0;

  private readonly dat: TraceDat;
  private readonly formats: EventFormatTable<F> | undefined;
  private readonly pageReader: PageReader<F>;
  private readonly pageSize: number;
  private readonly dataStart: number;
  private readonly dataLength: number;
  // Window state
  private window: Uint8Array = new Uint8Array(0);
  private windowView: DataView = new DataView(new ArrayBuffer(0));
  private windowInputOffset = 0;
  private pageInWindow = 0;
  private pageLoaded = false;
  // Uncompressed: next file offset to read. Compressed: chunk table position and count.
  private nextOffset: number;
  private chunksLeft = 0;
  private done = false;
  private readonly adjust: ((r: TraceRecord<F>) => void) | undefined;

  private readonly decompressor: BlockDecompressor | undefined;

  constructor(dat: TraceDat, buffer: TraceDatBuffer, cpu: number, formats?: EventFormatTable<F>, decompressor?: BlockDecompressor) {
    const desc = buffer.cpus.find((c) => c.cpu === cpu);
    if (!desc) throw new FormatError('not-found', `trace.dat: buffer '${buffer.name}' has no cpu ${cpu}`, { section: 'cpu data' });
    this.dat = dat;
    this.decompressor = decompressor;
    this.buffer = buffer;
    this.cpu = cpu;
    this.formats = formats;
    const layout = buffer.pageSize === dat.headerPage.subBufferSize ? dat.headerPage : { ...dat.headerPage, subBufferSize: buffer.pageSize, dataSize: buffer.pageSize - dat.headerPage.dataOffset };
    this.pageSize = layout.subBufferSize;
    this.pageReader = new PageReader<F>(layout, dat.littleEndian);
    this.record = this.pageReader.record;
    this.record.cpu = cpu;
    this.record.bufferIndex = buffer.index;
    this.record.bufferName = buffer.name;
    this.dataStart = desc.byteOffset;
    this.dataLength = desc.byteLength;
    this.nextOffset = desc.byteOffset;
    if (desc.byteLength === 0) this.done = true;
    else if (buffer.compressed) {
      const c = new Cursor(dat.source, dat.littleEndian, 0, `cpu ${cpu} chunks`, desc.byteOffset);
      this.chunksLeft = c.u32('chunk count');
      if (this.chunksLeft > desc.byteLength / 8) throw c.error('out-of-range', `${this.chunksLeft} chunks in ${desc.byteLength} bytes`, desc.byteOffset);
      this.nextOffset = c.offset;
    }
    this.adjust = makeAdjust<F>(dat, cpu);
  }

  /** Loads the next window; false at the end of the CPU's data. */
  private loadWindow(): boolean {
    if (this.done) return false;
    // The size trace-cmd stores for compressed CPU data leaves out the 4-byte chunk count.
    const end = this.dataStart + this.dataLength + (this.buffer.compressed ? 4 : 0);
    if (!this.buffer.compressed) {
      const left = end - this.nextOffset;
      if (left <= 0) {
        this.done = true;
        return false;
      }
      const length = Math.min(left, this.pageSize * pagesPerWindow);
      this.window = this.dat.source.read(this.nextOffset, length);
      this.windowInputOffset = this.nextOffset;
      this.nextOffset += length;
    } else {
      if (this.chunksLeft === 0) {
        this.done = true;
        return false;
      }
      const at = this.nextOffset;
      const c = new Cursor(this.dat.source, this.dat.littleEndian, 0, `cpu ${this.cpu} chunk`, at);
      const compressed = c.u32('chunk compressed size');
      const uncompressed = c.u32('chunk uncompressed size');
      if (c.offset + compressed > end) throw c.error('out-of-range', `chunk of ${compressed} bytes at ${at} past the cpu data end ${end}`, at);
      const data = c.bytes(compressed, 'chunk');
      this.window = decompressBlock(this.dat.compression?.name ?? 'none', data, uncompressed, at, `cpu ${this.cpu} chunk`, this.decompressor);
      this.windowInputOffset = at;
      this.nextOffset = c.offset;
      this.chunksLeft--;
    }
    this.windowView = new DataView(this.window.buffer, this.window.byteOffset, this.window.byteLength);
    this.pageInWindow = 0;
    return true;
  }

  /** Loads the next page; false at the end. */
  private loadPage(): boolean {
    for (;;) {
      const offset = this.pageInWindow * this.pageSize;
      if (offset < this.window.length) {
        const available = Math.min(this.pageSize, this.window.length - offset);
        this.pageInWindow++;
        // A compressed window's pages are addressed in decompressed space: errors name the chunk.
        const inputOffset = this.buffer.compressed ? this.windowInputOffset : this.windowInputOffset + offset;
        this.pageReader.load(this.window, this.windowView, offset, available, inputOffset);
        this.pages++;
        return true;
      }
      if (!this.loadWindow()) return false;
    }
  }

  /** The next record of this CPU, or undefined at the end. The returned object is reused. */
  next(): TraceRecord<F> | undefined {
    for (;;) {
      if (this.pageLoaded && this.pageReader.next()) {
        const r = this.record;
        if (this.formats !== undefined) r.format = this.formats.get(r.eventId);
        if (this.adjust !== undefined) this.adjust(r);
        return r;
      }
      this.pageLoaded = this.loadPage();
      if (!this.pageLoaded) return undefined;
    }
  }
}

const mask64 = (1n << 64n) - 1n;

/**
 * Timestamp correction of the TIME_SHIFT, TSC2NSEC and OFFSET options, in trace-cmd's order
 * (`timestamp_calc`): guest-to-host shift of this CPU, then TSC to ns, then the offset. BigInt,
 * only when the file has one of them.
 */
function makeAdjust<F extends RecordEventFormat>(dat: TraceDat, cpu: number): ((r: TraceRecord<F>) => void) | undefined {
  const offset = dat.timestampOffset;
  const t = dat.tsc2nsec;
  const samples = dat.timeShift?.cpus[cpu];
  const shift = samples !== undefined && samples.length > 0 ? samples : undefined;
  const interpolate = ((dat.timeShift?.flags ?? 0) & timeShiftInterpolateFlag) !== 0;
  if (offset === 0n && t === undefined && shift === undefined) return undefined;
  return (r) => {
    let ts = (BigInt(r.tsHigh) << 32n) | BigInt(r.tsLow);
    if (shift) ts = hostTime(ts, shift, interpolate);
    if (t) ts = ((ts * BigInt(t.multiplier)) >> BigInt(t.shift)) + t.offset;
    ts = (ts + offset) & mask64;
    r.tsHigh = Number(ts >> 32n);
    r.tsLow = Number(ts & 0xffffffffn);
  };
}

/**
 * A guest timestamp on the host clock (trace-cmd's `timestamp_host_sync`): one sample adds its
 * offset; otherwise the two samples around `ts` (the first or last two outside the range) give
 * the offset, interpolated when the flag says so, and the first of them scales the time.
 */
export function hostTime(ts: bigint, samples: readonly TimeShiftSample[], interpolate: boolean): bigint {
  const n = samples.length;
  if (n === 1) return (ts + samples[0]!.offset) & mask64;
  let lo: number;
  if (n === 2 || ts <= samples[0]!.time) lo = 0;
  else if (ts >= samples[n - 1]!.time) lo = n - 2;
  else {
    // Binary search as trace-cmd does it: the sample at or before ts.
    let min = 0;
    let max = n - 1;
    let mid = (min + max) >> 1;
    while (min <= max) {
      const time = samples[mid]!.time;
      if (ts < time) max = mid - 1;
      else if (ts > time) min = mid + 1;
      else break;
      mid = (min + max) >> 1;
    }
    lo = mid;
  }
  const a = samples[lo]!;
  const b = samples[lo + 1]!;
  let correction = a.offset;
  const delta = b.time - a.time;
  if (interpolate && delta !== 0n) {
    // C's signed 64-bit arithmetic; BigInt division truncates toward zero like C's.
    const signedTs = BigInt.asIntN(64, ts);
    correction = a.offset + BigInt.asIntN(64, BigInt.asIntN(64, (signedTs - a.time) * (b.offset - a.offset)) + delta / 2n) / delta;
  }
  const scaled = ((ts * BigInt.asUintN(64, a.scaling)) & mask64) >> a.fraction;
  return (scaled + correction) & mask64;
}
