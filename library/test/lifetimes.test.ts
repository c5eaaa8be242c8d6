// lifetimes over recordings/procs.dat: forks per parent name, and for every task whose fork was
// recorded, its exit event and lifetime histogram, as the records say; on 4.4.88 records (inline
// `char parent_comm[16]`, `__data_loc` on 6.18) the parent's name is read all the same.
import { describe, expect, it } from 'vitest';
import { kernelFormat, kernelProfile } from './support/kernels.js';
import { recordOf } from './support/record-of.js';
import { recording } from './support/recordings.js';
import { entriesOf, loadLibraryProgram, runOverRecording } from './support/run-recording.js';
import { countBy, log2Slot, readRecords } from './support/trace-records.js';

const procs = recording('procs');

describe('lifetimes over procs.dat', async () => {
  const run = await runOverRecording('lifetimes', procs);
  const records = await readRecords(procs, ['sched/sched_process_fork', 'sched/sched_process_exit']);

  it("forks_by_parent: one count per fork, by the parent's name", () => {
    const expected = countBy(records, (r) => (r.event === 'sched/sched_process_fork' ? (r.fields.parent_comm as string).slice(0, 15) : undefined));
    expect([...expected.values()].reduce((a, b) => a + b, 0)).toBe(12);
    expect(new Map(entriesOf(run, 'forks_by_parent').map(([k, v]) => [(k as { comm: string }).comm, Number(v)]))).toEqual(expected);
  });

  it('exit_events and task_lifetime_ms: every exit of a task whose fork was recorded', () => {
    const started = new Map<number, { ts: bigint; ppid: number }>();
    const exits: { pid: number; ppid: number; comm: string; lifetime_ns: bigint }[] = [];
    const slots = new Array<number>(32).fill(0);
    for (const r of records) {
      if (r.event === 'sched/sched_process_fork') {
        started.set(r.fields.child_pid as number, { ts: r.ts, ppid: r.fields.parent_pid as number });
        continue;
      }
      const pid = r.fields.pid as number;
      const s = started.get(pid);
      if (!s) continue;
      started.delete(pid);
      exits.push({ pid, ppid: s.ppid, comm: r.fields.comm as string, lifetime_ns: r.ts - s.ts });
      slots[log2Slot((r.ts - s.ts) / 1_000_000n)]!++;
    }
    expect(exits.length).toBeGreaterThan(5);
    expect(exits.map((e) => e.comm)).toContain('true');
    expect(run.events.get('exit_events')).toEqual(exits);
    expect(entriesOf(run, 'task_lifetime_ms')).toEqual([[0, { slots }]]);
    expect(run.maps.get('task_starts')!.entries.map((e) => (e.typedKey as number))).toEqual(expect.arrayContaining([...started.keys()]));
    expect(run.maps.get('task_starts')!.entries.length).toBe(started.size);
  });
});

describe('lifetimes on android 4.4.88 records (inline comms)', () => {
  it('reads the inline parent_comm and the relocated pids', async () => {
    const loaded = await loadLibraryProgram('lifetimes', await kernelProfile('android-4.4.88'));
    const fork = await kernelFormat('android-4.4.88', 'sched/sched_process_fork');
    const exit = await kernelFormat('android-4.4.88', 'sched/sched_process_exit');
    loaded.runRecord('sched/sched_process_fork', { cpu: 0, timestamp: 5_000_000, data: recordOf(fork, { common_pid: 300, parent_comm: 'zygote64', parent_pid: 300, child_comm: 'zygote64', child_pid: 4242 }) });
    loaded.runRecord('sched/sched_process_exit', { cpu: 1, timestamp: 25_000_000, data: recordOf(exit, { common_pid: 4242, comm: 'com.example', pid: 4242, tgid: 4242, prio: 120 }) });
    const maps = loaded.maps();
    expect(entriesOf({ maps }, 'forks_by_parent')).toEqual([[{ comm: 'zygote64' }, 1n]]);
    expect(loaded.events().get('exit_events')).toEqual([{ pid: 4242, ppid: 300, comm: 'com.example', lifetime_ns: 20_000_000n }]);
    expect(loaded.faults()).toEqual({ on_fork: 0, on_exit: 0 });
  });
});
