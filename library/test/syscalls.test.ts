// syscalls over recordings/procs.dat: its maps hold exactly the counts of the recording's
// sys_enter records by id and by (pid, command name), counted from the records themselves.
import { describe, expect, it } from 'vitest';
import { recording } from './support/recordings.js';
import { entriesOf, runOverRecording } from './support/run-recording.js';
import { countBy, readRecords } from './support/trace-records.js';

const procs = recording('procs');

/** What bpf_get_current_comm answers in a replay: the saved command name, at most 15 bytes. */
const commOf = (comm: string | undefined, pid: number) => (comm ?? (pid === 0 ? '<idle>' : '<...>')).slice(0, 15);

describe('syscalls over procs.dat', async () => {
  const run = await runOverRecording('syscalls', procs);
  const records = await readRecords(procs, ['raw_syscalls/sys_enter']);

  it('runs once per sys_enter record, without faults', () => {
    expect(records.length).toBeGreaterThan(1000);
    expect(run.runs).toEqual({ on_sys_enter: records.length });
    expect(run.faults).toEqual({ on_sys_enter: 0 });
  });

  it('syscalls_by_id: one count per syscall id (the low 32 bits of `long id`)', () => {
    const expected = countBy(records, (r) => Number(BigInt.asUintN(32, r.fields.id as bigint)));
    const got = new Map(entriesOf(run, 'syscalls_by_id').map(([k, v]) => [k as number, Number(v)]));
    expect(expected.size).toBeGreaterThan(20);
    expect(got).toEqual(expected);
  });

  it('syscalls_by_process: one count per (pid, command name)', () => {
    const expected = countBy(records, (r) => `${r.pid} ${commOf(r.comm, r.pid)}`);
    const got = new Map(
      entriesOf(run, 'syscalls_by_process').map(([k, v]) => {
        const key = k as { pid: number; comm: string };
        return [`${key.pid} ${key.comm}`, Number(v)];
      }),
    );
    expect(expected.size).toBeGreaterThan(5);
    expect(got).toEqual(expected);
  });
});
