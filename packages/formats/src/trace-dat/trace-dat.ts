import { FormatError } from '../errors.js';
import { parseHeaderEvent, type HeaderEventLayout } from '../ring-buffer/header-event.js';
import { parseHeaderPage, type HeaderPageLayout } from '../ring-buffer/header-page.js';
import { MemoryByteSource, type ByteSource } from './byte-source.js';
import { Cursor, decodeCString } from './cursor.js';
import { decompressBlock } from './decompress.js';

/** Magic of a trace-cmd file: 0x17 0x08 0x44 "tracing". */
export const traceDatMagic = Uint8Array.of(0x17, 0x08, 0x44, 0x74, 0x72, 0x61, 0x63, 0x69, 0x6e, 0x67);

/**
 * Option ids of trace-cmd files (`enum tracecmd_file_options`, TRACECMD_OPTION_*). In version 7
 * the ids 15..22 double as section ids (and 0 = options, 3 = flyrecord buffer data).
 */
export const TraceDatOption = {
  done: 0,
  date: 1,
  cpuStat: 2,
  buffer: 3,
  traceClock: 4,
  uname: 5,
  hook: 6,
  offset: 7,
  cpuCount: 8,
  version: 9,
  procMaps: 10,
  traceId: 11,
  timeShift: 12,
  guest: 13,
  tsc2nsec: 14,
  strings: 15,
  headerInfo: 16,
  ftraceEvents: 17,
  eventFormats: 18,
  kallsyms: 19,
  printk: 20,
  cmdlines: 21,
  bufferText: 22,
} as const;
export type TraceDatOption = (typeof TraceDatOption)[keyof typeof TraceDatOption];

/** Section flag TRACECMD_SEC_FL_COMPRESS. */
export const sectionCompressedFlag = 1;

/** Where one CPU's ring-buffer pages are in the file. */
export interface TraceDatCpu {
  cpu: number;
  /** File offset of the CPU data (of its chunk table when the buffer is compressed). */
  byteOffset: number;
  /** Bytes in the file (compressed size when compressed). */
  byteLength: number;
}

/** One recorded buffer: the top instance (`name` '') or a tracefs instance. */
export interface TraceDatBuffer {
  index: number;
  name: string;
  clock: string;
  /** Sub-buffer size of this buffer's pages. */
  pageSize: number;
  /** CPU data is compressed in chunks (version 7). */
  compressed: boolean;
  /** Holds latency-format text instead of pages (BUFFER_TEXT). */
  latency: boolean;
  cpus: TraceDatCpu[];
}

/** An option as stored: id, its data, and its file offset. */
export interface TraceDatRawOption {
  id: number;
  byteOffset: number;
  data: Uint8Array;
}

/** Timestamp conversion of TRACECMD_OPTION_TSC2NSEC: ns = (ts * multiplier) >> shift + offset. */
export interface Tsc2Nsec {
  multiplier: number;
  shift: number;
  offset: bigint;
}

/** One sample of a TIME_SHIFT option: from `time` on, add `offset` (and scale by `scaling >> fraction`). */
export interface TimeShiftSample {
  time: bigint;
  offset: bigint;
  scaling: bigint;
  fraction: bigint;
}

/**
 * The TIME_SHIFT option of a guest's recording (trace-cmd's host/guest time synchronisation):
 * per guest CPU, samples of the offset to the host clock, sorted by time.
 */
export interface TimeShift {
  /** The host's trace id. */
  peerTraceId: bigint;
  /** TRACECMD_TSYNC_FLAG_*: bit 0 (interpolate) interpolates the offset between samples. */
  flags: number;
  cpus: TimeShiftSample[][];
}

/** TRACECMD_TSYNC_FLAG_INTERPOLATE. */
export const timeShiftInterpolateFlag = 1;

/** A section (or v6 block) whose bytes are read only when asked for. */
interface LazyText {
  load(): string;
}

/**
 * The metadata of a trace-cmd `trace.dat` (file versions 6 and 7): everything but the ring-buffer
 * pages, which {@link TraceDat.buffers} locates and the record readers decode.
 */
