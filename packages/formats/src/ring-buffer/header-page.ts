import { FormatError } from '../errors.js';

/**
 * Layout of one ring-buffer sub-buffer ("page"), read from tracefs `events/header_page`
 * (the kernel's `struct buffer_data_page`):
 *
 * ```
 * +0               timestamp   u64      absolute time of the page's first event
 * +commitOffset    commit      local_t  bytes of event data; bit 31 = events were lost before
 *                                       this page, bit 30 = their count is stored after the data
 * +dataOffset      data        char[dataSize]
 * ```
 *
 * The sub-buffer size is `dataOffset + dataSize`; it is read, never assumed (4 KiB and 8 KiB both
 * occur, and 64 KiB on arm64 kernels with 64 KiB pages).
 */
export interface HeaderPageLayout {
  timestampOffset: number;
  timestampSize: number;
  commitOffset: number;
  /** Size of `local_t`: the kernel's `long` (8 on 64-bit kernels, 4 on 32-bit). */
  commitSize: number;
  dataOffset: number;
  /** Bytes of event data one sub-buffer can hold. */
  dataSize: number;
  /** Whole sub-buffer size in bytes: `dataOffset + dataSize`. */
  subBufferSize: number;
}

const fieldRe = /field:\s*(.*?)\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^\]]*\])?\s*;\s*offset:\s*(\d+)\s*;\s*size:\s*(\d+)\s*;/;

/** Parses the text of `events/header_page`. Throws {@link FormatError} (`malformed`). */
export function parseHeaderPage(text: string): HeaderPageLayout {
  const fields = new Map<string, { offset: number; size: number; line: number }>();
  text.split('\n').forEach((line, i) => {
    const m = fieldRe.exec(line);
    if (m) fields.set(m[2]!, { offset: Number(m[3]), size: Number(m[4]), line: i + 1 });
  });
  const get = (name: string) => {
    const f = fields.get(name);
    if (!f) throw new FormatError('malformed', `header_page: no field '${name}'`, { section: 'header_page' });
    return f;
  };
  const ts = get('timestamp');
  const commit = get('commit');
  const data = get('data');
  if (ts.size !== 8) {
    throw new FormatError('unsupported', `header_page: timestamp size ${ts.size}, expected 8`, { section: 'header_page', line: ts.line });
  }
  if (commit.size !== 4 && commit.size !== 8) {
    throw new FormatError('unsupported', `header_page: commit size ${commit.size}, expected 4 or 8`, { section: 'header_page', line: commit.line });
  }
  const subBufferSize = data.offset + data.size;
  if (data.size < 8 || subBufferSize > 1 << 24 || ts.offset + 8 > data.offset || commit.offset + commit.size > data.offset) {
    throw new FormatError('malformed', `header_page: data offset ${data.offset} size ${data.size} does not fit the header`, {
      section: 'header_page',
      line: data.line,
    });
  }
  return {
    timestampOffset: ts.offset,
    timestampSize: ts.size,
    commitOffset: commit.offset,
    commitSize: commit.size,
    dataOffset: data.offset,
    dataSize: data.size,
    subBufferSize,
  };
}

/** The layout of a 64-bit kernel with 4 KiB sub-buffers, for callers without a header_page. */
export const defaultHeaderPage: HeaderPageLayout = Object.freeze({
  timestampOffset: 0,
  timestampSize: 8,
  commitOffset: 8,
  commitSize: 8,
  dataOffset: 16,
  dataSize: 4080,
  subBufferSize: 4096,
});
