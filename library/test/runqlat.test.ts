// runqlat over recordings/procs.dat: its histogram equals the run-queue latencies computed from
// the records themselves (a task becomes runnable at sched_wakeup / sched_wakeup_new, or when
// switched out still runnable; it stops waiting at the sched_switch that runs it). Recordings
// without sched_wakeup_new cannot run it: their profile lacks one of its events.
import { checkCompat } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { describe, expect, it } from 'vitest';
import { librarySpec } from '../src/catalog.js';
import { corpusTraceDat, recording, schedSmall } from './support/recordings.js';
import { runOverRecording } from './support/run-recording.js';
import { type DecodedRecord, log2Slot, readRecords } from './support/trace-records.js';

/** prev_state bits of a task that left the CPU to sleep, stop or die (runqlat.c explains). */
const NOT_RUNNABLE = 0x2ffn;

/** The histogram of run-queue latencies (µs, log2 slots) of the records. */
export function expectedRunqHistogram(records: readonly DecodedRecord[]): number[] {
  const slots = new Array<number>(32).fill(0);
  const since = new Map<number, bigint>();
  const enqueue = (pid: number, ts: bigint) => {
    if (pid !== 0) since.set(pid, ts);
  };
  for (const r of records) {
    if (r.event === 'sched/sched_wakeup' || r.event === 'sched/sched_wakeup_new') {
      if (r.fields.success === 0) continue;
      enqueue(r.fields.pid as number, r.ts);
    } else if (r.event === 'sched/sched_switch') {
      if ((BigInt(r.fields.prev_state as bigint) & NOT_RUNNABLE) === 0n) enqueue(r.fields.prev_pid as number, r.ts);
      const next = r.fields.next_pid as number;
      const t = since.get(next);
      if (t === undefined) continue;
      since.delete(next);
      slots[log2Slot((r.ts - t) / 1000n)]!++;
    }
  }
  return slots;
}

const events = ['sched/sched_wakeup', 'sched/sched_wakeup_new', 'sched/sched_switch'];

describe('runqlat over procs.dat', () => {
  it('runq_latency_us is the histogram of the latencies in the records', async () => {
    const path = recording('procs');
    const run = await runOverRecording('runqlat', path);
    const records = await readRecords(path, events);
    const expected = expectedRunqHistogram(records);
    expect(expected.reduce((a, b) => a + b, 0)).toBeGreaterThan(200);
    const map = run.maps.get('runq_latency_us')!;
    expect(map.entries).toHaveLength(1);
    expect((map.entries[0]!.typedValues![0] as { slots: number[] }).slots).toEqual(expected);
    expect(run.faults).toEqual({ on_wakeup: 0, on_wakeup_new: 0, on_switch: 0 });
    expect(run.runs.on_wakeup_new).toBe(records.filter((r) => r.event === 'sched/sched_wakeup_new').length);
    // the tasks still waiting at the end are in the state map
    const waiting = run.maps.get('runnable_since_ns')!.entries.length;
    expect(waiting).toBeGreaterThan(0);
  });
});

const corpus = corpusTraceDat();
if ('missing' in corpus) console.log(`runqlat verdict on the corpus trace.dat skipped: ${corpus.missing}`);

describe.each([['sched-small.dat', schedSmall], ...('path' in corpus ? [['corpus trace.dat', corpus.path] as [string, string]] : [])])(
  'runqlat on %s (sched_switch and sched_wakeup only)',
  (_, path) => {
    it('runs without its sched_wakeup_new program: the recording has none (an optional program, skipped)', async () => {
      const spec = await librarySpec('runqlat');
      const v = checkCompat(spec, await readProfile(path));
      expect(v.status).not.toBe('unknown');
      expect(v.reasons.map((r) => [r.kind, r.event])).toEqual([['event-missing', 'sched/sched_wakeup_new']]);
      const skipped = spec.programs.filter((p) => p.attach.kind === 'tracepoint' && p.attach.event === 'sched_wakeup_new').map((p) => p.name);
      expect(v.skipped).toEqual(skipped);
      expect(v.relocated!.programs.map((p) => p.name)).toEqual(spec.programs.map((p) => p.name).filter((n) => !skipped.includes(n)));
    });
  },
);
