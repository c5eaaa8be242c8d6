import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { profileFormat } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { openTraceDatStream } from '@probeyard/formats/node';
import { describe, expect, it } from 'vitest';
import { asmSpec, examplesDir, exampleSpec, fixtureProfile, type MemoryRecord, memoryStream, recordOf, smallRecording } from '../test/fixtures.js';
import { Dispatcher } from './dispatcher.js';
import { encodeMapSnapshot } from './encode.js';
import { loadForProfile, loadSpec } from './load-spec.js';

const countSwitches = () => asmSpec(readFileSync(join(examplesDir, 'sched-switch-count.s'), 'utf8'));

async function loadFor(name: string, profile: Awaited<ReturnType<typeof readProfile>>, cpuCount: number) {
  const spec = name === 'sched-switch-count' ? await countSwitches() : await exampleSpec(name);
  const out = loadForProfile(spec, profile, { cpuCount });
  if (!out.ok) throw new Error(`${name}: ${out.status}`);
  return out.loaded;
}

describe('Dispatcher', () => {
  it('runs three programs over one recording as each does alone', async () => {
    const profile = await readProfile(smallRecording);
    const names = ['switchcomm', 'sched-switch-count', 'runqlat'];
    const together = new Dispatcher();
    const stream = openTraceDatStream(smallRecording, { batchSize: 97 });
    for (const n of names) together.attach(n, await loadFor(n, profile, stream.info.cpuCount));
    expect(together.events()).toEqual(['sched/sched_switch', 'sched/sched_wakeup']);
    await together.run(stream);
    await stream.close();
    expect(together.records).toBe(869);
    for (const n of names) {
      const alone = new Dispatcher();
      const s = openTraceDatStream(smallRecording);
      const t = alone.attach(n, await loadFor(n, profile, s.info.cpuCount));
      await alone.run(s);
      await s.close();
      const a = together.target(n)!;
      const snap = (d: Dispatcher, x: typeof t) => encodeMapSnapshot(x.loaded, { runId: 'r', takenAt: new Date(0), traceTimeNs: d.traceTimeNs, eventsSeen: x.eventsSeen, eventsLost: x.lostEvents });
      expect(snap(together, a)).toEqual(snap(alone, t));
      expect(a.counters).toMatchObject({ ...t.counters, cpuNs: expect.any(Number) });
      expect(a.counters.eventsSeen).toBeGreaterThan(0);
    }
    // sched_switch records: switchcomm and sched-switch-count see each; runqlat sees them and the wakeups
    expect(together.target('switchcomm')!.eventsSeen).toBe(together.target('sched-switch-count')!.eventsSeen);
    expect(together.target('runqlat')!.eventsSeen).toBeGreaterThan(together.target('switchcomm')!.eventsSeen);
  });

  it('reads the records of a batch in place (pages staged in the VMs) with the results of a copy per record', async () => {
    const profile = await readProfile(smallRecording);
    const names = ['switchcomm', 'sched-switch-count', 'runqlat'];
    const batched = new Dispatcher();
    const single = new Dispatcher();
    const stream = openTraceDatStream(smallRecording, { batchSize: 97 });
    for (const n of names) {
      batched.attach(n, await loadFor(n, profile, stream.info.cpuCount));
      single.attach(n, await loadFor(n, profile, stream.info.cpuCount));
    }
    await batched.run(stream);
    await stream.close();
    // one record at a time through dispatchRecord: no batch, so every record copied per run
    const s = openTraceDatStream(smallRecording);
    for await (const batch of s) for (let r = batch.next(); r !== undefined; r = batch.next()) single.dispatchRecord(r);
    await s.close();
    expect(single.records).toBe(batched.records);
    const vmsOf = (d: Dispatcher) => d.attached().flatMap((t) => t.loaded.programs.map((p) => p.runtime.vm));
    // the agent's path really staged pages; the record-by-record one never did
    expect(vmsOf(batched).reduce((n, vm) => n + vm.stagedWindows, 0)).toBeGreaterThan(0);
    expect(vmsOf(single).reduce((n, vm) => n + vm.stagedWindows, 0)).toBe(0);
    for (const n of names) {
      const a = batched.target(n)!;
      const b = single.target(n)!;
      const snap = (d: Dispatcher, x: typeof a) => encodeMapSnapshot(x.loaded, { runId: 'r', takenAt: new Date(0), traceTimeNs: d.traceTimeNs, eventsSeen: x.eventsSeen, eventsLost: x.lostEvents });
      expect(snap(batched, a)).toEqual(snap(single, b));
      expect(a.counters).toMatchObject({ ...b.counters, cpuNs: expect.any(Number) });
    }
  });

  it('attaches and detaches while the stream runs; losses count for the targets attached then', async () => {
    const profile = await fixtureProfile('linux-6.18');
    const f = profileFormat(profile, 'sched/sched_switch')!;
    const load = async () => {
      const out = loadForProfile(await countSwitches(), profile, { cpuCount: 2 });
      if (!out.ok) throw new Error(out.status);
      return out.loaded;
    };
    // 16 records, 4 a batch: next_pid = record index % 3, cpu = index % 2; a loss of 5 on cpu 0 before record 6, of 2 on cpu 1 before record 13
    const records: MemoryRecord[] = Array.from({ length: 16 }, (_, i) => ({
      data: recordOf(f, { next_pid: i % 3 }),
      cpu: i % 2,
      missedEvents: i === 6 ? 5 : i === 13 ? 2 : 0,
    }));
    const d = new Dispatcher();
    const a = d.attach('a', await load());
    const bLoaded = await load();
    let b: ReturnType<typeof d.attach> | undefined;
    const stream = memoryStream(records, 4, (batch) => {
      if (batch === 0) b = d.attach('b', bLoaded); // from record 4 on
      if (batch === 2) expect(d.detach('a')).toBe(a); // a saw records 0..11
    });
    await d.run(stream);
    const counts = (t: typeof a) => new Map(encodeMapSnapshot(t.loaded, { runId: 'r', eventsSeen: 0, eventsLost: 0 }).maps[0]!.entries.map((e) => [e.key, e.value]));
    const expected = (from: number, to: number) => {
      const m = new Map<number, number>();
      for (let i = from; i < to; i++) m.set(i % 3, (m.get(i % 3) ?? 0) + 1);
      return m;
    };
    expect(counts(a)).toEqual(expected(0, 12));
    expect(counts(b!)).toEqual(expected(4, 16));
    expect([a.eventsSeen, b!.eventsSeen]).toEqual([12, 12]);
    expect(a.detached).toBe(true);
    expect(d.attached().map((t) => t.id)).toEqual(['b']);
    // loss of 5 (batch 1): both attached; loss of 2 (batch 3): only b
    expect([a.lostEvents, b!.lostEvents]).toEqual([5, 7]);
    expect(d.lostByCpu).toEqual([5, 2]);
  });

  it('counts the records of a paused target as skipped and runs none of them', async () => {
    const profile = await fixtureProfile('linux-6.18');
    const f = profileFormat(profile, 'sched/sched_switch')!;
    const out = loadForProfile(await countSwitches(), profile, { cpuCount: 1 });
    if (!out.ok) throw new Error(out.status);
    const d = new Dispatcher();
    const t = d.attach('t', out.loaded);
    const records: MemoryRecord[] = Array.from({ length: 12 }, () => ({ data: recordOf(f, { next_pid: 1 }), cpu: 0, missedEvents: 0 }));
    const stream = memoryStream(records, 4, (batch) => {
      if (batch === 0) t.paused = true; // records 4..7
      if (batch === 1) t.paused = false;
    });
    await d.run(stream);
    expect([t.eventsSeen, t.skipped, t.counters.runs]).toEqual([8, 4, 8]);
    expect(encodeMapSnapshot(t.loaded, { runId: 'r', eventsSeen: 0, eventsLost: 0 }).maps[0]!.entries).toEqual([{ key: 1, value: 8 }]);
  });

  it('counts a run over its budget as a fault with the instruction and a copy of the record', async () => {
    const spec = await asmSpec(`.license "GPL"
.section tracepoint/sched/sched_switch
main:
  r0 = 0
loop:
  r0 += 1
  if r0 < 1000 goto loop
  exit
`);
    const profile = await fixtureProfile('linux-6.18');
    const f = profileFormat(profile, 'sched/sched_switch')!;
    const loaded = loadSpec(spec, { eventIds: new Map([['sched/sched_switch', f.id]]), budget: 100 });
    const d = new Dispatcher();
    const t = d.attach('t', loaded);
    const data = recordOf(f, { next_pid: 7 });
    await d.run(memoryStream([{ data, cpu: 1, timeNs: 2 ** 40 + 5 }]));
    expect(t.counters).toMatchObject({ eventsSeen: 1, runs: 1, budgetExhaustions: 1, faults: 0 });
    expect(t.lastFault).toMatchObject({ program: 'main', code: 'budget-exhausted', record: { eventId: f.id, cpu: 1, timeNs: String(2 ** 40 + 5) } });
    expect(t.lastFault!.record.hex).toBe(Buffer.from(data).toString('hex'));
    expect(d.traceTimeNs).toBe(String(2 ** 40 + 5));
  });

  it('refuses a second target with the same id', async () => {
    const d = new Dispatcher();
    const out = loadForProfile(await countSwitches(), await fixtureProfile('linux-6.18'));
    if (!out.ok) throw new Error(out.status);
    const loaded = out.loaded;
    d.attach('x', loaded);
    expect(() => d.attach('x', loaded)).toThrow(expect.objectContaining({ code: 'malformed' }));
    expect(d.detach('nope')).toBeUndefined();
  });
});

