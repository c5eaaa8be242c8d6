import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixturesDir } from '../../test/fixtures.js';
import { readLiveProfile, readProfile } from './read-profile.js';

// A dump as the corpus keeps one: `<dir>/kernel_version.txt` beside `<dir>/events/`.
describe('kernel profile names and completeness from files', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'probeyard-profile-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const dump = join(tmp, 'dump');
  cpSync(join(fixturesDir, 'formats', 'linux-6.18'), join(dump, 'events'), { recursive: true });
  writeFileSync(join(dump, 'kernel_version.txt'), '6.18.44-fc-v782\n');

  it.each([
    ['the dump folder', (d: string) => d],
    ['its events/ folder', (d: string) => join(d, 'events')],
  ])('an events folder is named by the kernel_version.txt beside it (given %s), and is complete', async (_, at) => {
    const p = await readProfile(at(dump));
    expect(p).toMatchObject({ release: '6.18.44-fc-v782', source: 'events-tree', complete: true });
  });

  it('--name (meta.release) wins over the file; a folder marked partial is partial', async () => {
    expect(await readProfile(dump, { release: 'my-kernel', complete: false })).toMatchObject({ release: 'my-kernel', complete: false });
  });

  it('a kernel_version.txt inside events/ names it too; without one the release is empty', async () => {
    const inner = join(tmp, 'inner');
    cpSync(join(fixturesDir, 'formats', 'android-3.4.0'), inner, { recursive: true });
    expect((await readProfile(inner)).release).toBe('');
    writeFileSync(join(inner, 'kernel_version.txt'), 'Linux phone 3.4.0-gadb2201 #1 SMP PREEMPT armv7l\n');
    expect((await readProfile(inner)).release).toBe('3.4.0-gadb2201');
  });

  it('a tarball with kernel_version.txt at its top is named by it, and complete unless marked', async () => {
    const tarball = join(tmp, 'dump.tar.gz');
    execFileSync('tar', ['-C', dump, '-czf', tarball, 'events', 'kernel_version.txt']);
    expect(await readProfile(tarball)).toMatchObject({ release: '6.18.44-fc-v782', source: 'tarball', complete: true });
    expect(await readProfile(tarball, { release: 'x', complete: false })).toMatchObject({ release: 'x', complete: false });
  });

  it('live: the error says where it looked', async () => {
    mkdirSync(join(tmp, 'not-tracefs'));
    const mounts = join(tmp, 'mounts');
    writeFileSync(mounts, 'proc /proc proc rw 0 0\n');
    await expect(readLiveProfile({}, { paths: [join(tmp, 'not-tracefs')], mountsFile: mounts })).rejects.toThrow(
      `read live profile: no mounted tracefs: looked in ${join(tmp, 'not-tracefs')} (all of them and every tracefs mount of ${mounts})`,
    );
  });

  it('live: a tracefs found through the mount table is read, complete, with the release given', async () => {
    // a fake tracefs: what the search checks (instances/, events/header_page) and a few formats
    const fake = join(tmp, 'elsewhere');
    cpSync(join(fixturesDir, 'formats', 'linux-6.18'), join(fake, 'events'), { recursive: true });
    mkdirSync(join(fake, 'instances'));
    const mounts = join(tmp, 'mounts2');
    writeFileSync(mounts, `nodev ${fake} tracefs rw,relatime 0 0\n`);
    const p = await readLiveProfile({ release: 'named' }, { paths: [], mountsFile: mounts });
    expect(p).toMatchObject({ source: 'tracefs', complete: true, release: 'named' });
    expect(p.events.has('sched/sched_switch')).toBe(true);
  });
});
