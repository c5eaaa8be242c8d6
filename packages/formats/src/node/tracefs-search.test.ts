import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeTracefsSearch, searchTracefs, tracefsMountsOf } from './tracefs-live.js';

// A directory laid out as tracefs is (`instances/`, `events/header_page`): what the search checks.
function fakeTracefs(dir: string): string {
  mkdirSync(join(dir, 'instances'), { recursive: true });
  mkdirSync(join(dir, 'events'), { recursive: true });
  writeFileSync(join(dir, 'events', 'header_page'), 'field: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n');
  return dir;
}

describe('tracefsMountsOf', () => {
  it.each([
    ['nodev /sys/kernel/tracing tracefs rw,relatime 0 0', ['/sys/kernel/tracing']],
    ['debugfs /sys/kernel/debug debugfs rw 0 0', ['/sys/kernel/debug/tracing']],
    ['proc /proc proc rw 0 0\nnone /mnt/my\\040trace tracefs rw 0 0\n', ['/mnt/my trace']],
    ['sysfs /sys sysfs rw 0 0\n\n', []],
  ])('%j → %j', (text, paths) => {
    expect(tracefsMountsOf(text)).toEqual(paths);
  });
});

describe('searchTracefs', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'probeyard-tracefs-search-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('finds a tracefs mounted somewhere else through the mount table', () => {
    const where = fakeTracefs(join(tmp, 'elsewhere tracing'));
    const mounts = join(tmp, 'mounts');
    writeFileSync(mounts, `proc /proc proc rw 0 0\nnodev ${where.replace(/ /g, '\\040')} tracefs rw,relatime 0 0\n`);
    const missing = [join(tmp, 'no-such-1'), join(tmp, 'no-such-2')];
    const s = searchTracefs({ paths: missing, mountsFile: mounts });
    expect(s.mount).toEqual({ path: where, mountedHere: false });
    expect(s.looked).toEqual([...missing, where]);
  });

  it('takes the first default path that is a tracefs, before the mount table', () => {
    const first = fakeTracefs(join(tmp, 'first'));
    const s = searchTracefs({ paths: [join(tmp, 'absent'), first], mountsFile: join(tmp, 'no-mounts-file') });
    expect(s.mount?.path).toBe(first);
  });

  it('says where it looked when there is none', () => {
    const notTracefs = join(tmp, 'plain');
    mkdirSync(notTracefs, { recursive: true });
    const mounts = join(tmp, 'mounts-none');
    writeFileSync(mounts, `debugfs ${join(tmp, 'dbg')} debugfs rw 0 0\n`);
    const s = searchTracefs({ paths: [notTracefs], mountsFile: mounts });
    expect(s.mount).toBeUndefined();
    expect(s.looked).toEqual([notTracefs, join(tmp, 'dbg', 'tracing')]);
    expect(describeTracefsSearch(s, mounts)).toBe(
      `no mounted tracefs: looked in ${notTracefs}, ${join(tmp, 'dbg', 'tracing')} (all of them and every tracefs mount of ${mounts}); mount one with \`mount -t tracefs nodev /sys/kernel/tracing\` (root)`,
    );
    const unreadable = searchTracefs({ paths: [notTracefs], mountsFile: join(tmp, 'nope') });
    expect(unreadable.mountsError).toMatch(/nope: ENOENT/);
    expect(describeTracefsSearch(unreadable)).toContain(`looked in ${notTracefs}; ${join(tmp, 'nope')}: ENOENT`);
  });
});
