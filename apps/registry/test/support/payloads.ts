// Output payloads as docs/OUTPUTS.md fixes them, for tests that upload what an agent would.
// Typed `never` so they fit the API's JSON input type as they are.
export interface SnapshotOptions {
  runId: string;
  takenAt: Date;
  eventsSeen: number;
  eventsLost?: number;
  /** `counts` map entries: key → cumulative count. */
  counts?: Record<number, number>;
  /** log2 histogram slots (bpftrace bucketing): slot → cumulative count. */
  hist?: Record<number, number>;
}

export function snapshotPayload(o: SnapshotOptions): never {
  return {
    v: 1,
    runId: o.runId,
    takenAt: o.takenAt.toISOString(),
    traceTimeNs: '81234567890123',
    eventsSeen: o.eventsSeen,
    eventsLost: o.eventsLost ?? 0,
    maps: [
      {
        name: 'counts',
        type: 'hash',
        display: { kind: 'counts' },
        keyType: { kind: 'int', size: 4 },
        valueType: { kind: 'int', size: 8 },
        entries: Object.entries(o.counts ?? {}).map(([k, v]) => ({ key: Number(k), value: v })),
        truncated: 0,
      },
      {
        name: 'lat_us',
        type: 'hash',
        display: { kind: 'log2-histogram', bucket: 'bpftrace', unit: 'us' },
        entries: Object.entries(o.hist ?? {}).map(([k, v]) => ({ key: Number(k), value: v })),
        truncated: 0,
      },
    ],
  } as never;
}

export function eventsPayload(runId: string, events: { pid: number; comm: string }[], dropped = 0): never {
  return {
    v: 1,
    runId,
    events: events.map((e, i) => ({ timeNs: String(81234567890123 + i), cpu: i % 2, source: 'ringbuf', map: 'events', data: e })),
    dropped,
  } as never;
}

export function countersPayload(runId: string, takenAt: Date, o: { eventsSeen: number; faults?: number; lostEvents?: number; outputsDropped?: number }): never {
  return {
    v: 1,
    runId,
    takenAt: takenAt.toISOString(),
    eventsSeen: o.eventsSeen,
    runs: o.eventsSeen,
    instructions: o.eventsSeen * 20,
    faults: o.faults ?? 0,
    lostEvents: o.lostEvents ?? 0,
    cpuNs: o.eventsSeen * 100,
    outputsDropped: o.outputsDropped ?? 0,
    kernelReadsFailed: 0,
  } as never;
}
