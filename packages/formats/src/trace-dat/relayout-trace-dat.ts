import { type EventFormat, parseEventFormat } from '../event-format/event-format.js';
import { type RelayoutOptions, relayoutRecord } from '../event-format/relayout-record.js';
import { FormatError } from '../errors.js';
import type { ByteSource } from './byte-source.js';
import { encodeTraceDat } from './encode-trace-dat.js';
import { openTraceDat } from './trace-dat-reader.js';

/** The kernel a recording is re-laid out for: its `header_page` and the format files of its events. */
export interface RelayoutTarget {
  /** `events/header_page` of the target kernel; default: the source's sub-buffer size, 8-byte `commit`. */
  headerPage?: string;
  /** Format files of the target kernel, each with its system (`sched`, `raw_syscalls`). */
  formats: { system: string; text: string }[];
}

/**
 * A recording as a node of another kernel would have recorded it: every record of an event the
 * target has is rewritten into the target's layout by field name ({@link relayoutRecord}), with
 * the target's event ids, formats and `header_page`; records of events the target lacks are left
 * out. Same CPUs, times and saved_cmdlines. Throws {@link FormatError} when a target format does
 * not parse or the source cannot be read.
 */
export function relayoutTraceDat(source: Uint8Array | ByteSource, target: RelayoutTarget, options: RelayoutOptions = {}): Uint8Array {
  const reader = openTraceDat(source, { parseFormat: (text, system) => parseEventFormat(text, { system }) });
  if (!reader.dat.littleEndian) throw new FormatError('unsupported', 'relayout trace.dat: a big-endian recording (the writer is little endian)');
  const byKey = new Map<string, EventFormat>();
  for (const f of target.formats) {
    const format = parseEventFormat(f.text, { system: f.system });
    byKey.set(`${format.system}/${format.name}`, format);
  }
  const records: { cpu: number; timeNs: bigint; data: Uint8Array }[] = [];
  const it = reader.records();
  for (let r = it.next(); r; r = it.next()) {
    const from = r.format;
    if (from === undefined) continue;
    const to = byKey.get(`${from.system}/${from.name}`);
    if (to === undefined) continue;
    records.push({ cpu: r.cpu, timeNs: r.timestamp(), data: relayoutRecord(r.data(), from, to, options) });
  }
  return encodeTraceDat({
    ...(target.headerPage !== undefined ? { headerPage: target.headerPage } : {}),
    eventFormats: target.formats,
    cmdlines: [...reader.dat.cmdlines].map(([pid, comm]) => `${pid} ${comm}`).join('\n'),
    records,
    cpuCount: reader.dat.cpuCount,
  });
}
