import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  EventRuntime,
  type EventRecord,
  type HashMap,
  loadAssembly,
  snapshotMap,
  type VmOutput,
} from '../src/index.js';
import { corpusRoot } from './conformance-corpus.js';
import { countByTypeSource } from './runtime.test-program.js';
import { readTracePipeRaw } from './trace-pipe-raw.js';

const folder = corpusRoot ? join(corpusRoot, 'tracefs/linux-6.18') : undefined;
if (!folder) console.log('runtime feed test: skipped: the shared corpus is absent');

describe('EventRuntime', () => {
  it('timeEvery times one run in N and counts it N times', () => {
    const { vm, programs } = loadAssembly('r0 = 0\nexit');
    const program = [...programs.values()][0]!;
    const sampled = new EventRuntime(vm, program, { timeEvery: 1000 });
    const record = { cpu: 0, timestamp: 1, data: new Uint8Array(8) };
    for (let i = 0; i < 999; i++) sampled.runEvent(record);
    expect(sampled.counters).toMatchObject({ runs: 999, timeNs: 0 });
    sampled.runEvent(record);
    expect(sampled.counters.runs).toBe(1000);
    expect(sampled.counters.timeNs).toBeGreaterThan(0);
    // the one timed run counted a thousand times: a multiple of 1000 of its own time
    const every = new EventRuntime(vm, program);
    every.runEvent(record);
    expect(every.counters.timeNs).toBeGreaterThan(0);
  });

  it('runBatchRecord keeps runs and instructions until flushBatch, faults at once, with the results of runTraceRecord', () => {
    // r0 = the CPU, time and pid a helper sees, xored; a record of 4 bytes faults on the read at 8
    const source = [
      'r6 = *(u32 *)(r1 + 8)',
      'call bpf_get_smp_processor_id',
      'r7 = r0',
      'call bpf_ktime_get_ns',
      'r7 ^= r0',
      'call bpf_get_current_pid_tgid',
      'r7 ^= r0',
      'r7 ^= r6',
      'r0 = r7',
      'exit',
    ].join('\n');
    const make = () => {
      const { vm, programs } = loadAssembly(source);
      return new EventRuntime(vm, [...programs.values()][0]!, { timeEvery: 16 });
    };
    const lane = make();
    const single = make();
    const bytes = new Uint8Array(64);
    const view = new DataView(bytes.buffer);
    const results: [bigint, bigint][] = [];
    for (let i = 0; i < 5; i++) {
      view.setUint32(4, 100 + i, true); // common_pid
      view.setUint32(8, 7 * i, true);
      const long = { cpu: i % 3, tsHigh: i, tsLow: 0x9000_0000 + i, bytes, recordOffset: 0, recordLength: i === 3 ? 4 : 16 };
      const a = lane.runBatchRecord(long, long.tsLow | 0, long.tsHigh);
      const b = single.runTraceRecord(long);
      expect(a).toBe(b);
      results.push([lane.vm.r0, single.vm.r0]);
    }
    for (const [a, b] of results) expect(a).toBe(b);
    // the fault (record 3) is counted at once; runs and instructions wait for the flush
    expect(lane.counters).toMatchObject({ eventsSeen: 0, runs: 0, instructions: 0, faults: 1 });
    lane.flushBatch();
    const { timeNs: _a, compileNs: _c, ...laneCounters } = lane.counters;
    const { timeNs: _b, compileNs: _d, ...singleCounters } = single.counters;
    expect(laneCounters).toEqual(singleCounters);
    expect(lane.counters).toMatchObject({ eventsSeen: 5, runs: 5, faults: 1 });
    // takeBatch flushes first
    lane.runBatchRecord({ cpu: 0, tsHigh: 0, tsLow: 1, bytes, recordOffset: 0, recordLength: 16 }, 1, 0);
    expect(lane.takeBatch().counters).toMatchObject({ eventsSeen: 6, runs: 6, faults: 1 });
  });

  it.skipIf(!folder)('counts a recorded feed per event type like the reference decoder', async () => {
    const records: EventRecord[] = [];
    for (const cpu of [0, 1]) {
      records.push(...readTracePipeRaw(new Uint8Array(readFileSync(join(folder as string, `cpu${cpu}.raw`))), cpu));
    }
    // expected: the reference decoder's records of cpu0.raw and cpu1.raw
    const expected = new Map<string, number>();
    let inRaw = false;
    for (const line of readFileSync(join(folder as string, 'decoded_all_records.txt'), 'utf8').split('\n')) {
      if (line.startsWith('#')) inRaw = /^# cpu[01]\.raw /.test(line);
      else if (inRaw && line.trim() !== '') {
        const name = line.trim().split(/\s+/)[1] as string;
        expected.set(name, (expected.get(name) ?? 0) + 1);
      }
    }
    expect(records.length).toBe([...expected.values()].reduce((a, b) => a + b, 0));

    let runtime: EventRuntime | undefined;
    const { vm, maps, programs } = loadAssembly(countByTypeSource, { output: (o) => runtime?.collect(o) });
    runtime = new EventRuntime(vm, [...programs.values()][0]!, { batchSize: 1 });
    async function* feed() {
      yield* records;
    }
    const batches = [];
    for await (const b of runtime.attach(feed())) batches.push(b);

    const ids = { sched_switch: 372, sched_wakeup: 374 } as Record<string, number>;
    const snap = snapshotMap(maps.get('counts') as HashMap, { key: { kind: 'int', size: 4 }, value: { kind: 'int', size: 8 } });
    const counted = new Map(snap.entries.map((e) => [e.typedKey as number, Number(e.typedValues?.[0])]));
    for (const [name, n] of expected) expect([name, counted.get(ids[name] as number)]).toEqual([name, n]);

    const c = runtime.counters;
    expect(c).toMatchObject({ eventsSeen: records.length, runs: records.length, faults: 0, budgetExhaustions: 0, lost: 0 });
    expect(c.instructions).toBeGreaterThan(records.length * 10);
    expect(c.timeNs).toBeGreaterThan(0);
    // the first record of each type went to the ring buffer, 8 bytes of it (common fields)
    const outputs = batches.flatMap((b) => b.outputs) as Extract<VmOutput, { kind: 'ringbuf' }>[];
    expect(outputs.map((o) => new DataView(o.data.buffer, o.data.byteOffset).getUint16(0, true)).sort()).toEqual([372, 374]);
    expect(outputs.every((o) => o.map === 'events' && o.data.length === 8)).toBe(true);
    expect(batches.map((b) => b.sequence)).toEqual(batches.map((_, i) => i));
  });

  it('counts faults and budget exhaustions without stopping the feed', async () => {
    const { vm, programs } = loadAssembly('r0 = *(u64 *)(r1 + 8)\nif r0 == 7 goto spin\nexit\nspin: goto spin', { budget: 100 });
    const runtime = new EventRuntime(vm, [...programs.values()][0]!);
    const rec = (data: number[]): EventRecord => ({ cpu: 0, timestamp: 1n, data: Uint8Array.from(data) });
    const seven = [0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0];
    const batches = [];
    for await (const b of runtime.attach([rec([1, 2]), rec(seven), rec(new Array(16).fill(0))])) batches.push(b);
    expect(runtime.counters).toMatchObject({ eventsSeen: 3, runs: 3, faults: 1, budgetExhaustions: 1 });
    expect(batches.at(-1)?.lastFault?.code).toBe('budget-exhausted');
  });

  it('shows the tier: compiled by default (with its compile time), the interpreter when forced', () => {
    const text = 'r0 = *(u64 *)(r1 + 8)\nr0 += 1\nexit';
    const compiled = loadAssembly(text);
    const c = new EventRuntime(compiled.vm, [...compiled.programs.values()][0]!).counters;
    expect(c.tier).toBe('compiled');
    expect(c.fallbackReason).toBeUndefined();
    expect(compiled.vm.tierCounters).toMatchObject({ compiledPrograms: 1, fallbackPrograms: 0 });
    const forced = loadAssembly(text, { tier: 'interpreter' });
    const runtime = new EventRuntime(forced.vm, [...forced.programs.values()][0]!);
    expect(runtime.counters).toMatchObject({ tier: 'interpreter', compileNs: 0 });
    runtime.runEvent({ cpu: 0, timestamp: 1, data: new Uint8Array(16) });
    expect(forced.vm.tierCounters).toMatchObject({ compiledRuns: 0, interpretedRuns: 1 });
  });

  it('falls back to the interpreter, and says why, when the compiled tier cannot take the VM', () => {
    const { vm, programs } = loadAssembly('r0 = 1\nexit', { budget: 0x7fffffff });
    const runtime = new EventRuntime(vm, [...programs.values()][0]!);
    expect(runtime.counters.tier).toBe('interpreter');
    expect(runtime.counters.fallbackReason).toMatch(/^budget 2147483647 is above the compiled tier's/);
    expect(runtime.runEvent({ cpu: 0, timestamp: 1, data: new Uint8Array(0) })).toBe(0);
    expect(vm.r0).toBe(1n);
  });
});

describe('EventRuntime with packages/formats records', () => {
  it.skipIf(!folder)('runs on the PageReader cursor in place and counts the same as the test reader', async () => {
    const { PageReader, parseHeaderPage } = await import('@probeyard/formats');
    const layout = parseHeaderPage(readFileSync(join(folder as string, 'header_page'), 'utf8'));
    let runtime: EventRuntime | undefined;
    const { vm, maps, programs } = loadAssembly(countByTypeSource, { output: (o) => runtime?.collect(o) });
    runtime = new EventRuntime(vm, [...programs.values()][0]!);
    let seen = 0;
    for (const cpu of [0, 1]) {
      const bytes = new Uint8Array(readFileSync(join(folder as string, `cpu${cpu}.raw`)));
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const reader = new PageReader(layout);
      for (let page = 0; page + 4096 <= bytes.length; page += 4096) {
        reader.load(bytes, view, page, 4096);
        while (reader.next()) {
          reader.record.cpu = cpu;
          runtime.runTraceRecord(reader.record);
          seen++;
        }
      }
    }
    const mine = [0, 1].flatMap((cpu) => [...readTracePipeRaw(new Uint8Array(readFileSync(join(folder as string, `cpu${cpu}.raw`))), cpu)]);
    expect(seen).toBe(mine.length);
    const counts = snapshotMap(maps.get('counts') as HashMap, { key: { kind: 'int', size: 4 }, value: { kind: 'int', size: 8 } });
    const byType = new Map<number, number>();
    for (const r of mine) {
      const t = r.data[0]! | (r.data[1]! << 8);
      byType.set(t, (byType.get(t) ?? 0) + 1);
    }
    expect(new Map(counts.entries.map((e) => [e.typedKey as number, Number(e.typedValues?.[0])]))).toEqual(byType);
    expect(runtime.counters.faults).toBe(0);
  });
});
