import { gzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir, fixtureText } from '../../test/support/fixtures.js';
import { writeTar } from '../../test/support/write-tar.js';
import { FormatError } from '../errors.js';
import { buildEventFormatSet, classifyEventsPath, digestEventFormats, readEventsTarball, sha256Hex } from './event-format-set.js';
import { readTar } from './tar.js';

const switchText = fixtureText('linux-6.18', 'sched/sched_switch');
const wakeupText = fixtureText('linux-6.18', 'sched/sched_wakeup');

describe('readTar', () => {
  it('reads regular files of a ustar archive, plain and gzipped', () => {
    const tar = writeTar([
      { path: 'events/sched/sched_switch/format', text: switchText },
      { path: 'events/header_page', text: 'hp' },
    ]);
    for (const bytes of [tar, gzipSync(tar)]) {
      const files = readTar(bytes);
      expect(files.map((f) => f.path)).toEqual(['events/sched/sched_switch/format', 'events/header_page']);
      expect(new TextDecoder().decode(files[0]!.bytes)).toBe(switchText);
    }
  });

  it('joins the ustar prefix for long paths', () => {
    const long = `events/${'s'.repeat(60)}/${'e'.repeat(60)}/format`;
    expect(readTar(writeTar([{ path: long, text: 'x' }]))[0]!.path).toBe(long);
  });

  it.each([
    ['a header checksum that does not add up', (t: Uint8Array) => { t[0] = t[0]! ^ 0x20; }, 'malformed'],
    ['an entry longer than the archive', (t: Uint8Array) => t.subarray(0, 700), 'truncated'],
    ['a size that is not octal', (t: Uint8Array) => { t.set([0x39, 0x39], 124); }, 'malformed'],
  ])('rejects %s', (_what, mutate, code) => {
    const tar = writeTar([{ path: 'events/header_page', text: 'x'.repeat(600) }]);
    const mutated = mutate(tar) ?? tar;
    expect(() => readTar(mutated)).toThrow(expect.objectContaining({ code }));
  });

  it('rejects broken gzip as malformed', () => {
    const gz = gzipSync(writeTar([{ path: 'a', text: 'b' }]));
    expect(() => readTar(gz.subarray(0, 20))).toThrow(FormatError);
  });
});