export interface TraceDatInfo {
  version: number;
  littleEndian: boolean;
  /** Size of a `long` of the traced user space (4 or 8). */
  longSize: number;
  /** Page size of the traced machine. */
  pageSize: number;
  /** Compression of version 7 files ({name: 'none'} when uncompressed; undefined in version 6). */
  compression: { name: string; version: string } | undefined;
  headerPageText: string;
  headerEventText: string;
  headerPage: HeaderPageLayout;
  headerEvent: HeaderEventLayout;
  /** Format files of the `ftrace` system. */
  ftraceFormats: string[];
  /** Format files of every other system. */
  eventFormats: { system: string; text: string }[];
  /** saved_cmdlines as pid → comm. */
  cmdlines: Map<number, string>;
  /** Number of CPUs (CPUCOUNT, or the v6 header count). */
  cpuCount: number;
  buffers: TraceDatBuffer[];
  /** Every option as stored, in file order. */
  options: TraceDatRawOption[];
  traceClock: string | undefined;
  uname: string | undefined;
  traceCmdVersion: string | undefined;
  date: string | undefined;
  /** OFFSET option: ns added to every timestamp. */
  timestampOffset: bigint;
  tsc2nsec: Tsc2Nsec | undefined;
  /** TIME_SHIFT option: the guest-to-host clock correction, applied before TSC2NSEC and OFFSET. */
  timeShift: TimeShift | undefined;
  /** per_cpu/cpuN/stats text of each CPU (CPUSTAT options), in file order. */
  cpuStats: string[];
  traceId: bigint | undefined;
}

/** The decoded metadata plus lazily read text blocks (kallsyms is megabytes). */
export class TraceDat implements TraceDatInfo {
  version = 0;
  littleEndian = true;
  longSize = 8;
  pageSize = 4096;
  compression: { name: string; version: string } | undefined = undefined;
  headerPageText = '';
  headerEventText = '';
  headerPage!: HeaderPageLayout;
  headerEvent!: HeaderEventLayout;
  ftraceFormats: string[] = [];
  eventFormats: { system: string; text: string }[] = [];
  cmdlines = new Map<number, string>();
  cpuCount = 0;
  buffers: TraceDatBuffer[] = [];
  options: TraceDatRawOption[] = [];
  traceClock: string | undefined = undefined;
  uname: string | undefined = undefined;
  traceCmdVersion: string | undefined = undefined;
  date: string | undefined = undefined;
  timestampOffset = 0n;
  tsc2nsec: Tsc2Nsec | undefined = undefined;
  timeShift: TimeShift | undefined = undefined;
  cpuStats: string[] = [];
  traceId: bigint | undefined = undefined;
  /** The input the file is read from (the record readers read CPU data from it). */
  readonly source: ByteSource;
  private kallsymsLazy: LazyText | undefined;
  private printkLazy: LazyText | undefined;
  private kallsymsCache: string | undefined;
  private printkCache: string | undefined;

  constructor(source: ByteSource) {
    this.source = source;
  }

  /** /proc/kallsyms of the traced machine ('' when absent); read on first use. */
  get kallsymsText(): string {
    this.kallsymsCache ??= this.kallsymsLazy?.load() ?? '';
    return this.kallsymsCache;
  }

  /** printk_formats of the traced machine ('' when absent); read on first use. */
  get printkText(): string {
    this.printkCache ??= this.printkLazy?.load() ?? '';
    return this.printkCache;
  }

  /** @internal */
  setLazy(kind: 'kallsyms' | 'printk', lazy: LazyText): void {
    if (kind === 'kallsyms') this.kallsymsLazy = lazy;
    else this.printkLazy = lazy;
  }
}

/** Limits of {@link decodeTraceDat}: counts beyond these are `out-of-range`. */
const maxSections = 4096;
const maxFormats = 1 << 16;
const maxCpus = 1 << 14;

/**
 * Decodes the metadata of a trace.dat (version 6 or 7) from `source`. Reads only what it needs:
 * kallsyms and printk formats are loaded on first access, CPU data by the record readers.
 * Throws {@link FormatError} with the offset of the first byte that does not fit.
 */
