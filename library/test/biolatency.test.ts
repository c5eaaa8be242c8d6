// biolatency over recordings/io.dat: the latency histograms per disk, the size histograms per
// command and the error counts equal what the block_rq_issue / block_rq_complete records say; on a
// 4.4.88 record (`errors`, not `error`) a failed request is counted through the old name.
import { describe, expect, it } from 'vitest';
import { kernelFormat, kernelProfile } from './support/kernels.js';
import { recordOf } from './support/record-of.js';
import { recording } from './support/recordings.js';
import { entriesOf, loadLibraryProgram, runOverRecording } from './support/run-recording.js';
import { log2Slot, readRecords } from './support/trace-records.js';

const io = recording('io');
const diskOf = (dev: number) => `${dev >>> 20}:${dev & 0xfffff}`;

function hist(map: Map<string, number[]>, key: string, value: bigint) {
  let slots = map.get(key);
  if (!slots) map.set(key, (slots = new Array<number>(32).fill(0)));
  slots[log2Slot(value)]!++;
}

describe('biolatency over io.dat', async () => {
  const run = await runOverRecording('biolatency', io);
  const records = await readRecords(io, ['block/block_rq_issue', 'block/block_rq_complete']);
  const latency = new Map<string, number[]>();
  const sizes = new Map<string, number[]>();
  const errors = new Map<string, number>();
  const issued = new Map<string, bigint>();
  for (const r of records) {
    const dev = r.fields.dev as number;
    const rq = `${dev}/${r.fields.sector}`;
    if (r.event === 'block/block_rq_issue') {
      issued.set(rq, r.ts);
      const bytes = r.fields.bytes as number;
      if (bytes > 0) hist(sizes, (r.fields.comm as string).slice(0, 15), BigInt(bytes));
      continue;
    }
    if ((r.fields.error as number) !== 0) errors.set(diskOf(dev), (errors.get(diskOf(dev)) ?? 0) + 1);
    const t = issued.get(rq);
    if (t === undefined) continue;
    issued.delete(rq);
    hist(latency, diskOf(dev), (r.ts - t) / 1000n);
  }

  it('bio_latency_us: per disk, the log2 histogram of issue → complete in µs', () => {
    const got = new Map(entriesOf(run, 'bio_latency_us').map(([k, v]) => [`${(k as { major: number }).major}:${(k as { minor: number }).minor}`, (v as { slots: number[] }).slots]));
    expect([...latency.values()].flat().reduce((a, b) => a + b, 0)).toBeGreaterThan(200);
    expect(latency.has('254:0')).toBe(true); // vda
    expect(got).toEqual(latency);
  });

  it('bio_size_bytes: per issuing command, the log2 histogram of request bytes', () => {
    const got = new Map(entriesOf(run, 'bio_size_bytes').map(([k, v]) => [(k as { comm: string }).comm, (v as { slots: number[] }).slots]));
    expect(sizes.get('dd')![12]).toBeGreaterThanOrEqual(16); // the 16 × 4 KiB O_DIRECT writes
    expect(got).toEqual(sizes);
  });

  it('bio_errors: none failed, none counted; no request left in flight', () => {
    expect(errors.size).toBe(0);
    expect(entriesOf(run, 'bio_errors')).toEqual([]);
    expect(run.maps.get('issued_at_ns')!.entries.length).toBe(issued.size);
    expect(run.faults).toEqual({ on_issue: 0, on_complete: 0 });
  });
});

describe('biolatency on android 4.4.88 records', () => {
  it("counts a failed request through `errors`, the field's name before 4.13", async () => {
    const loaded = await loadLibraryProgram('biolatency', await kernelProfile('android-4.4.88'));
    const issue = await kernelFormat('android-4.4.88', 'block/block_rq_issue');
    const complete = await kernelFormat('android-4.4.88', 'block/block_rq_complete');
    const dev = (8 << 20) | 16; // sdb
    const req = { dev, sector: 2048n, nr_sector: 8, bytes: 4096, rwbs: 'W', comm: 'kworker/u8:2' };
    loaded.runRecord('block/block_rq_issue', { cpu: 0, timestamp: 1_000_000, data: recordOf(issue, { common_pid: 7, ...req }) });
    loaded.runRecord('block/block_rq_complete', { cpu: 0, timestamp: 1_300_000, data: recordOf(complete, { common_pid: 0, dev, sector: 2048n, nr_sector: 8, errors: -5, rwbs: 'W' }) });
    const maps = loaded.maps();
    expect(entriesOf({ maps }, 'bio_errors')).toEqual([[{ major: 8, minor: 16 }, 1n]]);
    const [[disk, h]] = entriesOf({ maps }, 'bio_latency_us') as [[unknown, { slots: number[] }]];
    expect(disk).toEqual({ major: 8, minor: 16 });
    expect(h.slots[log2Slot(300n)]).toBe(1); // 300 µs
    expect(entriesOf({ maps }, 'bio_size_bytes')).toEqual([[{ comm: 'kworker/u8:2' }, { slots: Array.from({ length: 32 }, (_, i) => (i === 12 ? 1 : 0)) }]]);
  });
});
