// A program built once against one kernel's layout and relocated for another reads the same
// field values there as the same program built for that kernel, run in packages/vm's interpreter
// on records laid out by the real format files of both kernels. (Here, not in packages/compat:
// compat may not depend on packages/vm; the CLI joins them.)
import { checkCompat, profileFormat } from '@probeyard/compat';
import { describe, expect, it } from 'vitest';
import { loadSpec } from '@probeyard/runtime';
import { exampleSpec, fixtureProfile, objectSpec, recordOf } from './compat-fixtures.js';

function lastSeen(runner: ReturnType<typeof loadSpec>) {
  const snap = runner.snapshot().find((m) => m.name === 'last')!;
  return snap.entries[0]!.typedValues![0];
}

describe('relocated reads', () => {
  it('sched_switch built for 6.18, relocated to 3.10.49, reads what the 3.10.49 build reads', async () => {
    const target = await fixtureProfile('android-3.10.49');
    const format = profileFormat(target, 'sched/sched_switch')!;
    // prev_state -2 is negative: 4 bytes on 3.10.49, sign-extended to the 64-bit long the 6.18 build expects
    const record = recordOf(format, { common_pid: 77, prev_pid: 1234, prev_state: -2, next_comm: 'kworker/0:1', next_pid: 4321, prev_comm: 'bash' });

    const built618 = await objectSpec('switch_fields_618.o');
    const v618 = checkCompat(built618, target);
    expect(v618.status).toBe('relocated');
    expect(v618.programs[0]!.changes).toEqual([
      'prev_state: load size 8 → 4, sign-extended (ldxsw)',
      'next_pid: offset 56 → 52',
      'next_comm: offset 40 → 36',
    ]);
    const built31049 = await objectSpec('switch_fields_31049.o');
    const v31049 = checkCompat(built31049, target);
    expect(v31049.status).toBe('compatible');

    const eventIds = new Map([['sched/sched_switch', format.id]]);
    const a = loadSpec(v618.relocated!, { eventIds });
    const b = loadSpec(v31049.relocated!, { eventIds });
    for (const r of [a, b]) expect(r.runRecord(format.id, { cpu: 0, timestamp: 1000, data: record })).toBe(1);
    const expected = { prev_pid: 1234n, prev_state: -2n, next_pid: 4321n, next_comm: 'kworker/0:1' };
    expect(lastSeen(a)).toEqual(expected);
    expect(lastSeen(b)).toEqual(expected);
  });

  it('the unrelocated 6.18 build would read garbage there (the reason relocation exists)', async () => {
    const target = await fixtureProfile('android-3.10.49');
    const format = profileFormat(target, 'sched/sched_switch')!;
    const record = recordOf(format, { common_pid: 77, prev_pid: 1234, prev_state: -2, next_comm: 'kworker/0:1', next_pid: 4321 });
    const raw = loadSpec(await objectSpec('switch_fields_618.o'), { eventIds: new Map([['sched/sched_switch', format.id]]) });
    raw.runRecord(format.id, { cpu: 0, timestamp: 1000, data: record });
    const seen = lastSeen(raw) as Record<string, unknown>;
    expect(seen.next_pid).not.toBe(4321n);
    expect(seen.next_comm).not.toBe('kworker/0:1');
  });

  it.each([
    ['linux-6.18', 12],
    ['android-3.4.0', 12],
    ['android-3.10.49', 12],
  ] as const)('runqlat on %s records: wakeup then switch 5 ms later lands in slot %i', async (kernel, slot) => {
    const target = await fixtureProfile(kernel);
    const verdict = checkCompat(await exampleSpec('runqlat'), target);
    expect(verdict.relocated).toBeDefined();
    const wake = profileFormat(target, 'sched/sched_wakeup')!;
    const sw = profileFormat(target, 'sched/sched_switch')!;
    const runner = loadSpec(verdict.relocated!, { eventIds: new Map([['sched/sched_wakeup', wake.id], ['sched/sched_switch', sw.id]]) });
    runner.runRecord(wake.id, { cpu: 0, timestamp: 1_000_000, data: recordOf(wake, { pid: 42, success: 1, target_cpu: 1, comm: 'x' }) });
    // a failed wakeup (success = 0) exists only before 5.14; the program skips it there
    runner.runRecord(wake.id, { cpu: 0, timestamp: 1_000_000, data: recordOf(wake, { pid: 43, success: 0, target_cpu: 1 }) });
    runner.runRecord(sw.id, { cpu: 0, timestamp: 6_000_000, data: recordOf(sw, { next_pid: 42, prev_pid: 7 }) });
    const hist = runner.snapshot().find((m) => m.name === 'runq_usecs')!;
    const counts = hist.entries.map((e) => e.typedValues![0]);
    expect(counts[slot]).toBe(1n);
    expect(counts.reduce((s: bigint, c) => s + (c as bigint), 0n)).toBe(1n);
    const start = runner.snapshot().find((m) => m.name === 'start')!;
    const pending = start.entries.map((e) => e.typedKey);
    // on 6.18 the wakeup of 43 counts (no success field); before 5.14 it was skipped
    expect(pending).toEqual(kernel === 'linux-6.18' ? [43] : []);
  });

  it('syscount built for 64-bit long counts the same ids on the 32-bit 3.10.49 layout', async () => {
    const target = await fixtureProfile('android-3.10.49');
    const format = profileFormat(target, 'raw_syscalls/sys_enter')!;
    const v = checkCompat(await exampleSpec('syscount'), target);
    expect(v.status).toBe('relocated');
    const runner = loadSpec(v.relocated!, { eventIds: new Map([['raw_syscalls/sys_enter', format.id]]) });
    for (const id of [3, 3, 64, 3]) runner.runRecord(format.id, { cpu: 0, timestamp: 1, data: recordOf(format, { id, args: 0 }) });
    const counts = runner.snapshot().find((m) => m.name === 'syscalls')!.entries.map((e) => [e.typedKey, e.typedValues![0]]);
    expect(new Map(counts as [number, bigint][])).toEqual(new Map([[3, 3n], [64, 1n]]));
  });
});
