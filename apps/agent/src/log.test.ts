import { describe, expect, it } from 'vitest';
import { jsonLogger, redact } from './log.js';

describe('the log', () => {
  it('masks credentials and tokens wherever they appear', () => {
    const secret = 'pya_3q2-478_abcdefghijklmnopqrstuvwxyz0123456789';
    const lines: string[] = [];
    const log = jsonLogger({ write: (l) => lines.push(l) });
    log('error', `enroll failed with ${secret}`, { header: `Bearer ${secret}`, nested: { token: 'pye_AAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, err: new Error(`bad ${secret}`) });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('abcdefghijklmnop');
    expect(lines[0]).not.toContain('AAAAAAAAAAAAAAAA');
    const record = JSON.parse(lines[0]!);
    expect(record).toMatchObject({ level: 'error', msg: 'enroll failed with pya_…', header: 'Bearer pya_…', nested: { token: 'pye_…' }, err: 'bad pya_…' });
    expect(redact('x pyt_0123456789abcdefghij y')).toBe('x pyt_… y');
  });

  it('leaves out levels below its minimum', () => {
    const lines: string[] = [];
    const log = jsonLogger({ minLevel: 'warn', write: (l) => lines.push(l) });
    log('info', 'quiet');
    log('warn', 'loud');
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['loud']);
  });
});
