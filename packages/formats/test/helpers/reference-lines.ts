// Prints decoded pages in the line format of the corpus' reference decoder
// (decoded_all_records.txt, time_extend/decoded.txt), so tests compare text with text.
import { decodePageHeader, PageReader } from '../../src/ring-buffer/page.js';
import type { HeaderPageLayout } from '../../src/ring-buffer/header-page.js';
import { miniValues, pyDict, type MiniFormat } from './mini-format.js';

export type HeaderStyle = 'missed' | 'time-extend' | 'subbuf';

export function referenceLines(
  name: string,
  bytes: Uint8Array,
  layout: HeaderPageLayout,
  formats: Map<number, MiniFormat>,
  style: HeaderStyle,
): string[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: string[] = [];
  const reader = new PageReader(layout, true);
  for (let page = 0, off = 0; off < bytes.length; page++, off += layout.subBufferSize) {
    const h = decodePageHeader(bytes, off, layout);
    const lines: string[] = [];
    reader.load(bytes, view, off, layout.subBufferSize);
    let prevExtends = 0;
    let prevTs = h.timestamp;
    while (reader.next()) {
      const r = reader.record;
      if (style === 'time-extend' && reader.timeExtends > prevExtends) {
        lines.push(`   ${r.timestamp()} TIME_EXTEND ${r.timestamp() - prevTs}`);
        prevExtends = reader.timeExtends;
      }
      prevTs = r.timestamp();
      const f = formats.get(r.eventId)!;
      lines.push(`   ${r.timestamp()} ${f.name} ${pyDict(miniValues(f, r.bytes, r.recordOffset))}`);
    }
    const header =
      style === 'subbuf'
        ? `# ${name} (8 KiB sub-buffer): page_ts=${h.timestamp} data_len=${h.dataLength} records=${lines.length}`
        : style === 'time-extend'
          ? `# ${name} page ${page}: page_ts=${h.timestamp} commit_raw=0x${h.commitRaw.toString(16)} data_len=${h.dataLength} records=${lines.length}`
          : `# ${name} page ${page}: page_ts=${h.timestamp} commit_raw=0x${h.commitRaw.toString(16).padStart(16, '0')} data_len=${h.dataLength} missed_events=${h.missedEvents ? 'True' : 'False'} missed_count=${h.missedCount ?? 'None'} records=${lines.length}`;
    out.push(header, ...lines);
  }
  return out;
}