export function decodeTraceDat(source: ByteSource): TraceDat {
  const dat = new TraceDat(source);
  const head = new Cursor(source, true, 0, 'trace.dat header');
  const magic = head.bytes(10, 'magic');
  if (!magic.every((b, i) => b === traceDatMagic[i])) {
    throw new FormatError('malformed', 'trace.dat header: bad magic (not a trace-cmd file)', { byteOffset: 0, section: 'trace.dat header' });
  }
  const versionText = head.cstring('version');
  const version = Number(versionText);
  if (!/^\d+$/.test(versionText)) throw head.error('malformed', `version '${versionText}' is not a number`, 10);
  if (version !== 6 && version !== 7) throw head.error('unsupported', `file version ${version} (6 and 7 are read)`, 10);
  dat.version = version;
  const endian = head.u8('endianness');
  if (endian > 1) throw head.error('malformed', `endianness byte ${endian}`, head.offset - 1);
  dat.littleEndian = endian === 0;
  dat.longSize = head.u8('long size');
  if (dat.longSize !== 4 && dat.longSize !== 8) throw head.error('malformed', `long size ${dat.longSize}`, head.offset - 1);
  const c = new Cursor(source, dat.littleEndian, 0, 'trace.dat header', head.offset);
  dat.pageSize = c.u32('page size');
  if (dat.pageSize < 64 || dat.pageSize > 1 << 24 || (dat.pageSize & (dat.pageSize - 1)) !== 0) {
    throw c.error('malformed', `page size ${dat.pageSize}`, c.offset - 4);
  }
  if (version === 6) decodeV6(dat, c);
  else decodeV7(dat, c);
  if (!dat.headerPage) throw new FormatError('not-found', 'trace.dat: no header_page', { section: 'header info' });
  return dat;
}

// ---------------------------------------------------------------------------------------------
// Blocks shared by versions 6 and 7

function readHeaderInfo(dat: TraceDat, c: Cursor): void {
  const pageTag = c.text(12, 'header_page tag');
  if (pageTag !== 'header_page\0') throw c.error('malformed', `expected "header_page", found ${JSON.stringify(pageTag)}`, c.offset - 12);
  const pageSize = c.u64('header_page size');
  dat.headerPageText = c.text(pageSize, 'header_page');
  const eventTag = c.text(13, 'header_event tag');
  if (eventTag !== 'header_event\0') throw c.error('malformed', `expected "header_event", found ${JSON.stringify(eventTag)}`, c.offset - 13);
  const eventSize = c.u64('header_event size');
  dat.headerEventText = c.text(eventSize, 'header_event');
  try {
    dat.headerPage = parseHeaderPage(dat.headerPageText);
    dat.headerEvent = parseHeaderEvent(dat.headerEventText);
  } catch (e) {
    if (e instanceof FormatError) throw e.withPrefix(`trace.dat header info at ${c.base}`);
    throw e;
  }
}

function readFormatList(c: Cursor, what: string): string[] {
  const count = c.u32(`${what} count`);
  if (count > maxFormats) throw c.error('out-of-range', `${count} ${what}`, c.offset - 4);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const size = c.u64(`${what} ${i} size`);
    out.push(c.text(size, `${what} ${i}`));
  }
  return out;
}

function readFtraceEvents(dat: TraceDat, c: Cursor): void {
  dat.ftraceFormats = readFormatList(c, 'ftrace format');
}

function readEventFormats(dat: TraceDat, c: Cursor): void {
  const systems = c.u32('system count');
  if (systems > maxFormats) throw c.error('out-of-range', `${systems} systems`, c.offset - 4);
  for (let s = 0; s < systems; s++) {
    const system = c.cstring('system name');
    for (const text of readFormatList(c, `${system} format`)) dat.eventFormats.push({ system, text });
  }
}

function lazyBlock(c: Cursor, sizeBytes: 4 | 8, what: string): LazyText {
  const size = sizeBytes === 4 ? c.u32(`${what} size`) : c.u64(`${what} size`);
  const at = c.offset;
  if (at + size > c.source.byteLength) throw c.error('truncated', `${what} of ${size} bytes at ${c.base + at} past the end`, at);
  c.offset += size;
  const source = c.source;
  return { load: () => new TextDecoder().decode(source.read(at, size)) };
}

