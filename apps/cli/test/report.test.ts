// `probeyard report` on the small trace.dat fixtures of packages/formats (real trace-cmd files).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../src/main.js';
import { bufferIo as makeIo } from './support/buffer-io.js';

const bufferIo = () => makeIo({ disk: true });

const fixtures = join(__dirname, '../../../packages/formats/test/fixtures/trace-dat');


describe('probeyard report', () => {
  it.each(['small_v6.dat', 'small_v7_zstd.dat', 'small_v7_none.dat'])('-R of %s prints trace-cmd report -R exactly', async (name) => {
    const io = bufferIo();
    expect(await run(['report', join(fixtures, name), '-R'], io)).toBe(0);
    expect(io.err).toBe('');
    expect(io.out).toBe(readFileSync(join(fixtures, 'small_v6.report_raw.txt'), 'utf8'));
  });

  it('prints trace-cmd report lines, with the kernel prev_state letters', async () => {
    const io = bufferIo();
    expect(await run(['report', join(fixtures, 'small_v7_zstd.dat')], io)).toBe(0);
    const ours = io.out.split('\n');
    const theirs = readFileSync(join(fixtures, 'small_v6.report.txt'), 'utf8').split('\n');
    expect(ours).toHaveLength(theirs.length);
    expect(ours[0]).toBe('cpus=2');
    expect(ours[1]).toBe('       trace-cmd-14883 [000]   410.220673: sched_switch:         trace-cmd:14883 [120] S ==> swapper/0:0 [120]');
    // trace-cmd's fixed table prints W for prev_state 0x80; the kernel's print fmt says I.
    expect(theirs[9]).toBe('     rcu_preempt-15    [001]   410.221852: sched_switch:         rcu_preempt:15 [120] W ==> trace-cmd:14882 [120]');
    expect(ours[9]).toBe('     rcu_preempt-15    [001]   410.221852: sched_switch:         rcu_preempt:15 [120] I ==> trace-cmd:14882 [120]');
    const differing = ours.filter((l, i) => l !== theirs[i]);
    expect(differing.every((l) => / sched_switch: .*\] (I|Z|X|R\+) ==> /.test(l))).toBe(true);
  });

  it.each([
    ['no file', [], 2, /expected one trace.dat file/],
    ['an unknown option', ['-x', 'a.dat'], 2, /unknown option '-x'/],
    ['a missing file', ['/nonexistent/trace.dat'], 2, /ENOENT/],
  ])('refuses %s', async (_name, args, code, message) => {
    const io = bufferIo();
    expect(await run(['report', ...args], io)).toBe(code);
    expect(io.err).toMatch(message);
  });

  it('names the byte where a damaged file stops making sense', async () => {
    const bytes = readFileSync(join(fixtures, 'small_v7_none.dat'));
    const cut = bytes.subarray(0, 300);
    const path = join(mkdtempSync(join(tmpdir(), 'probeyard-report-')), 'cut.dat');
    writeFileSync(path, cut);
    const io = bufferIo();
    expect(await run(['report', path], io)).toBe(2);
    expect(io.err).toMatch(/^probeyard report: .*cut\.dat: (truncated|out-of-range): .*\(byte \d+\)\n$/);
  });

  it('is listed in --help', async () => {
    const io = bufferIo();
    await run(['--help'], io);
    expect(io.out).toMatch(/report +print a trace\.dat recording like trace-cmd report/);
  });
});
