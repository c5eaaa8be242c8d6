import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { profileFormat, readProgramSpec } from '@probeyard/compat';
import { describe, expect, it } from 'vitest';
import { asmSpec, exampleSpec, fixtureProfile, recordOf, repoRoot } from '../test/fixtures.js';
import { Dispatcher } from './dispatcher.js';
import { encodeCounters, encodeEvents, encodeMapSnapshot, encodeSnapshotMap, jsonOfTyped } from './encode.js';
import { loadForProfile } from './load-spec.js';
import { parseCountersPayload, parseEventsPayload, parseJsonValue, parseMapSnapshotPayload, parseOutputPayload } from './payloads.js';

const roundTrip = <T>(v: T): unknown => JSON.parse(JSON.stringify(v));

describe('encoders', () => {
  it('a map_snapshot of runqlat: hidden and events maps left out, zero slots of the array left out, BTF types kept', async () => {
    const profile = await fixtureProfile('linux-6.18');
    const out = loadForProfile(await exampleSpec('runqlat'), profile);
    if (!out.ok) throw new Error(out.status);
    const wake = profileFormat(profile, 'sched/sched_wakeup')!;
    const sw = profileFormat(profile, 'sched/sched_switch')!;
    out.loaded.runRecord(wake.id, { cpu: 0, timestamp: 1_000_000, data: recordOf(wake, { pid: 42 }) });
    out.loaded.runRecord(sw.id, { cpu: 0, timestamp: 6_000_000, data: recordOf(sw, { next_pid: 42 }) });
    out.loaded.runRecord(wake.id, { cpu: 0, timestamp: 7_000_000, data: recordOf(wake, { pid: 43 }) });
    const p = encodeMapSnapshot(out.loaded, { runId: 'run-1', takenAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)), traceTimeNs: '7000000', eventsSeen: 3, eventsLost: 0 });
    expect(p).toEqual({
      v: 1,
      runId: 'run-1',
      takenAt: '2026-01-02T03:04:05.006Z',
      traceTimeNs: '7000000',
      eventsSeen: 3,
      eventsLost: 0,
      maps: [
        {
          name: 'start',
          type: 'hash',
          maxEntries: 10240,
          display: { kind: 'counts', source: 'convention' },
          keyType: { kind: 'int', size: 4, signed: false },
          valueType: { kind: 'int', size: 8, signed: false },
          entries: [{ key: 43, value: 7000000 }],
          truncated: 0,
        },
        {
          name: 'runq_usecs',
          type: 'array',
          maxEntries: 64,
          display: { kind: 'log2-histogram', bucket: 'libbpf-tools', unit: 'us', source: 'convention' },
          keyType: { kind: 'int', size: 4, signed: false },
          valueType: { kind: 'int', size: 8, signed: false },
          entries: [{ key: 12, value: 1 }],
          truncated: 0,
        },
      ],
    });
    expect(parseMapSnapshotPayload(roundTrip(p))).toEqual(p);
  });

  it('per-CPU integers and counter arrays are summed, other values kept per CPU; big integers as strings; truncation counted', () => {
    const key = (n: number) => Uint8Array.of(n, 0, 0, 0);
    const u64 = (lo: number, hi = 0) => {
      const b = new Uint8Array(8);
      new DataView(b.buffer).setUint32(0, lo, true);
      new DataView(b.buffer).setUint32(4, hi, true);
      return b;
    };
    const snap = { name: 'pc', type: 'percpu_hash', keySize: 4, valueSize: 8, maxEntries: 8, entries: [
      { key: key(1), values: [u64(1), u64(2)] },
      { key: key(2), values: [u64(0, 0x200000), u64(5)] },
      { key: key(3), values: [u64(1), u64(1)] },
    ] };
    const m = encodeSnapshotMap(snap, { display: { kind: 'counts' } }, 2);
    expect(m.entries).toEqual([{ key: 1, value: 3 }, { key: 2, value: '9007199254740997' }]);
    expect(m.truncated).toBe(1);
    const rows = encodeSnapshotMap({ ...snap, valueSize: 3, entries: [{ key: key(9), values: [Uint8Array.of(1, 2, 3), Uint8Array.of(4, 5, 6)] }] }, { display: { kind: 'table' } });
    expect(rows.entries).toEqual([{ key: 9, values: [{ hex: '010203' }, { hex: '040506' }] }]);
    const arrays = encodeSnapshotMap(
      { ...snap, entries: [{ key: key(0), values: [Uint8Array.of(1, 0, 2, 0, 0, 0, 0, 0), Uint8Array.of(3, 0, 4, 0, 0, 0, 0, 0)] }] },
      { display: { kind: 'log2-histogram', bucket: 'libbpf-tools' }, valueType: { kind: 'struct', fields: [{ name: 'slots', offset: 0, type: { kind: 'array', element: { kind: 'int', size: 2 }, length: 2 } }, { name: '__pad', offset: 4, type: { kind: 'int', size: 4 } }] } },
    );
    expect(arrays.entries).toEqual([{ key: 0, values: [{ slots: [1, 2] }, { slots: [3, 4] }] }]);
  });

  it('jsonOfTyped leaves padding members out', () => {
    expect(jsonOfTyped({ pid: 1, __pad: 0, pad1: 2, comm: 'x', big: 2n ** 60n })).toEqual({ pid: 1, comm: 'x', big: '1152921504606846976' });
  });

  it('events: ring-buffer records decoded with the map value type when it has one, else hex (never guessed as integers); printk as text', async () => {
    const spec = await asmSpec(`.license "GPL"
.map events ringbuf entries=4096
.section tracepoint/sched/sched_switch
main:
  r0 = 0
  exit
`);
    const out = loadForProfile(spec, await fixtureProfile('linux-6.18'));
    if (!out.ok) throw new Error(out.status);
    const p = encodeEvents(
      out.loaded,
      [
        { kind: 'ringbuf', map: 'events', cpu: 1, timestamp: 81234567890123n, data: Uint8Array.of(1, 2, 3) },
        { kind: 'ringbuf', map: 'events', cpu: 1, timestamp: 81234567890124n, data: Uint8Array.of(7, 0, 0, 0) },
        { kind: 'printk', cpu: 0, timestamp: 81234567990001n, pid: 9, text: 'opened 3 files' },
      ],
      2,
      'r',
    );
    expect(p).toEqual({
      v: 1,
      runId: 'r',
      events: [
        { timeNs: '81234567890123', cpu: 1, source: 'ringbuf', map: 'events', data: { hex: '010203' } },
        { timeNs: '81234567890124', cpu: 1, source: 'ringbuf', map: 'events', data: { hex: '07000000' } },
        { timeNs: '81234567990001', cpu: 0, source: 'printk', text: 'opened 3 files' },
      ],
      dropped: 2,
    });
    expect(parseEventsPayload(roundTrip(p))).toEqual(p);
  });

  it('events of a C program decoded with its BTF struct event, bounded with a count of what was dropped', async () => {
    const spec = await readProgramSpec(new Uint8Array(readFileSync(join(repoRoot, 'packages/compat/test/fixtures/objects/ringbuf_event.o'))));
    const profile = await fixtureProfile('linux-6.18');
    const out = loadForProfile(spec, profile, { environment: { commOf: (pid) => (pid === 4242 ? 'bash' : undefined) }, outputs: { maxOutputs: 2 } });
    if (!out.ok) throw new Error(out.status);
    const f = profileFormat(profile, 'raw_syscalls/sys_enter')!;
    for (const id of [110, 39, 0]) out.loaded.runRecord(f.id, { cpu: 1, timestamp: 5000 + id, data: recordOf(f, { common_pid: 4242, id }) });
    const { outputs, dropped } = out.loaded.outputs.take();
    expect(dropped).toBe(1);
    const p = encodeEvents(out.loaded, outputs, dropped, 'r');
    expect(p.events).toEqual([
      { timeNs: '5110', cpu: 1, source: 'ringbuf', map: 'events', data: { pid: 4242, id: 110, comm: 'bash' } },
      { timeNs: '5039', cpu: 1, source: 'ringbuf', map: 'events', data: { pid: 4242, id: 39, comm: 'bash' } },
    ]);
    expect(p.dropped).toBe(1);
    expect(out.loaded.outputs.take()).toEqual({ outputs: [], dropped: 0 });
    expect(out.loaded.displays[out.loaded.spec.maps.findIndex((m) => m.name === 'events')]).toEqual({ kind: 'events', source: 'convention' });
  });

  it('counters of a dispatched target', async () => {
    const out = loadForProfile(await exampleSpec('syscount'), await fixtureProfile('linux-6.18'));
    if (!out.ok) throw new Error(out.status);
    const t = new Dispatcher().attach('t', out.loaded);
    const p = encodeCounters(t.counters, { runId: 'r', takenAt: new Date(0) });
    expect(p).toEqual({ v: 1, runId: 'r', takenAt: '1970-01-01T00:00:00.000Z', eventsSeen: 0, runs: 0, instructions: 0, faults: 0, lostEvents: 0, cpuNs: 0, outputsDropped: 0, kernelReadsFailed: 0 });
    expect(parseCountersPayload(roundTrip(p))).toEqual(p);
  });
});

