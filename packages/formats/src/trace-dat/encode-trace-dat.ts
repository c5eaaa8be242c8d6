// A writer of trace-cmd file version 7 (little endian), written from the layout the reader
// decodes (and `trace-cmd dump` prints): the header with the compression name, one section per
// metadata block, a BUFFER section with each CPU's pages (page aligned when uncompressed, zlib
// chunks when compressed), and one options section, last, that points at all of them. For tests
// and tools: recordings made from records (re-laid out for another kernel with relayoutRecord,
// for instance) that this package's reader and `trace-cmd report` both read.
import { zlibSync } from 'fflate';
import { FormatError } from '../errors.js';
import { encodeRecordPages, headerEventText, headerPageText } from '../ring-buffer/encode-page.js';
import { parseHeaderPage } from '../ring-buffer/header-page.js';

/** Option ids (trace-cmd's TRACECMD_OPTION_*), as the reader's TraceDatOption. */
const Opt = { done: 0, buffer: 3, traceClock: 4, cpuCount: 8, headerInfo: 16, ftraceEvents: 17, eventFormats: 18, kallsyms: 19, printk: 20, cmdlines: 21 } as const;
const magic = [0x17, 0x08, 0x44, 0x74, 0x72, 0x61, 0x63, 0x69, 0x6e, 0x67];

/** What {@link encodeTraceDat} writes. */
export interface TraceDatEncodeInput {
  /** Default `none` (what every trace-cmd reads; this writer's zlib is read by trace-cmd 3.2+ and Probeyard). */
  compression?: 'none' | 'zlib';
  /** Version text stored after the algorithm name. */
  compressionVersion?: string;
  /** The `events/header_page` text of the traced kernel; default: 4 KiB sub-buffers, 8-byte `commit`. */
  headerPage?: string;
  /** The `events/header_event` text; default: the one every kernel since 2.6.31 prints. */
  headerEvent?: string;
  /** Size of the traced user space's `long` (file header); default 8. */
  longSize?: 4 | 8;
  ftraceFormats?: string[];
  /** The `format` files of the events, each with its system. */
  eventFormats: { system: string; text: string }[];
  kallsyms?: string;
  printk?: string;
  /** saved_cmdlines text: `pid comm` lines. */
  cmdlines?: string;
  /** Per CPU (index = CPU id): its ring-buffer pages, back to back. */
  cpus?: Uint8Array[];
  /**
   * Or records, each with its CPU and time, paged per CPU as the kernel pages them (in time order
   * per CPU); `cpuCount` CPUs (default: the highest CPU + 1).
   */
  records?: Iterable<{ cpu: number; timeNs: bigint | number; data: Uint8Array }>;
  cpuCount?: number;
  /** Pages per compressed chunk (trace-cmd uses several); default 4. */
  pagesPerChunk?: number;
  clock?: string;
  /** Further options, stored as given (e.g. TIME_SHIFT). */
  options?: { id: number; data: Uint8Array }[];
}

class ByteList {
  readonly parts: Uint8Array[] = [];
  length = 0;
  push(b: Uint8Array): void {
    this.parts.push(b);
    this.length += b.length;
  }
  concat(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

const text = (s: string) => new TextEncoder().encode(s);
const cstr = (s: string) => text(`${s}\0`);
function u16(v: number): Uint8Array {
  const b = new Uint8Array(2);
  new DataView(b.buffer).setUint16(0, v, true);
  return b;
}
function u32(v: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, v, true);
  return b;
}
function u64(v: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(v), true);
  return b;
}
function cat(...parts: Uint8Array[]): Uint8Array {
  const l = new ByteList();
  for (const p of parts) l.push(p);
  return l.concat();
}

/**
 * A trace.dat (trace-cmd file version 7, little endian) of the given formats and pages or records:
 * what this package's reader and `trace-cmd report` read. Throws {@link FormatError} for a record
 * that does not fit a page or comes out of time order on its CPU.
 */