function readCmdlines(dat: TraceDat, c: Cursor): void {
  const size = c.u64('cmdlines size');
  const text = c.text(size, 'cmdlines');
  for (const line of text.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp <= 0) continue;
    const pid = Number(line.slice(0, sp));
    if (Number.isInteger(pid)) dat.cmdlines.set(pid, line.slice(sp + 1));
  }
}

// ---------------------------------------------------------------------------------------------
// Version 6: one header after the other, then options and "flyrecord"

function decodeV6(dat: TraceDat, c: Cursor): void {
  readHeaderInfo(dat, c);
  readFtraceEvents(dat, c);
  readEventFormats(dat, c);
  dat.setLazy('kallsyms', lazyBlock(c, 4, 'kallsyms'));
  dat.setLazy('printk', lazyBlock(c, 4, 'printk formats'));
  readCmdlines(dat, c);
  const cpus = c.u32('cpu count');
  if (cpus > maxCpus) throw c.error('out-of-range', `${cpus} cpus`, c.offset - 4);
  dat.cpuCount = cpus;
  let tag = c.text(10, 'data tag');
  const v6Buffers: { name: string; byteOffset: number }[] = [];
  if (tag === 'options  \0') {
    for (let n = 0; ; n++) {
      if (n > maxSections) throw c.error('out-of-range', 'too many options');
      const at = c.offset;
      const id = c.u16('option id');
      if (id === 0) break;
      const size = c.u32('option size');
      const data = c.bytes(size, `option ${id}`);
      dat.options.push({ id, byteOffset: at, data });
      const oc = new Cursor(new MemoryByteSource(data), dat.littleEndian, at + 6, `option ${id}`);
      if (id === TraceDatOption.buffer) {
        const byteOffset = oc.u64('buffer offset');
        v6Buffers.push({ byteOffset, name: oc.cstring('buffer name') });
      } else {
        applyOption(dat, id, oc);
      }
    }
    tag = c.text(10, 'data tag');
  }
  if (tag === 'latency  \0') {
    dat.buffers.push({ index: 0, name: '', clock: dat.traceClock ?? 'local', pageSize: dat.headerPage.subBufferSize, compressed: false, latency: true, cpus: [] });
    return;
  }
  if (tag !== 'flyrecord\0') throw c.error('malformed', `expected "flyrecord", found ${JSON.stringify(tag)}`, c.offset - 10);
  const readCpus = (cc: Cursor): TraceDatCpu[] => {
    const out: TraceDatCpu[] = [];
    for (let cpu = 0; cpu < cpus; cpu++) {
      const at = cc.offset;
      const byteOffset = cc.u64(`cpu ${cpu} offset`);
      const byteLength = cc.u64(`cpu ${cpu} size`);
      checkCpuRange(dat, cpu, byteOffset, byteLength, cc.base + at);
      out.push({ cpu, byteOffset, byteLength });
    }
    return out;
  };
  const clock = dat.traceClock ?? 'local';
  dat.buffers.push({ index: 0, name: '', clock, pageSize: dat.headerPage.subBufferSize, compressed: false, latency: false, cpus: readCpus(c) });
  for (const b of v6Buffers) {
    // An instance's CPU table: optionally the "flyrecord" tag, then (offset, size) per CPU.
    const bc = new Cursor(dat.source, dat.littleEndian, 0, `buffer ${b.name}`, b.byteOffset);
    const probe = bc.text(10, 'buffer tag');
    if (probe !== 'flyrecord\0') bc.offset = b.byteOffset;
    dat.buffers.push({ index: dat.buffers.length, name: b.name, clock, pageSize: dat.headerPage.subBufferSize, compressed: false, latency: false, cpus: readCpus(bc) });
  }
}

