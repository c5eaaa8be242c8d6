import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { profileFormat, profileOfTraceDat } from '@probeyard/compat';
import { readEventsTarball, readTar } from '@probeyard/formats';
import { openTraceDatFile } from '@probeyard/formats/node';
import { describe, expect, it } from 'vitest';
import { profileTarball, readLiveProfile, readTraceDatProfile } from './node-profile.js';
import { writeTar } from './tar.js';

const recording = fileURLToPath(new URL('../../../../examples/recordings/sched-small.dat', import.meta.url));

describe('writeTar', () => {
  it('writes ustar archives that read back byte for byte, long paths included', () => {
    const long = `events/${'s'.repeat(60)}/${'e'.repeat(80)}/format`;
    const files = [
      { path: 'events/header_page', text: 'field: u64 timestamp;\n' },
      { path: long, text: 'name: x\nID: 1\n'.repeat(100) },
      { path: 'empty', text: '' },
    ];
    const read = readTar(writeTar(files));
    expect(read.map((f) => ({ path: f.path, text: new TextDecoder().decode(f.bytes) }))).toEqual(files);
  });
});

describe('the node profile', () => {
  it('of a recording is its formats, partial, with the hash packages/compat gives the same recording', async () => {
    const p = await readTraceDatProfile(recording);
    expect([p.complete, p.kernel.complete]).toEqual([false, false]);
    expect(p.release).toMatch(/^6\.18/);
    expect(p.machine).toBe('x86_64');
    expect([...p.kernel.events.keys()]).toEqual(expect.arrayContaining(['sched/sched_switch', 'sched/sched_wakeup']));
    const file = openTraceDatFile(recording);
    try {
      const compat = await profileOfTraceDat(file.reader.dat);
      expect(compat.hash).toBe(p.hash);
      // formats parsed when asked for are the ones compat parses up front
      expect([...p.kernel.events]).toEqual([...compat.events]);
      expect(p.kernel.wordSize).toBe(compat.wordSize);
      for (const key of compat.events.keys()) expect(profileFormat(p.kernel, key)).toEqual(profileFormat(compat, key));
      expect(p.kernel.formats.size).toBe(compat.formats.size);
    } finally {
      file.close();
    }
    // what the registry reads from the tarball the agent reports is the same profile
    expect((await readEventsTarball(profileTarball(p))).hash).toBe(p.hash);
  });

  const tracefs = '/sys/kernel/tracing';
  const live = existsSync(`${tracefs}/events/header_page`);
  it.skipIf(!live)('of the live kernel is every format of tracefs, complete', async () => {
    const p = await readLiveProfile(tracefs);
    expect([p.complete, p.kernel.complete]).toEqual([true, true]);
    expect(p.kernel.events.size).toBeGreaterThan(500);
    expect(p.kernel.events.has('raw_syscalls/sys_enter')).toBe(true);
    expect((await readEventsTarball(profileTarball(p))).hash).toBe(p.hash);
  });
  if (!live) console.log(`skipped the live profile test: no tracefs at ${tracefs} (root with tracefs mounted needed)`);
});
