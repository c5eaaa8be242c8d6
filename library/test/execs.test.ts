// execs over recordings/procs.dat: one exec_events record per sched_process_exec record, in order,
// with its pid, old pid, file name and command name, and the count per file name.
import { describe, expect, it } from 'vitest';
import { recording } from './support/recordings.js';
import { entriesOf, runOverRecording } from './support/run-recording.js';
import { countBy, readRecords } from './support/trace-records.js';

const procs = recording('procs');
const FILENAME_LEN = 128;

describe('execs over procs.dat', async () => {
  const run = await runOverRecording('execs', procs);
  const records = await readRecords(procs, ['sched/sched_process_exec']);

  it('emits one event per exec, in order, with the fields of the record', () => {
    const expected = records.map((r) => ({
      pid: r.fields.pid as number,
      old_pid: r.fields.old_pid as number,
      comm: (r.comm ?? '<...>').slice(0, 15),
      filename: (r.fields.filename as string).slice(0, FILENAME_LEN - 1),
    }));
    expect(expected.map((e) => e.filename)).toContain('/bin/true');
    expect(run.events.get('exec_events')).toEqual(expected);
  });

  it('execs_by_file: the number of execs of each file', () => {
    const expected = countBy(records, (r) => (r.fields.filename as string).slice(0, FILENAME_LEN - 1));
    const got = new Map(entriesOf(run, 'execs_by_file').map(([k, v]) => [(k as { filename: string }).filename, Number(v)]));
    expect(expected.get('/bin/true')).toBe(5);
    expect(got).toEqual(expected);
  });
});
