// oomkill over recordings/oom.dat: one event per mark_victim record with the victim's pid, name,
// memory, uid and oom_score_adj, and a count per name; on a 5.10.43 record (the pid alone) the
// event carries the pid and zeros, the name empty.
import { describe, expect, it } from 'vitest';
import { kernelFormat, kernelProfile } from './support/kernels.js';
import { recordOf } from './support/record-of.js';
import { recording } from './support/recordings.js';
import { entriesOf, loadLibraryProgram, runOverRecording } from './support/run-recording.js';
import { readRecords } from './support/trace-records.js';

describe('oomkill over oom.dat', () => {
  it('oom_kill_events and oom_kills hold the victim of each mark_victim record', async () => {
    const path = recording('oom');
    const run = await runOverRecording('oomkill', path);
    const records = await readRecords(path, ['oom/mark_victim']);
    const expected = records.map((r) => ({
      pid: r.fields.pid,
      uid: r.fields.uid,
      comm: r.fields.comm,
      total_vm_kb: r.fields.total_vm,
      anon_rss_kb: r.fields.anon_rss,
      file_rss_kb: r.fields.file_rss,
      shmem_rss_kb: r.fields.shmem_rss,
      pgtables_kb: r.fields.pgtables,
      oom_score_adj: r.fields.oom_score_adj,
      pad: 0,
    }));
    expect(expected).toHaveLength(1);
    expect(expected[0]!.comm).toBe('perl');
    expect(Number(expected[0]!.anon_rss_kb)).toBeGreaterThan(30_000); // the 32 MiB cgroup, full
    expect(run.events.get('oom_kill_events')).toEqual(expected);
    expect(entriesOf(run, 'oom_kills')).toEqual([[{ comm: 'perl' }, 1n]]);
  });
});

describe('oomkill on an android 5.10.43 record', () => {
  it('reports the pid, and zeros for what 5.10 does not say', async () => {
    const loaded = await loadLibraryProgram('oomkill', await kernelProfile('android-5.10.43'));
    const f = await kernelFormat('android-5.10.43', 'oom/mark_victim');
    loaded.runRecord('oom/mark_victim', { cpu: 0, timestamp: 1, data: recordOf(f, { common_pid: 1, pid: 31337 }) });
    expect(loaded.events().get('oom_kill_events')).toEqual([
      { pid: 31337, uid: 0, comm: '', total_vm_kb: 0n, anon_rss_kb: 0n, file_rss_kb: 0n, shmem_rss_kb: 0n, pgtables_kb: 0n, oom_score_adj: 0, pad: 0 },
    ]);
    expect(entriesOf({ maps: loaded.maps() }, 'oom_kills')).toEqual([[{ comm: '' }, 1n]]);
  });
});
