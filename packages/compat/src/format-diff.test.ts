import { describe, expect, it } from 'vitest';
import { fixtureFormat, fixtureProfile } from '../test/fixtures.js';
import { diffEventFormats, diffProfiles, formatEventDiffs } from './format-diff.js';

const kinds = (a: Parameters<typeof diffEventFormats>[0], b: Parameters<typeof diffEventFormats>[1]) =>
  diffEventFormats(a, b).map((c) => `${c.kind} ${c.field}`);

describe('diffEventFormats', () => {
  it.each([
    [
      'sched/sched_switch',
      'android-3.10.49',
      'linux-6.18',
      ['resized prev_state', 'moved next_comm', 'moved next_pid', 'moved next_prio'],
    ],
    ['sched/sched_wakeup', 'android-3.10.49', 'linux-6.18', ['removed success', 'moved target_cpu']],
    [
      'sched/sched_process_fork',
      'android-3.10.49',
      'linux-6.18',
      ['became-dynamic parent_comm', 'moved parent_pid', 'became-dynamic child_comm', 'moved child_comm', 'moved child_pid'],
    ],
    [
      'sched/sched_wakeup',
      'android-3.4.0',
      'android-3.10.49',
      ['removed common_padding', 'moved comm', 'moved pid', 'moved prio', 'moved success', 'moved target_cpu'],
    ],
    [
      'block/block_rq_issue',
      'android-3.10.49',
      'linux-6.18',
      ['type-changed rwbs', 'resized rwbs', 'moved rwbs', 'moved comm', 'moved cmd', 'added ioprio'],
    ],
  ] as const)('%s from %s to %s', (event, a, b, expected) => {
    expect(kinds(fixtureFormat(a, event), fixtureFormat(b, event))).toEqual(expected);
  });

  it('says what changed in words', () => {
    const changes = diffEventFormats(fixtureFormat('android-3.10.49', 'sched/sched_process_fork'), fixtureFormat('linux-6.18', 'sched/sched_process_fork'));
    expect(changes[0]!.text).toBe('parent_comm became dynamic: char parent_comm[16] is now __data_loc char[] parent_comm');
    expect(changes[0]).toMatchObject({ before: { size: 16, arrayLength: 16 }, after: { size: 4, dynamic: 'data_loc' } });
  });

  it('finds a signedness change', () => {
    const a = fixtureFormat('linux-6.18', 'sched/sched_switch');
    const b = structuredClone(a);
    b.fields.find((f) => f.name === 'next_pid')!.signed = false;
    expect(diffEventFormats(a, b).map((c) => c.text)).toEqual(['next_pid became unsigned']);
  });
});

describe('diffProfiles', () => {
  it('lists events only in one profile and the changed ones, with text', async () => {
    const a = await fixtureProfile('android-3.4.0');
    const b = await fixtureProfile('linux-6.18');
    const diffs = diffProfiles(a, b);
    expect(diffs.map((d) => `${d.event} ${d.status}`)).toEqual([
      'block/block_rq_issue changed',
      'raw_syscalls/sys_enter only-in-b',
      'sched/sched_process_exec changed',
      'sched/sched_process_fork changed',
      'sched/sched_switch changed',
      'sched/sched_wakeup changed',
    ]);
    const one = diffProfiles(a, b, { event: 'sched_process_exec' });
    expect(formatEventDiffs(one)).toBe(
      [
        'sched/sched_process_exec:',
        '  removed: common_padding removed (was int common_padding at offset 8, size 4)',
        '  moved: filename moved from offset 12 to 8',
        '  moved: pid moved from offset 16 to 12',
        '  moved: old_pid moved from offset 20 to 16',
        '',
      ].join('\n'),
    );
  });

  it('reports `same` for a selected event with identical formats', async () => {
    const a = await fixtureProfile('linux-6.18');
    expect(diffProfiles(a, a, { event: 'sched/sched_switch' })).toEqual([{ event: 'sched/sched_switch', status: 'same', changes: [] }]);
  });
});
