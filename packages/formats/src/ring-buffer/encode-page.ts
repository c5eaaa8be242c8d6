// Writes ring-buffer sub-buffers the way the kernel lays them out (`struct buffer_data_page` of
// `struct ring_buffer_event`s), for tests and tools: event by event (`encodePage`), or a CPU's
// records in time order paged as the kernel pages them (`encodeRecordPages`). The inverse of
// PageReader.
import { FormatError } from '../errors.js';
import type { HeaderPageLayout } from './header-page.js';
import { RingBufferType } from './page.js';

/** One event of a page, as {@link encodePage} writes it. */
export type PageEvent =
  | { kind: 'data'; delta: number; payload: Uint8Array; /** force the long form (type_len 0) */ long?: boolean }
  | { kind: 'extend'; delta: bigint }
  | { kind: 'stamp'; ts: bigint }
  | { kind: 'padding'; delta: number; /** array[0]: bytes after the header (>= 4, or 0 for the end marker) */ size: number };

/** Options of {@link encodePage}. */
export interface PageOptions {
  pageSize?: number;
  littleEndian?: boolean;
  /** Lost events before this page: a count (stored), or 'unknown' (flag only). */
  missed?: number | 'unknown';
  /** Size of `commit` (local_t): 8 on 64-bit kernels, 4 on 32-bit. */
  commitSize?: 4 | 8;
}

/** Largest time delta an event header holds (27 bits); a larger gap needs a time extend. */
const maxDelta = (1 << 27) - 1;
/** Longest payload of the short form (type_len 1..28, 4-byte units). */
const maxShortPayload = RingBufferType.dataMaxTypeLen * 4;

/** Bytes an event takes in a page (header included). */
export function pageEventSize(e: PageEvent): number {
  if (e.kind === 'data') {
    const len = (e.payload.length + 3) & ~3;
    return !e.long && len > 0 && len <= maxShortPayload ? 4 + len : 8 + len;
  }
  if (e.kind === 'extend' || e.kind === 'stamp') return 8;
  return 4 + e.size;
}

/** One sub-buffer holding `events` after the page `timestamp` (ns). */
export function encodePage(timestamp: bigint, events: readonly PageEvent[], options: PageOptions = {}): Uint8Array {
  const pageSize = options.pageSize ?? 4096;
  const le = options.littleEndian ?? true;
  const commitSize = options.commitSize ?? 8;
  const dataOffset = 8 + commitSize;
  const page = new Uint8Array(pageSize);
  const v = new DataView(page.buffer);
  v.setBigUint64(0, timestamp, le);
  let pos = dataOffset;
  const need = events.reduce((n, e) => n + pageEventSize(e), 0) + (options.missed !== undefined && options.missed !== 'unknown' ? commitSize : 0);
  if (dataOffset + need > pageSize) throw new FormatError('out-of-range', `ring-buffer page: ${need} bytes of events exceed the ${pageSize - dataOffset} of a page`);
  const header = (typeLen: number, delta: number) => {
    v.setUint32(pos, le ? ((delta << 5) | typeLen) >>> 0 : ((typeLen << 27) | delta) >>> 0, le);
    pos += 4;
  };
  for (const e of events) {
    if (e.kind === 'data') {
      const len = (e.payload.length + 3) & ~3;
      if (!e.long && len > 0 && len <= maxShortPayload) {
        header(len / 4, e.delta);
      } else {
        header(0, e.delta);
        v.setUint32(pos, len + 4, le);
        pos += 4;
      }
      page.set(e.payload, pos);
      pos += len;
    } else if (e.kind === 'extend' || e.kind === 'stamp') {
      const value = e.kind === 'extend' ? e.delta : e.ts & ((1n << 59n) - 1n);
      header(e.kind === 'extend' ? RingBufferType.timeExtend : RingBufferType.timeStamp, Number(value & 0x7ffffffn));
      v.setUint32(pos, Number(value >> 27n), le);
      pos += 4;
    } else {
      // array[0] counts the bytes after the event header, itself included (kernel rb_event_length).
      header(RingBufferType.padding, e.delta);
      if (e.size > 0) v.setUint32(pos, e.size, le);
      pos += e.size;
    }
  }
  const length = pos - dataOffset;
  let commit = BigInt(length);
  if (options.missed !== undefined) {
    commit |= 1n << 31n;
    if (options.missed !== 'unknown') {
      commit |= 1n << 30n;
      if (commitSize === 8) v.setBigUint64(pos, BigInt(options.missed), le);
      else v.setUint32(pos, options.missed, le);
    }
    if (commitSize === 8) commit |= 0xffffffff00000000n; // sign-extended like the kernel's local_t
  }
  if (commitSize === 8) v.setBigUint64(8, commit, le);
  else v.setUint32(8, Number(commit), le);
  return page;
}

