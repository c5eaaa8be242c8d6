import { FormatError } from '../errors.js';
import type { RecordEventFormat } from '../ring-buffer/trace-record.js';
import { MemoryByteSource, type ByteSource } from './byte-source.js';
import type { BlockDecompressor } from './decompress.js';
import { CpuRecordReader } from './cpu-reader.js';
import { EventFormatTable, parseBasicEventFormat, type BasicEventFormat, type EventFormatParser } from './event-format-table.js';
import { MergedRecordReader } from './merge.js';
import { decodeTraceDat, type TraceDat, type TraceDatBuffer } from './trace-dat.js';

export interface OpenTraceDatOptions<F extends RecordEventFormat> {
  /** Parses event format files (default: name and id only). */
  parseFormat?: EventFormatParser<F>;
}

/** Which records {@link TraceDatReader.records} merges. */
export interface RecordSelection {
  /** Buffer names ('' = top instance); default all. */
  buffers?: readonly string[];
  /** CPUs; default all. */
  cpus?: readonly number[];
}

/**
 * A trace.dat opened for reading records: its metadata ({@link dat}), its event formats by id,
 * per-CPU readers (random access to one CPU) and the time-ordered merge of all CPUs.
 */
export class TraceDatReader<F extends RecordEventFormat = BasicEventFormat> {
  readonly dat: TraceDat;
  readonly formats: EventFormatTable<F>;
  /**
   * Decompresses CPU data chunks before the built-in decoders are tried (the Node side sets a
   * worker-thread prefetcher here); called with the chunk's file offset.
   */
  decompressor: BlockDecompressor | undefined;

  constructor(dat: TraceDat, parseFormat: EventFormatParser<F>) {
    this.dat = dat;
    this.formats = new EventFormatTable<F>(
      [...dat.ftraceFormats.map((text) => ({ system: 'ftrace', text })), ...dat.eventFormats],
      parseFormat,
    );
  }

  /** The buffer with this name or index. */
  buffer(which: string | number): TraceDatBuffer {
    const b = typeof which === 'number' ? this.dat.buffers[which] : this.dat.buffers.find((x) => x.name === which);
    if (!b) throw new FormatError('not-found', `trace.dat: no buffer ${JSON.stringify(which)}`, { section: 'buffers' });
    return b;
  }

  /** Records of one CPU of one buffer, in order; reads no other CPU's data. */
  cpuReader(buffer: string | number, cpu: number): CpuRecordReader<F> {
    return new CpuRecordReader<F>(this.dat, this.buffer(buffer), cpu, this.formats, this.decompressor);
  }

  /** All selected records merged in timestamp order (ties: buffer, then CPU). */
  records(selection: RecordSelection = {}): MergedRecordReader<F> {
    const readers: CpuRecordReader<F>[] = [];
    for (const b of this.dat.buffers) {
      if (b.latency) continue;
      if (selection.buffers && !selection.buffers.includes(b.name)) continue;
      for (const c of b.cpus) {
        if (selection.cpus && !selection.cpus.includes(c.cpu)) continue;
        if (c.byteLength === 0) continue;
        readers.push(new CpuRecordReader<F>(this.dat, b, c.cpu, this.formats, this.decompressor));
      }
    }
    return new MergedRecordReader<F>(readers);
  }
}

/** Opens a trace.dat from bytes or a {@link ByteSource}: decodes its metadata now, records on demand. */
export function openTraceDat(input: Uint8Array | ByteSource): TraceDatReader<BasicEventFormat>;
export function openTraceDat<F extends RecordEventFormat>(input: Uint8Array | ByteSource, options: OpenTraceDatOptions<F> & { parseFormat: EventFormatParser<F> }): TraceDatReader<F>;
export function openTraceDat<F extends RecordEventFormat>(input: Uint8Array | ByteSource, options: OpenTraceDatOptions<F> = {}): TraceDatReader<F> {
  const source = input instanceof Uint8Array ? new MemoryByteSource(input) : input;
  const parse = (options.parseFormat ?? parseBasicEventFormat) as EventFormatParser<F>;
  return new TraceDatReader<F>(decodeTraceDat(source), parse);
}
