import { describe, expect, it } from 'vitest';
import { DEFAULT_TIME_FORMAT, formatTime, timeFormatProblem } from './script-time.js';

// a local date: the conversions read local fields, so the expectations hold in any time zone
const at = new Date(2026, 11, 2, 17, 5, 9);

describe('formatTime', () => {
  it.each([
    [DEFAULT_TIME_FORMAT, '17:05:09\n'],
    // the line bpftrace 0.17 printed for this format on 2026-12-02 at 17:05 (local)
    ['%Y-%m-%d %j %b %a %y %e|%I %p %B %A %%\n', '2026-12-02 336 Dec Wed 26  2|05 PM December Wednesday %\n'],
    ['%F %T %R %D', '2026-12-02 17:05:09 17:05 12/02/26'],
    ['%u %w%n%t', '3 3\n\t'],
    ['no conversion', 'no conversion'],
  ])('%j', (format, want) => {
    expect(formatTime(format, at)).toBe(want);
  });

  it('midnight is 12 AM, noon 12 PM; 1 January is day 001', () => {
    expect(formatTime('%I %p %j', new Date(2025, 0, 1, 0, 0, 0))).toBe('12 AM 001');
    expect(formatTime('%I %p %j', new Date(2024, 11, 31, 12, 0, 0))).toBe('12 PM 366');
  });

  it('%s and %z follow the instant and the zone offset', () => {
    const d = new Date(1_700_000_000_123);
    expect(formatTime('%s', d)).toBe('1700000000');
    const off = -d.getTimezoneOffset();
    expect(formatTime('%z', d)).toBe(`${off < 0 ? '-' : '+'}${String(Math.floor(Math.abs(off) / 60)).padStart(2, '0')}${String(Math.abs(off) % 60).padStart(2, '0')}`);
  });
});

describe('timeFormatProblem', () => {
  it.each([
    ['%H:%M:%S\n', undefined],
    ['100%%', undefined],
    ['%Q', 0],
    ['ok %Z', 3],
    ['trailing %', 9],
  ])('%j', (format, offset) => {
    expect(timeFormatProblem(format)?.offset).toBe(offset);
  });

  it('names the conversion and the known ones', () => {
    expect(timeFormatProblem('%c')?.message).toMatch(/^%c is not a conversion time\(\) knows; it knows %H %I %M %S/);
  });
});