/** The text of `events/header_page` for sub-buffers of `pageSize` bytes. */
export function headerPageText(pageSize = 4096, commitSize: 4 | 8 = 8): string {
  const dataOffset = 8 + commitSize;
  return [
    '\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;',
    `\tfield: local_t commit;\toffset:8;\tsize:${commitSize};\tsigned:1;`,
    '\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;',
    `\tfield: char data;\toffset:${dataOffset};\tsize:${pageSize - dataOffset};\tsigned:0;`,
    '',
  ].join('\n');
}

/** The text of `events/header_event` every kernel since 2.6.31 prints. */
export const headerEventText = `# compressed entry header
\ttype_len    :    5 bits
\ttime_delta  :   27 bits
\tarray       :   32 bits

\tpadding     : type == 29
\ttime_extend : type == 30
\ttime_stamp : type == 31
\tdata max type_len  == 28
`;

/** One record to page: its time (ns) and its bytes from `common_type` on. */
export interface PagedRecord {
  timeNs: bigint | number;
  data: Uint8Array;
}

/**
 * A CPU's records, in time order, as the kernel pages them: each page starts at its first
 * record's time, later records carry the delta from the previous one, a gap of 2^27 ns or more
 * becomes a time extend, and a record goes to a new page when it does not fit. Returns the pages
 * back to back (`layout.subBufferSize` bytes each).
 */
export function encodeRecordPages(records: Iterable<PagedRecord>, layout: HeaderPageLayout, littleEndian = true): Uint8Array {
  const pageSize = layout.subBufferSize;
  const commitSize = layout.commitSize === 4 ? 4 : 8;
  const room = layout.dataSize;
  const pages: Uint8Array[] = [];
  let events: PageEvent[] = [];
  let used = 0;
  let pageTime = 0n;
  let last = 0n;
  const flush = () => {
    if (events.length > 0) pages.push(encodePage(pageTime, events, { pageSize, littleEndian, commitSize }));
    events = [];
    used = 0;
  };
  for (const r of records) {
    const t = BigInt(r.timeNs);
    if (events.length > 0 && t < last) throw new FormatError('malformed', `ring-buffer pages: record at ${t} ns comes before the previous one at ${last} ns`);
    const data: PageEvent = { kind: 'data', delta: 0, payload: r.data };
    const size = pageEventSize(data);
    if (size > room) throw new FormatError('out-of-range', `ring-buffer pages: a record of ${r.data.length} bytes does not fit a ${pageSize}-byte page`);
    const gap = events.length === 0 ? 0n : t - last;
    const extend = gap > BigInt(maxDelta);
    if (events.length > 0 && used + size + (extend ? 8 : 0) > room) flush();
    if (events.length === 0) {
      pageTime = t;
    } else if (extend) {
      events.push({ kind: 'extend', delta: gap });
      used += 8;
    } else {
      data.delta = Number(gap);
    }
    events.push(data);
    used += size;
    last = t;
  }
  flush();
  const out = new Uint8Array(pages.length * pageSize);
  for (let i = 0; i < pages.length; i++) out.set(pages[i]!, i * pageSize);
  return out;
}