describe('Dispatcher.shiftTime', () => {
  const HIST = 'runq_usecs';
  // runqlat measures wakeup → switch; a recording replayed again without a shift puts the second
  // pass's first switches "before" the first pass's last wakeups: a u64 wrap, a bucket near 2^64.
  let spanNs = 0n;
  async function twoPasses(shift: boolean): Promise<number[]> {
    const profile = await readProfile(smallRecording);
    const d = new Dispatcher();
    let first: bigint | undefined;
    for (let pass = 0; pass < 2; pass++) {
      const stream = openTraceDatStream(smallRecording);
      if (pass === 0) d.attach('runqlat', await loadFor('runqlat', profile, stream.info.cpuCount));
      for await (const batch of stream) {
        for (let r = batch.next(); r !== undefined; r = batch.next()) {
          first ??= r.timestamp();
          d.dispatchRecord(r);
        }
      }
      await stream.close();
      if (pass === 0) spanNs = BigInt(d.traceTimeNs) - first!;
      if (shift) d.shiftTime(BigInt(d.traceTimeNs) - first! + 1000n);
    }
    const snap = encodeMapSnapshot(d.target('runqlat')!.loaded, { runId: 'r', eventsSeen: 0, eventsLost: 0 });
    return snap.maps.filter((m) => m.name === HIST).flatMap((m) => m.entries.filter((e) => Number(e.value) > 0).map((e) => Number(e.key)));
  }

  it('keeps time moving forward across a replayed recording’s passes', async () => {
    const onePassMax = Math.max(...(await (async () => {
      const profile = await readProfile(smallRecording);
      const d = new Dispatcher();
      const s = openTraceDatStream(smallRecording);
      d.attach('runqlat', await loadFor('runqlat', profile, s.info.cpuCount));
      await d.run(s);
      await s.close();
      return encodeMapSnapshot(d.target('runqlat')!.loaded, { runId: 'r', eventsSeen: 0, eventsLost: 0 })
        .maps.filter((m) => m.name === HIST)
        .flatMap((m) => m.entries.filter((e) => Number(e.value) > 0).map((e) => Number(e.key)));
    })()));
    const unshifted = await twoPasses(false);
    const shifted = await twoPasses(true);
    // Across the seam a wakeup left unmatched at the end pairs with the next pass's switch: at
    // most one recording apart (the log2 bucket of its span in µs), never a wrapped u64.
    const spanBucket = Math.floor(Math.log2(Number(spanNs / 1000n)));
    expect(Math.max(...unshifted)).toBeGreaterThan(Math.max(onePassMax, spanBucket) + 8);
    expect(Math.max(...shifted)).toBeLessThanOrEqual(Math.max(onePassMax, spanBucket + 1));
  });

  it('refuses a shift that is not an unsigned 64-bit time', () => {
    expect(() => new Dispatcher().shiftTime(-1n)).toThrow(RangeError);
    expect(() => new Dispatcher().shiftTime(1n << 64n)).toThrow(RangeError);
  });
});
