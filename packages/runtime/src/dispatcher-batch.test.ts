// Dispatcher.dispatch's batch lane (EventRuntime.runBatchRecord: run counts kept per batch and
// flushed after it) against dispatchRecord, which counts per run: the same counters, faults,
// maps and times right after every batch.
import { profileFormat } from '@probeyard/compat';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asmSpec, exampleSpec, fixtureProfile, type MemoryRecord, memoryStream, recordOf } from '../test/fixtures.js';
import { type AttachedTarget, Dispatcher } from './dispatcher.js';
import { encodeMapSnapshot } from './encode.js';
import { type LoadedSpec, loadForProfile, loadSpec } from './load-spec.js';

const profile = await fixtureProfile('linux-6.18');
const sw = profileFormat(profile, 'sched/sched_switch')!;
const wakeup = profileFormat(profile, 'sched/sched_wakeup')!;
const other = profileFormat(profile, 'sched/sched_process_fork')!;

// no helper (the lane's path that sets no CPU, time or pid): exits at once for next_pid <= 200,
// spins past its budget of 100 instructions above; a record too short for next_pid faults
const nextPid = sw.fields.find((f) => f.name === 'next_pid')!.byteOffset;
const spinSpec = await asmSpec(`.license "GPL"
.section tracepoint/sched/sched_switch
main:
  r2 = *(u32 *)(r1 + ${nextPid})
  if r2 > 200 goto spin
  r0 = 0
  exit
spin:
  r0 = 0
loop:
  r0 += 1
  if r0 < 1000 goto loop
  exit
`);
const runqlatSpec = await exampleSpec('runqlat');

function loadSpin(): LoadedSpec {
  return loadSpec(spinSpec, { eventIds: new Map([['sched/sched_switch', sw.id]]), formatOf: (e) => (e === 'sched/sched_switch' ? sw : undefined), budget: 100 });
}
function loadRunqlat(): LoadedSpec {
  const out = loadForProfile(runqlatSpec, profile, { cpuCount: 2 });
  if (!out.ok) throw new Error(out.status);
  return out.loaded;
}

/** What a target shows between batches (cpuNs apart: a sampled wall-time estimate). */
function observed(t: AttachedTarget) {
  const { cpuNs: _, ...counters } = t.counters;
  return {
    counters,
    skipped: t.skipped,
    faultCount: t.faultCount,
    lastFault: t.lastFault,
    maps: encodeMapSnapshot(t.loaded, { runId: 'r', takenAt: new Date(0), eventsSeen: 0, eventsLost: 0 }).maps,
  };
}

describe('Dispatcher.dispatch (the batch lane)', () => {
  it('has the counters right after a batch with faults and budget stops in the middle', async () => {
    const d = new Dispatcher();
    const t = d.attach('spin', loadSpin());
    const full = (pid: number) => recordOf(sw, { next_pid: pid });
    // 4 fine, then a budget stop (pid 300), a fault (a record cut before next_pid), fine ones
    const pids = [1, 2, 3, 4, 300, -1, 5, 6, 301, 7];
    const records: MemoryRecord[] = pids.map((pid, i) => ({ data: pid < 0 ? full(9).subarray(0, 12) : full(pid), cpu: i % 2, timeNs: 1000 + i }));
    const seen: unknown[] = [];
    // one batch of all ten, then counters as the agent reads them after it
    await d.run(memoryStream(records, 10, () => seen.push(structuredClone(t.counters))));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ eventsSeen: 10, runs: 10, faults: 1, budgetExhaustions: 2 });
    expect(t.faultCount).toBe(3);
    // the last stop was pid 301's budget: record 8
    expect(t.lastFault).toMatchObject({ program: 'main', code: 'budget-exhausted', record: { eventId: sw.id, cpu: 0, timeNs: '1008', hex: Buffer.from(full(301)).toString('hex') } });
    expect(d.records).toBe(10);
    expect(d.traceTimeNs).toBe('1009');
    // 7 runs of 4 instructions (load, compare, r0 = 0, exit), the 2 spins stopped at the budget
    // (100 counted, or one more: the instruction that went over), the fault at its first instruction
    const perRecord = new Dispatcher();
    const u = perRecord.attach('spin', loadSpin());
    for await (const b of memoryStream(records, 10)) for (let r = b.next(); r !== undefined; r = b.next()) perRecord.dispatchRecord(r);
    expect(observed(t)).toEqual(observed(u));
    expect(t.counters.instructions).toBeGreaterThanOrEqual(7 * 4 + 2 * 100);
    expect(t.counters.instructions).toBeLessThanOrEqual(7 * 4 + 2 * 101 + 1);
    expect(t.lastFault!.message).toMatch(/instruction budget|budget/);
  });

  it('counts a target detached during a batch up to its detach', async () => {
    const d = new Dispatcher();
    const t = d.attach('spin', loadSpin());
    const records: MemoryRecord[] = Array.from({ length: 6 }, (_, i) => ({ data: recordOf(sw, { next_pid: i }), timeNs: 10 + i }));
    const stream = memoryStream(records, 6);
    for await (const batch of stream) {
      let k = 0;
      // a batch that detaches the target after its third record (as an output callback could)
      const cut = {
        next: () => {
          if (k++ === 3) d.detach('spin');
          return batch.next();
        },
      };
      d.dispatch(cut);
    }
    expect(t.detached).toBe(true);
    expect(t.counters).toMatchObject({ eventsSeen: 3, runs: 3, instructions: 12 });
    expect(t.eventsSeen).toBe(3);
    expect(d.records).toBe(6);
  });

  it('gives what dispatchRecord gives, batch by batch (random records, batches, pauses, a time shift)', async () => {
    const kinds = ['switch', 'wakeup', 'other', 'short'] as const;
    const recordArb = fc.record({
      kind: fc.constantFrom(...kinds),
      pid: fc.oneof(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 190, max: 210 })),
      cpu: fc.integer({ min: 0, max: 1 }),
      gap: fc.integer({ min: 0, max: 5_000_000 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(recordArb, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 9 }),
        fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
        fc.constantFrom(0n, 7n, 2n ** 32n - 3n, 2n ** 40n),
        async (spec, batchSize, pauses, shift) => {
          let time = 2 ** 32 - 50_000_000; // crosses the 32-bit boundary of the low half
          const records: MemoryRecord[] = spec.map((s) => {
            time += s.gap;
            const data =
              s.kind === 'switch'
                ? recordOf(sw, { next_pid: s.pid, prev_pid: s.pid + 1 })
                : s.kind === 'wakeup'
                  ? recordOf(wakeup, { pid: s.pid })
                  : s.kind === 'other'
                    ? recordOf(other, { parent_pid: s.pid })
                    : recordOf(sw, { next_pid: s.pid }).subarray(0, 12);
            return { data, cpu: s.cpu, timeNs: time };
          });
          const run = async (batched: boolean) => {
            const d = new Dispatcher();
            if (shift !== 0n) d.shiftTime(shift);
            d.attach('spin', loadSpin());
            const q = d.attach('runqlat', loadRunqlat());
            const after: unknown[] = [];
            const stream = memoryStream(records, batchSize, (i) => {
              after.push({ records: d.records, time: d.traceTimeNs, targets: d.attached().map(observed) });
              q.paused = pauses[i % pauses.length]!;
            });
            for await (const b of stream) {
              if (batched) d.dispatch(b);
              else for (let r = b.next(); r !== undefined; r = b.next()) d.dispatchRecord(r);
            }
            return after;
          };
          expect(await run(true)).toEqual(await run(false));
        },
      ),
      { seed: 0x5eed22, numRuns: 40 },
    );
  });
});