export function encodeTraceDat(input: TraceDatEncodeInput): Uint8Array {
  const zlib = input.compression === 'zlib';
  const headerPage = input.headerPage ?? headerPageText();
  const layout = parseHeaderPage(headerPage);
  const pageSize = layout.subBufferSize;
  const cpuPages = input.cpus ?? pagesOfRecords(input, layout);
  const out = new ByteList();
  out.push(cat(new Uint8Array(magic), cstr('7'), new Uint8Array([0, input.longSize ?? 8]), u32(pageSize)));
  out.push(cat(cstr(input.compression ?? 'none'), cstr(input.compressionVersion ?? (zlib ? '1.3' : ''))));
  const optionsOffsetAt = out.length;
  out.push(u64(0)); // patched: offset of the options section
  const section = (id: number, content: Uint8Array, compress: boolean): number => {
    const at = out.length;
    const body = compress ? cat(u32(0), u32(content.length), zlibSync(content)) : content;
    if (compress) new DataView(body.buffer).setUint32(0, body.length - 8, true);
    out.push(cat(u16(id), u16(compress ? 1 : 0), u32(0), u64(body.length), body));
    return at;
  };
  const formatList = (texts: string[]) => cat(u32(texts.length), ...texts.flatMap((t) => [u64(text(t).length), text(t)]));
  const systems = [...new Set(input.eventFormats.map((f) => f.system))];
  const at: Record<number, number> = {};
  at[Opt.headerInfo] = section(
    Opt.headerInfo,
    cat(cstr('header_page'), u64(text(headerPage).length), text(headerPage), cstr('header_event'), u64(text(input.headerEvent ?? headerEventText).length), text(input.headerEvent ?? headerEventText)),
    zlib,
  );
  at[Opt.ftraceEvents] = section(Opt.ftraceEvents, formatList(input.ftraceFormats ?? []), zlib);
  at[Opt.eventFormats] = section(
    Opt.eventFormats,
    cat(u32(systems.length), ...systems.flatMap((s) => [cstr(s), formatList(input.eventFormats.filter((f) => f.system === s).map((f) => f.text))])),
    zlib,
  );
  const kallsyms = text(input.kallsyms ?? '');
  at[Opt.kallsyms] = section(Opt.kallsyms, cat(u32(kallsyms.length), kallsyms), zlib);
  const printk = text(input.printk ?? '');
  at[Opt.printk] = section(Opt.printk, cat(u32(printk.length), printk), zlib);
  const cmdlines = text(input.cmdlines ?? '');
  at[Opt.cmdlines] = section(Opt.cmdlines, cat(u64(cmdlines.length), cmdlines), zlib);

  // The BUFFER section: header, then each CPU's data (page aligned).
  const bufferAt = out.length;
  const headerSlot = new Uint8Array(16);
  out.push(headerSlot);
  const cpus: { offset: number; size: number }[] = [];
  for (const pages of cpuPages) {
    const pad = (pageSize - (out.length % pageSize)) % pageSize;
    out.push(new Uint8Array(pad));
    if (!zlib) {
      cpus.push({ offset: out.length, size: pages.length });
      out.push(pages);
      continue;
    }
    const chunkBytes = pageSize * (input.pagesPerChunk ?? 4);
    const chunks: Uint8Array[] = [];
    for (let p = 0; p < pages.length; p += chunkBytes) {
      const raw = pages.subarray(p, Math.min(pages.length, p + chunkBytes));
      const z = zlibSync(raw);
      chunks.push(cat(u32(z.length), u32(raw.length), z));
    }
    const data = cat(u32(chunks.length), ...chunks);
    // trace-cmd's stored size leaves out the 4-byte chunk count.
    cpus.push({ offset: out.length, size: data.length - 4 });
    out.push(data);
  }
  headerSlot.set(cat(u16(Opt.buffer), u16(zlib ? 1 : 0), u32(0), u64(out.length - bufferAt - 16)));

  // The options section, last; the header points at it.
  const option = (id: number, data: Uint8Array) => cat(u16(id), u32(data.length), data);
  const options: Uint8Array[] = [];
  for (const id of [Opt.headerInfo, Opt.ftraceEvents, Opt.eventFormats, Opt.kallsyms, Opt.printk, Opt.cmdlines]) options.push(option(id, u64(at[id]!)));
  options.push(option(Opt.traceClock, text(`[${input.clock ?? 'local'}] global counter uptime perf mono mono_raw boot\n`)));
  options.push(option(Opt.cpuCount, u32(cpuPages.length)));
  for (const o of input.options ?? []) options.push(option(o.id, o.data));
  options.push(
    option(
      Opt.buffer,
      cat(u64(bufferAt), cstr(''), cstr(input.clock ?? 'local'), u32(pageSize), u32(cpus.length), ...cpus.flatMap((c, cpu) => [u32(cpu), u64(c.offset), u64(c.size)])),
    ),
  );
  options.push(option(Opt.done, u64(0)));
  const optionsAt = section(0, cat(...options), false);
  const file = out.concat();
  new DataView(file.buffer).setBigUint64(optionsOffsetAt, BigInt(optionsAt), true);
  return file;
}

/** Each CPU's records paged (see encodeRecordPages). */
function pagesOfRecords(input: TraceDatEncodeInput, layout: ReturnType<typeof parseHeaderPage>): Uint8Array[] {
  if (input.records === undefined) throw new FormatError('malformed', 'trace.dat writer: give cpus (pages) or records');
  const byCpu: { timeNs: bigint | number; data: Uint8Array }[][] = [];
  for (const r of input.records) {
    if (!Number.isInteger(r.cpu) || r.cpu < 0 || r.cpu > 4095) throw new FormatError('malformed', `trace.dat writer: cpu ${r.cpu}`);
    (byCpu[r.cpu] ??= []).push(r);
  }
  const count = Math.max(input.cpuCount ?? 0, byCpu.length);
  return Array.from({ length: count }, (_, cpu) => encodeRecordPages(byCpu[cpu] ?? [], layout));
}