function checkCpuRange(dat: TraceDat, cpu: number, byteOffset: number, byteLength: number, at: number): void {
  if (byteLength > 0 && byteOffset + byteLength > dat.source.byteLength) {
    throw new FormatError('out-of-range', `cpu ${cpu} data of ${byteLength} bytes at ${byteOffset} past the end ${dat.source.byteLength}`, {
      byteOffset: at,
      section: 'cpu data',
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Version 7: compression header, then sections found through options

interface SectionHeader {
  id: number;
  flags: number;
  stringId: number;
  size: number;
  /** File offset of the content (after the 16-byte header). */
  contentOffset: number;
}

function readSectionHeader(dat: TraceDat, byteOffset: number, what: string): SectionHeader {
  const c = new Cursor(dat.source, dat.littleEndian, 0, `section ${what}`, byteOffset);
  const id = c.u16('section id');
  const flags = c.u16('section flags');
  const stringId = c.u32('section string id');
  const size = c.u64('section size');
  if (c.offset + size > dat.source.byteLength) {
    throw new FormatError('out-of-range', `section ${what}: ${size} bytes at ${c.offset} past the end ${dat.source.byteLength}`, {
      byteOffset,
      section: what,
    });
  }
  return { id, flags, stringId, size, contentOffset: c.offset };
}

/** Returns a cursor over the (decompressed) content of the section at `byteOffset`. */
function openSection(dat: TraceDat, byteOffset: number, expectedId: number, what: string): Cursor {
  const h = readSectionHeader(dat, byteOffset, what);
  if (h.id !== expectedId) {
    throw new FormatError('malformed', `section ${what}: id ${h.id} at ${byteOffset}, expected ${expectedId}`, { byteOffset, section: what });
  }
  if ((h.flags & sectionCompressedFlag) === 0) {
    return new Cursor(new WindowSource(dat.source, h.contentOffset, h.size), dat.littleEndian, h.contentOffset, what);
  }
  const c = new Cursor(dat.source, dat.littleEndian, 0, what, h.contentOffset);
  const compressedSize = c.u32('compressed size');
  const uncompressedSize = c.u32('uncompressed size');
  if (compressedSize + 8 > h.size) throw c.error('out-of-range', `compressed size ${compressedSize} exceeds section size ${h.size}`, h.contentOffset);
  const data = c.bytes(compressedSize, 'compressed data');
  const name = dat.compression?.name ?? 'none';
  const content = decompressBlock(name, data, uncompressedSize, h.contentOffset, what);
  return new Cursor(new MemoryByteSource(content), dat.littleEndian, h.contentOffset, what);
}

/** A window [start, start + length) of another source, addressed from 0. */
class WindowSource implements ByteSource {
  constructor(
    private readonly inner: ByteSource,
    private readonly start: number,
    readonly byteLength: number,
  ) {}
  read(byteOffset: number, length: number): Uint8Array {
    if (byteOffset < 0 || byteOffset + length > this.byteLength) {
      throw new FormatError('truncated', `read of ${length} bytes at ${byteOffset} past the section end ${this.byteLength}`, {
        byteOffset: this.start + byteOffset,
      });
    }
    return this.inner.read(this.start + byteOffset, length);
  }
}

function decodeV7(dat: TraceDat, c: Cursor): void {
  const name = c.cstring('compression name');
  const version = c.cstring('compression version');
  dat.compression = { name, version };
  if (name !== 'none' && name !== 'zstd' && name !== 'zlib') throw c.error('unsupported', `compression '${name}'`);
  let next = c.u64('options offset');
  const seen = new Set<number>();
  const sectionAt: Partial<Record<number, number>> = {};
  const bufferOptions: { data: Uint8Array; at: number; latency: boolean }[] = [];
  while (next !== 0) {
    if (seen.has(next) || seen.size >= maxSections) {
      throw new FormatError('malformed', `options section at ${next} visited twice (loop)`, { byteOffset: next, section: 'options' });
    }
    seen.add(next);
    const oc = openSection(dat, next, 0, 'options');
    next = 0;
    for (;;) {
      if (oc.remaining === 0) break; // no DONE: the last options section
      const at = oc.base + oc.offset;
      const id = oc.u16('option id');
      const size = oc.u32('option size');
      const data = oc.bytes(size, `option ${id}`);
      dat.options.push({ id, byteOffset: at, data });
      const d = new Cursor(new MemoryByteSource(data), dat.littleEndian, at + 6, `option ${id}`);
      if (id === TraceDatOption.done) {
        next = data.length >= 8 ? d.u64('next options offset') : 0;
        break;
      }
      if (id >= TraceDatOption.headerInfo && id <= TraceDatOption.cmdlines) sectionAt[id] = d.u64('section offset');
      else if (id === TraceDatOption.buffer || id === TraceDatOption.bufferText) bufferOptions.push({ data, at: at + 6, latency: id === TraceDatOption.bufferText });
      else applyOption(dat, id, d);
    }
  }
  const headerAt = sectionAt[TraceDatOption.headerInfo];
  if (headerAt === undefined) throw new FormatError('not-found', 'trace.dat: no HEADER_INFO option', { section: 'options' });
  readHeaderInfo(dat, openSection(dat, headerAt, TraceDatOption.headerInfo, 'header info'));
  const ftraceAt = sectionAt[TraceDatOption.ftraceEvents];
  if (ftraceAt !== undefined) readFtraceEvents(dat, openSection(dat, ftraceAt, TraceDatOption.ftraceEvents, 'ftrace formats'));
  const eventsAt = sectionAt[TraceDatOption.eventFormats];
  if (eventsAt !== undefined) readEventFormats(dat, openSection(dat, eventsAt, TraceDatOption.eventFormats, 'event formats'));
  const cmdAt = sectionAt[TraceDatOption.cmdlines];
  if (cmdAt !== undefined) readCmdlines(dat, openSection(dat, cmdAt, TraceDatOption.cmdlines, 'cmdlines'));
  const lazySection = (at: number | undefined, id: number, what: string): LazyText | undefined => {
    if (at === undefined) return undefined;
    readSectionHeader(dat, at, what); // validate now; decompress on use
    return {
      load: () => {
        const sc = openSection(dat, at, id, what);
        const size = sc.u32(`${what} size`);
        return sc.text(size, what);
      },
    };
  };
  const k = lazySection(sectionAt[TraceDatOption.kallsyms], TraceDatOption.kallsyms, 'kallsyms');
  if (k) dat.setLazy('kallsyms', k);
  const p = lazySection(sectionAt[TraceDatOption.printk], TraceDatOption.printk, 'printk formats');
  if (p) dat.setLazy('printk', p);
  for (const b of bufferOptions) dat.buffers.push(decodeBufferOption(dat, b.data, b.at, b.latency));
  if (dat.cpuCount === 0) dat.cpuCount = Math.max(0, ...dat.buffers.map((b) => b.cpus.length));
}

function decodeBufferOption(dat: TraceDat, data: Uint8Array, at: number, latency: boolean): TraceDatBuffer {
  const d = new Cursor(new MemoryByteSource(data), dat.littleEndian, at, 'buffer option');
  const sectionOffset = d.u64('buffer section offset');
  const name = d.cstring('buffer name');
  const clock = d.cstring('buffer clock');
  const buffer: TraceDatBuffer = {
    index: dat.buffers.length,
    name,
    clock,
    pageSize: dat.headerPage.subBufferSize,
    compressed: false,
    latency,
    cpus: [],
  };
  if (latency) return buffer;
  // trace-cmd 3.1+ stores the sub-buffer size before the CPU count (older writers do not): the
  // layout is recognised by the rest being exactly 4 + count * 20 bytes after it.
  let count = d.u32('cpu count');
  if (d.remaining !== count * 20 && d.remaining >= 4) {
    buffer.pageSize = count;
    count = d.u32('cpu count');
    if (buffer.pageSize < 64 || buffer.pageSize > 1 << 24) throw d.error('malformed', `buffer page size ${buffer.pageSize}`, d.offset - 8);
  }
  if (count > maxCpus || count * 20 > d.remaining) throw d.error('out-of-range', `${count} cpus in ${d.remaining} bytes`, d.offset - 4);
  const section = readSectionHeader(dat, sectionOffset, `buffer ${name}`);
  if (section.id !== TraceDatOption.buffer) {
    throw new FormatError('malformed', `buffer ${name}: section id ${section.id} at ${sectionOffset}, expected 3`, { byteOffset: sectionOffset, section: 'buffer' });
  }
  buffer.compressed = (section.flags & sectionCompressedFlag) !== 0;
  for (let i = 0; i < count; i++) {
    const cpuAt = d.base + d.offset;
    const cpu = d.u32('cpu id');
    const byteOffset = d.u64('cpu offset');
    const byteLength = d.u64('cpu size');
    checkCpuRange(dat, cpu, byteOffset, byteLength, cpuAt);
    buffer.cpus.push({ cpu, byteOffset, byteLength });
  }
  return buffer;
}

function applyOption(dat: TraceDat, id: number, d: Cursor): void {
  const str = () => decodeCString(d.bytes(d.remaining, 'string'));
  switch (id) {
    case TraceDatOption.date:
      dat.date = str();
      break;
    case TraceDatOption.cpuStat:
      dat.cpuStats.push(str());
      break;
    case TraceDatOption.traceClock: {
      const text = str();
      dat.traceClock = /\[([^\]]+)\]/.exec(text)?.[1] ?? text.trim();
      break;
    }
    case TraceDatOption.uname:
      dat.uname = str();
      break;
    case TraceDatOption.offset: {
      const text = str().trim();
      if (!/^-?\d+$/.test(text)) throw d.error('malformed', `offset '${text}' is not an integer`, 0);
      dat.timestampOffset = BigInt(text);
      break;
    }
    case TraceDatOption.cpuCount:
      dat.cpuCount = d.u32('cpu count');
      break;
    case TraceDatOption.version:
      dat.traceCmdVersion = str();
      break;
    case TraceDatOption.traceId:
      dat.traceId = d.u64Big('trace id');
      break;
    case TraceDatOption.tsc2nsec: {
      const multiplier = d.u32('tsc2nsec multiplier');
      const shift = d.u32('tsc2nsec shift');
      const offset = d.u64Big('tsc2nsec offset');
      if (shift > 63) throw d.error('malformed', `tsc2nsec shift ${shift}`, 4);
      dat.tsc2nsec = { multiplier, shift, offset };
      break;
    }
    case TraceDatOption.timeShift:
      dat.timeShift = decodeTimeShift(d);
      break;
    default:
      break; // kept in dat.options as stored
  }
}

/**
 * TIME_SHIFT: trace id (u64), flags (u32), CPU count (u32), then per CPU a sample count (u32) and
 * that many times, offsets and scaling ratios (s64 arrays, one after the other); then, optionally,
 * per CPU the fraction bits of each sample (u64). Samples come out sorted by time (trace-cmd sorts
 * them on load). Shorter than 16 bytes: ignored, as trace-cmd does.
 */
function decodeTimeShift(d: Cursor): TimeShift | undefined {
  if (d.remaining < 16) return undefined;
  const peerTraceId = d.u64Big('time shift trace id');
  const flags = d.u32('time shift flags');
  const cpuCount = d.u32('time shift cpu count');
  if (cpuCount > maxCpus || cpuCount * 4 > d.remaining) throw d.error('out-of-range', `time shift: ${cpuCount} cpus in ${d.remaining} bytes`, d.offset - 4);
  const cpus: TimeShiftSample[][] = [];
  for (let cpu = 0; cpu < cpuCount; cpu++) {
    const count = d.u32(`time shift cpu ${cpu} count`);
    if (count * 24 > d.remaining) throw d.error('out-of-range', `time shift cpu ${cpu}: ${count} samples in ${d.remaining} bytes`, d.offset - 4);
    const samples: TimeShiftSample[] = [];
    for (let k = 0; k < count; k++) samples.push({ time: d.i64Big('time shift time'), offset: 0n, scaling: 1n, fraction: 0n });
    for (const s of samples) s.offset = d.i64Big('time shift offset');
    for (const s of samples) s.scaling = d.i64Big('time shift scaling');
    cpus.push(samples);
  }
  for (const samples of cpus) {
    for (const s of samples) {
      if (d.remaining < 8) break;
      s.fraction = d.u64Big('time shift fraction');
      if (s.fraction > 63n) throw d.error('malformed', `time shift fraction ${s.fraction}`, d.offset - 8);
    }
  }
  for (const samples of cpus) samples.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  return { peerTraceId, flags, cpus };
}
