import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixturesDir, fixtureText } from '../../test/support/fixtures.js';
import { buildEventFormatSet } from '../profile/event-format-set.js';
import { readEventsTree } from './events-tree.js';

describe('readEventsTree', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'probeyard-events-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('reads every format and both headers of a directory', async () => {
    const set = await readEventsTree(join(fixturesDir, 'linux-6.18'));
    expect(set.errors).toEqual([]);
    expect(set.formats.size).toBe(15);
    expect(set.formats.get('sched/sched_switch')!.path).toBe('sched/sched_switch/format');
    expect(set.headerPage).toContain('field: u64 timestamp;');
    expect(set.headerEvent).toContain('type_len');
  });

  it('gives the same profile hash as the same files from a tarball or a list', async () => {
    const dir = join(tmp, 'same');
    mkdirSync(join(dir, 'sched', 'sched_switch'), { recursive: true });
    writeFileSync(join(dir, 'sched', 'sched_switch', 'format'), fixtureText('linux-6.18', 'sched/sched_switch'));
    writeFileSync(join(dir, 'sched', 'enable'), '0\n');
    const fromDir = await readEventsTree(dir);
    const fromList = await buildEventFormatSet([{ path: 'events/sched/sched_switch/format', text: fixtureText('linux-6.18', 'sched/sched_switch') }]);
    expect(fromDir.hash).toBe(fromList.hash);
  });

  it('collects a broken format as an error and keeps the rest', async () => {
    const dir = join(tmp, 'broken');
    mkdirSync(join(dir, 'x', 'bad'), { recursive: true });
    mkdirSync(join(dir, 'sched', 'sched_wakeup'), { recursive: true });
    writeFileSync(join(dir, 'x', 'bad', 'format'), 'name: bad\nID: 3\nformat:\n\tfield:int a;\toffset:8;\tsize:99999999999;\tsigned:1;\n');
    writeFileSync(join(dir, 'sched', 'sched_wakeup', 'format'), fixtureText('linux-6.18', 'sched/sched_wakeup'));
    const set = await readEventsTree(dir);
    expect([...set.formats.keys()]).toEqual(['sched/sched_wakeup']);
    expect(set.errors.map((e) => [e.path, e.error.code, e.error.line])).toEqual([['x/bad/format', 'out-of-range', 4]]);
  });

  it('throws not-found for a missing directory', async () => {
    await expect(readEventsTree(join(tmp, 'nope'))).rejects.toMatchObject({ code: 'not-found' });
  });
});