describe('validators', () => {
  const snapshot = () => ({
    v: 1,
    runId: 'r',
    takenAt: '2026-12-01T21:14:03.120Z',
    traceTimeNs: '81234567890123',
    eventsSeen: 1,
    eventsLost: 0,
    maps: [{ name: 'counts', type: 'hash', display: { kind: 'counts' }, keyType: { kind: 'int', size: 4 }, valueType: { kind: 'int', size: 8 }, entries: [{ key: 39, value: 1204 }], truncated: 0 }],
  });

  it('accept the OUTPUTS.md examples', () => {
    expect(parseMapSnapshotPayload(snapshot())).toEqual(snapshot());
    const events = { v: 1, runId: 'r', events: [{ timeNs: '1', cpu: 1, source: 'ringbuf', map: 'events', data: { pid: 4242, comm: 'bash' } }, { timeNs: '2', cpu: 0, source: 'printk', text: 'opened 3 files' }], dropped: 0 };
    expect(parseOutputPayload('events', events)).toEqual(events);
  });

  it('return a copy without unknown members', () => {
    const v = { ...snapshot(), extra: 1, maps: [{ ...snapshot().maps[0], secret: 'x' }] };
    const p = parseMapSnapshotPayload(v);
    expect(p).toEqual(snapshot());
    expect('extra' in p).toBe(false);
  });

  it('keep a member named __proto__ as a member, never a prototype', () => {
    const v = parseJsonValue(JSON.parse('{"__proto__": {"polluted": 1}, "a": 2}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__', 'a']);
    expect((v as { polluted?: number }).polluted).toBeUndefined();
  });

  const deep = (n: number): unknown => (n === 0 ? 1 : [deep(n - 1)]);
  it.each([
    ['a wrong version', { ...snapshot(), v: 2 }, 'output payload map_snapshot.v: want 1, got 2'],
    ['a negative count', { ...snapshot(), eventsSeen: -1 }, 'output payload map_snapshot.eventsSeen: want an integer >= 0'],
    ['a time that is not ISO', { ...snapshot(), takenAt: 'yesterday' }, "output payload map_snapshot.takenAt: want an ISO 8601 UTC time, got 'yesterday'"],
    ['a trace time that is a number', { ...snapshot(), traceTimeNs: 5 }, 'output payload map_snapshot.traceTimeNs: want a decimal string'],
    ['an unknown display kind', { ...snapshot(), maps: [{ ...snapshot().maps[0], display: { kind: 'pie' } }] }, "output payload map_snapshot.maps[0].display: display hint display: unknown kind 'pie'"],
    ['value and values both', { ...snapshot(), maps: [{ ...snapshot().maps[0], entries: [{ key: 1, value: 1, values: [1] }] }] }, 'output payload map_snapshot.maps[0].entries[0]: want exactly one of value and values'],
    ['a key nested too deep', { ...snapshot(), maps: [{ ...snapshot().maps[0], entries: [{ key: deep(40), value: 1 }] }] }, 'nested deeper than 16'],
    ['a bad int size', { ...snapshot(), maps: [{ ...snapshot().maps[0], keyType: { kind: 'int', size: 3 } }] }, 'output payload map_snapshot.maps[0].keyType.size: want 1, 2, 4 or 8'],
    ['not an object', 'hello', 'output payload map_snapshot: want an object'],
  ])('refuse %s, naming the path', (_what, v, message) => {
    expect(() => parseMapSnapshotPayload(v)).toThrow(expect.objectContaining({ code: 'malformed', message: expect.stringContaining(message) }));
  });

  it.each([
    ['an unknown source', { v: 1, runId: 'r', events: [{ timeNs: '1', cpu: 0, source: 'kprobe' }], dropped: 0 }, 'events.events[0].source'],
    ['a ring-buffer event without data', { v: 1, runId: 'r', events: [{ timeNs: '1', cpu: 0, source: 'ringbuf', map: 'e' }], dropped: 0 }, 'events.events[0].data: missing'],
    ['a non-finite number', { v: 1, runId: 'r', events: [{ timeNs: '1', cpu: 0, source: 'perf', map: 'e', data: Number.NaN }], dropped: 0 }, 'want a finite number'],
  ])('refuse events with %s', (_what, v, message) => {
    expect(() => parseEventsPayload(v)).toThrow(expect.objectContaining({ code: 'malformed', message: expect.stringContaining(message) }));
  });

  it('refuse counters with a missing member', () => {
    expect(() => parseCountersPayload({ v: 1, runId: 'r', takenAt: '2026-12-01T21:14:03.120Z' })).toThrow('output payload counters.eventsSeen: want an integer >= 0');
  });
});
