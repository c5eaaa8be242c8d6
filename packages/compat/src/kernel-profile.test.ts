import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixturesDir } from '../test/fixtures.js';
import { parseKernelVersionFile, parseUname, profileFormat, profileOfFiles, profileOfTraceDat, findProfileEvent } from './kernel-profile.js';

const file = (kernel: string, path: string) => ({ path, text: readFileSync(join(fixturesDir, 'formats', kernel, path), 'utf8') });

describe('kernel profiles', () => {
  it('stores identical format files once, keyed by content hash', async () => {
    const text = file('linux-6.18', 'sched/sched_wakeup/format').text;
    const p = await profileOfFiles(
      [
        { path: 'sched/sched_wakeup/format', text },
        { path: 'other/sched_wakeup/format', text },
        file('linux-6.18', 'sched/sched_switch/format'),
        file('linux-6.18', 'header_page'),
      ],
      { release: '6.18.44', arch: 'x86_64' },
    );
    expect([...p.events.keys()]).toEqual(['other/sched_wakeup', 'sched/sched_switch', 'sched/sched_wakeup']);
    expect(p.formats.size).toBe(2);
    expect(p.events.get('other/sched_wakeup')).toBe(p.events.get('sched/sched_wakeup'));
    expect(p).toMatchObject({ release: '6.18.44', arch: 'x86_64', wordSize: 8, source: 'events-tree' });
    expect(p.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(findProfileEvent(p, 'sched_wakeup', 'sched')?.key).toBe('sched/sched_wakeup');
  });

  it('the same formats give the same hash whatever the release string', async () => {
    const files = [file('android-3.10.49', 'sched/sched_switch/format')];
    const a = await profileOfFiles(files, { release: 'a' });
    const b = await profileOfFiles(files, { release: 'b' });
    expect(a.hash).toBe(b.hash);
    expect((await profileOfFiles([file('linux-6.18', 'sched/sched_switch/format')])).hash).not.toBe(a.hash);
  });

  it('reads 32-bit word size from a header_page', async () => {
    const p = await profileOfFiles([file('android-3.4.0', 'header_page'), file('android-3.4.0', 'sched/sched_switch/format')]);
    expect(p.wordSize).toBe(4);
  });

  it('builds from the formats a trace.dat carries, release and arch from its uname', async () => {
    const p = await profileOfTraceDat({
      eventFormats: [{ system: 'sched', text: file('linux-6.18', 'sched/sched_switch/format').text }],
      headerPageText: file('linux-6.18', 'header_page').text,
      headerEventText: '',
      uname: 'Linux host 6.18.44-fc-v782 #1 SMP PREEMPT_DYNAMIC Thu Nov  6 12:00:00 UTC 2025 x86_64',
      longSize: 8,
    });
    expect(p).toMatchObject({ release: '6.18.44-fc-v782', arch: 'x86_64', source: 'trace.dat' });
    expect(profileFormat(p, 'sched/sched_switch')?.fields.map((f) => f.name)).toContain('next_pid');
  });

  it.each([
    ['Linux host 6.18.44 #1 SMP x86_64 GNU/Linux', '6.18.44', 'x86_64'],
    ['Linux phone 3.4.0-gadb2201 #1 SMP PREEMPT armv7l', '3.4.0-gadb2201', 'armv7l'],
    [undefined, '', ''],
  ])('parseUname(%s)', (uname, release, arch) => {
    expect(parseUname(uname)).toEqual({ release, arch });
  });
});

describe('parseKernelVersionFile', () => {
  it.each([
    ['6.18.44-fc-v782\n', '6.18.44-fc-v782'],
    ['\n  3.4.0-gadb2201  \n', '3.4.0-gadb2201'],
    ['Linux host 6.18.44 #1 SMP PREEMPT_DYNAMIC x86_64 GNU/Linux\n', '6.18.44'],
    ['# captured here\n5.10.43-android12-9\n', '5.10.43-android12-9'],
    ['', ''],
    ['not a release\n', ''],
    ['<html>\n', ''],
  ])('%j → %j', (text, release) => {
    expect(parseKernelVersionFile(text)).toBe(release);
  });
});
