import { FormatError } from '../errors.js';

/**
 * The event header of the ring buffer (`struct ring_buffer_event`), read from tracefs
 * `events/header_event`:
 *
 * ```
 *  31            5 4       0   (little-endian kernels; big-endian ones swap the two fields)
 * +---------------+---------+
 * |  time_delta   | type_len|   then array[0] (u32), then data
 * +---------------+---------+
 * ```
 *
 * `type_len` 1..dataMaxTypeLen is a data record of `type_len * 4` bytes, 0 a data record whose
 * length is in array[0]; the three special values are padding, time extend and absolute time stamp.
 */
export interface HeaderEventLayout {
  typeLenBits: number;
  timeDeltaBits: number;
  padding: number;
  timeExtend: number;
  timeStamp: number;
  dataMaxTypeLen: number;
}

/** Parses the text of `events/header_event`. Only the 5/27-bit layout exists in Linux. */
export function parseHeaderEvent(text: string): HeaderEventLayout {
  const num = (re: RegExp, fallback?: number): number => {
    const m = re.exec(text);
    if (m) return Number(m[1]);
    if (fallback !== undefined) return fallback;
    throw new FormatError('malformed', `header_event: no match for ${re.source}`, { section: 'header_event' });
  };
  const layout: HeaderEventLayout = {
    typeLenBits: num(/type_len\s*:\s*(\d+)\s*bits/),
    timeDeltaBits: num(/time_delta\s*:\s*(\d+)\s*bits/),
    padding: num(/padding\s*:\s*type\s*==\s*(\d+)/, 29),
    timeExtend: num(/time_extend\s*:\s*type\s*==\s*(\d+)/, 30),
    timeStamp: num(/time_stamp\s*:\s*type\s*==\s*(\d+)/, 31),
    dataMaxTypeLen: num(/data max type_len\s*==\s*(\d+)/, 28),
  };
  if (layout.typeLenBits !== 5 || layout.timeDeltaBits !== 27 || layout.padding !== 29 || layout.timeExtend !== 30 ||
      layout.timeStamp !== 31 || layout.dataMaxTypeLen !== 28) {
    throw new FormatError(
      'unsupported',
      `header_event: type_len ${layout.typeLenBits} bits, time_delta ${layout.timeDeltaBits} bits, types ${layout.padding}/${layout.timeExtend}/${layout.timeStamp}/${layout.dataMaxTypeLen}`,
      { section: 'header_event' },
    );
  }
  return layout;
}
