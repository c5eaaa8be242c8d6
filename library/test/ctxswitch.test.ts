// ctxswitch: per process leaving the CPU, its switches and its preemptions, as the sched_switch
// records say, over recordings/procs.dat, the examples' sched-small.dat and (when present) the
// corpus' trace.dat; relocated for 3.10.49 (a 4-byte `prev_state`), a preemption still counts.
import { describe, expect, it } from 'vitest';
import { kernelFormat, kernelProfile } from './support/kernels.js';
import { recordOf } from './support/record-of.js';
import { corpusTraceDat, recording, schedSmall } from './support/recordings.js';
import { entriesOf, loadLibraryProgram, runOverRecording } from './support/run-recording.js';
import { countBy, readRecords } from './support/trace-records.js';

const NOT_RUNNABLE = 0x2ffn;
const corpus = corpusTraceDat();
if ('missing' in corpus) console.log(`ctxswitch over the corpus trace.dat skipped: ${corpus.missing}`);

const asCounts = (entries: [unknown, unknown][]) => new Map(entries.map(([k, v]) => [`${(k as { pid: number }).pid} ${(k as { comm: string }).comm}`, Number(v)]));

describe.each([
  ['procs.dat', recording('procs')],
  ['sched-small.dat', schedSmall],
  ...('path' in corpus ? [['corpus trace.dat', corpus.path] as [string, string]] : []),
])('ctxswitch over %s', (_, path) => {
  it('switches_by_process and preemptions_by_process count the records by (pid, prev_comm)', async () => {
    const run = await runOverRecording('ctxswitch', path);
    const records = await readRecords(path, ['sched/sched_switch']);
    // the task leaving the CPU is the record's common_pid, its name prev_comm
    const key = (r: (typeof records)[number]) => `${r.pid} ${r.fields.prev_comm}`;
    const switches = countBy(records, key);
    const preemptions = countBy(records, (r) => ((BigInt(r.fields.prev_state as bigint) & NOT_RUNNABLE) === 0n ? key(r) : undefined));
    expect(records.length).toBeGreaterThan(200);
    expect(preemptions.size).toBeGreaterThan(0);
    expect(asCounts(entriesOf(run, 'switches_by_process'))).toEqual(switches);
    expect(asCounts(entriesOf(run, 'preemptions_by_process'))).toEqual(preemptions);
  });
});

describe('ctxswitch on android 3.10.49 records (32-bit `long prev_state`)', () => {
  it('counts a preempted task (R+) as a preemption and a sleeping one (S) not', async () => {
    const loaded = await loadLibraryProgram('ctxswitch', await kernelProfile('android-3.10.49'));
    const f = await kernelFormat('android-3.10.49', 'sched/sched_switch');
    const sw = (pid: number, comm: string, prevState: number) =>
      loaded.runRecord('sched/sched_switch', { cpu: 0, timestamp: 1, data: recordOf(f, { common_pid: pid, prev_pid: pid, prev_comm: comm, prev_state: prevState, next_pid: 0, next_comm: 'swapper/0' }) });
    sw(100, 'surfaceflinger', 1024); // TASK_RUNNING | TASK_STATE_MAX: preempted on 3.x
    sw(100, 'surfaceflinger', 1); // TASK_INTERRUPTIBLE
    sw(200, 'logd', 2); // TASK_UNINTERRUPTIBLE
    const maps = loaded.maps();
    expect(asCounts(entriesOf({ maps }, 'switches_by_process'))).toEqual(new Map([['100 surfaceflinger', 2], ['200 logd', 1]]));
    expect(asCounts(entriesOf({ maps }, 'preemptions_by_process'))).toEqual(new Map([['100 surfaceflinger', 1]]));
  });
});
