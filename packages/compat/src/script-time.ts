// bpftrace's time("fmt"): the wall-clock time when user space handles the event, formatted with
// strftime(3) conversions. The subset below is what scripts use; a script with any other
// conversion is refused when it is compiled (timeFormatProblem), so the renderer never meets one.

/** The default format of `time()` (bpftrace's). */
export const DEFAULT_TIME_FORMAT = '%H:%M:%S\n';

const months = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const days = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

const pad = (n: number, width = 2, fill = '0') => String(n).padStart(width, fill);

/** The conversions `time()` knows, with what each prints (the local time, as strftime in the C locale). */
export const timeConversions: Record<string, { what: string; render: (d: Date) => string }> = {
  H: { what: 'hour, 00-23', render: (d) => pad(d.getHours()) },
  I: { what: 'hour, 01-12', render: (d) => pad(((d.getHours() + 11) % 12) + 1) },
  M: { what: 'minute, 00-59', render: (d) => pad(d.getMinutes()) },
  S: { what: 'second, 00-60', render: (d) => pad(d.getSeconds()) },
  p: { what: 'AM or PM', render: (d) => (d.getHours() < 12 ? 'AM' : 'PM') },
  Y: { what: 'year', render: (d) => String(d.getFullYear()) },
  y: { what: 'year in the century, 00-99', render: (d) => pad(d.getFullYear() % 100) },
  m: { what: 'month, 01-12', render: (d) => pad(d.getMonth() + 1) },
  d: { what: 'day of the month, 01-31', render: (d) => pad(d.getDate()) },
  e: { what: 'day of the month, space-padded', render: (d) => pad(d.getDate(), 2, ' ') },
  j: { what: 'day of the year, 001-366', render: (d) => pad(dayOfYear(d), 3) },
  b: { what: 'abbreviated month name', render: (d) => months[d.getMonth()]!.slice(0, 3) },
  h: { what: 'abbreviated month name (as %b)', render: (d) => months[d.getMonth()]!.slice(0, 3) },
  B: { what: 'month name', render: (d) => months[d.getMonth()]! },
  a: { what: 'abbreviated weekday name', render: (d) => days[d.getDay()]!.slice(0, 3) },
  A: { what: 'weekday name', render: (d) => days[d.getDay()]! },
  u: { what: 'weekday, 1-7 (Monday 1)', render: (d) => String(d.getDay() === 0 ? 7 : d.getDay()) },
  w: { what: 'weekday, 0-6 (Sunday 0)', render: (d) => String(d.getDay()) },
  s: { what: 'seconds since the epoch', render: (d) => String(Math.floor(d.getTime() / 1000)) },
  z: { what: 'offset from UTC, +hhmm', render: (d) => utcOffset(d) },
  F: { what: '%Y-%m-%d', render: (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}` },
  T: { what: '%H:%M:%S', render: (d) => `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}` },
  R: { what: '%H:%M', render: (d) => `${pad(d.getHours())}:${pad(d.getMinutes())}` },
  D: { what: '%m/%d/%y', render: (d) => `${pad(d.getMonth() + 1)}/${pad(d.getDate())}/${pad(d.getFullYear() % 100)}` },
  n: { what: 'a newline', render: () => '\n' },
  t: { what: 'a tab', render: () => '\t' },
  '%': { what: 'a %', render: () => '%' },
};

function dayOfYear(d: Date): number {
  const start = new Date(d.getFullYear(), 0, 1);
  const at = new Date(d.getFullYear(), d.getMonth(), d.getDate());
  // whole local days; Math.round absorbs a daylight-saving hour
  return Math.round((at.getTime() - start.getTime()) / 86_400_000) + 1;
}

function utcOffset(d: Date): string {
  const minutes = -d.getTimezoneOffset();
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}${pad(abs % 60)}`;
}

/** Why `format` cannot be rendered (an unknown conversion, a lone % at the end), or undefined. Offsets are into the format. */
export function timeFormatProblem(format: string): { offset: number; message: string } | undefined {
  for (let i = 0; i < format.length; i++) {
    if (format[i] !== '%') continue;
    const c = format[i + 1];
    if (c === undefined) return { offset: i, message: 'the format ends with a lone %; write %% for a percent sign' };
    if (!Object.hasOwn(timeConversions, c)) return { offset: i, message: `%${c} is not a conversion time() knows; it knows ${Object.keys(timeConversions).map((k) => `%${k}`).join(' ')}` };
    i++;
  }
  return undefined;
}

/** `format` rendered for the local time `date` (conversions as {@link timeConversions}; others are left as written). */
export function formatTime(format: string, date: Date): string {
  let out = '';
  for (let i = 0; i < format.length; i++) {
    const ch = format[i]!;
    const c = format[i + 1];
    if (ch !== '%' || c === undefined || !Object.hasOwn(timeConversions, c)) {
      out += ch;
      continue;
    }
    out += timeConversions[c]!.render(date);
    i++;
  }
  return out;
}