describe('EventFormatSet', () => {
  it.each([
    ['events/sched/sched_switch/format', { kind: 'format', system: 'sched', event: 'sched_switch' }],
    ['./events/header_page', { kind: 'header_page' }],
    ['sched/sched_switch/format', { kind: 'format', system: 'sched', event: 'sched_switch' }],
    ['all/events/header_event', { kind: 'header_event' }],
    ['events/sched/enable', undefined],
    ['events/sched/sched_switch/id', undefined],
  ])('classifies %s', (path, kind) => {
    expect(classifyEventsPath(path)).toEqual(kind);
  });

  it('keys formats by system/name with the sha256 of their text, and hashes the sorted set', async () => {
    const set = await readEventsTarball(gzipSync(writeTar([
      { path: 'events/sched/sched_wakeup/format', text: wakeupText },
      { path: 'events/sched/sched_switch/format', text: switchText },
      { path: 'events/sched/enable', text: '0\n' },
      { path: 'events/header_page', text: 'hp\n' },
      { path: 'events/header_event', text: 'he\n' },
    ])));
    expect([...set.formats.keys()]).toEqual(['sched/sched_wakeup', 'sched/sched_switch']);
    expect(set.formats.get('sched/sched_switch')!.hash).toBe(await sha256Hex(switchText));
    expect(set.formats.get('sched/sched_switch')!.format.id).toBe(372);
    expect(set.headerPage).toBe('hp\n');
    expect(set.longSize).toBe(8); // from sched_switch's `long prev_state`
    expect(set.headerEvent).toBe('he\n');
    expect(set.errors).toEqual([]);
    const expected = [`sched/sched_switch ${await sha256Hex(switchText)}\n`, `sched/sched_wakeup ${await sha256Hex(wakeupText)}\n`].join('') +
      `header_page ${await sha256Hex('hp\n')}\nheader_event ${await sha256Hex('he\n')}\n`;
    expect(set.hash).toBe(await sha256Hex(expected));
    // Order of files does not change the profile hash; content does.
    const again = await buildEventFormatSet([
      { path: 'header_event', text: 'he\n' },
      { path: 'sched/sched_switch/format', text: switchText },
      { path: 'header_page', text: 'hp\n' },
      { path: 'sched/sched_wakeup/format', text: wakeupText },
    ]);
    expect(again.hash).toBe(set.hash);
    const changed = await buildEventFormatSet([
      { path: 'header_event', text: 'he\n' },
      { path: 'sched/sched_switch/format', text: switchText.replace('offset:60', 'offset:64') },
      { path: 'header_page', text: 'hp\n' },
      { path: 'sched/sched_wakeup/format', text: wakeupText },
    ]);
    expect(changed.hash).not.toBe(set.hash);
  });

  it('digests a tree as it builds it (same hash, errors and long size) without keeping parsed formats', async () => {
    const files = [
      { path: 'header_page', text: readFileSync(join(fixturesDir, 'android-3.4.0', 'header_page'), 'utf8') },
      { path: 'events/sched/sched_switch/format', text: switchText },
      { path: 'events/bad/broken/format', text: 'name: broken\nID: 1\nformat:\n\tfield:int x;\toffset:zz;\tsize:4;\n' },
      { path: 'sched/sched_wakeup/format', text: wakeupText },
      { path: 'syscalls/sys_enter_openat/format', text: fixtureText('linux-6.18', 'syscalls/sys_enter_openat') },
    ];
    const set = await buildEventFormatSet(files);
    const digest = await digestEventFormats(files);
    expect(digest.hash).toBe(set.hash);
    expect(digest.longSize).toBe(set.longSize);
    expect(digest.errors.map((e) => e.error.message)).toEqual(set.errors.map((e) => e.error.message));
    expect([...digest.formats]).toEqual([...set.formats].map(([k, f]) => [k, { hash: f.hash, path: f.path }]));
  });

  it('collects a broken file as an error with its path and keeps the others', async () => {
    const set = await buildEventFormatSet([
      { path: 'events/sched/sched_switch/format', text: switchText },
      { path: 'events/bad/broken/format', text: 'name: broken\nID: 1\nformat:\n\tfield:int x;\toffset:zz;\tsize:4;\n' },
      { path: 'events/sched/other/format', text: wakeupText },
    ]);
    expect([...set.formats.keys()]).toEqual(['sched/sched_switch']);
    expect(set.errors.map((e) => [e.path, e.error.code, e.error.line])).toEqual([
      ['events/bad/broken/format', 'malformed', 4],
      ['events/sched/other/format', 'malformed', 1],
    ]);
    expect(set.errors[0]!.error.message).toBe("events/bad/broken/format: format line 4: field 'int x': offset 'zz' is not a number");
    expect(set.errors[1]!.error.message).toMatch(/names event 'sched_wakeup' inside folder 'other'/);
  });

  it.each([
    ['linux-6.18', 8],
    ['android-3.4.0', 4],
  ])('reads the long size of %s from header_page and gives it to formats that do not show it', async (kernel, size) => {
    const set = await buildEventFormatSet([
      { path: 'header_page', text: readFileSync(join(fixturesDir, kernel, 'header_page'), 'utf8') },
      { path: 'syscalls/sys_enter_openat/format', text: fixtureText('linux-6.18', 'syscalls/sys_enter_openat') },
    ]);
    expect(set.longSize).toBe(size);
    expect(set.formats.get('syscalls/sys_enter_openat')!.format.longSize).toBe(size);
  });
});
