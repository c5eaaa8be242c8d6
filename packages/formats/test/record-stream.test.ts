// The common record stream: a trace.dat replay through the same interface as the live feed.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTraceDatStream } from '../src/node/trace-dat-file.js';
import { streamRecords } from '../src/record-stream.js';

const file = join(__dirname, 'fixtures/trace-dat/small_v7_zstd.dat');

describe('trace.dat replay as a RecordStream', () => {
  it('delivers every record in time order, in batches, with formats and comms', async () => {
    const stream = openTraceDatStream(file, { batchSize: 100 });
    expect(stream.info).toMatchObject({ kind: 'trace-dat', cpuCount: 2, littleEndian: true, longSize: 8 });
    expect(stream.info.comm(0)).toBe('<idle>');
    expect(stream.info.comm(14884)).toBe('sleep');
    let batches = 0;
    let last = -1;
    const names = new Set<string>();
    for await (const batch of stream) {
      batches++;
      let inBatch = 0;
      for (let r = batch.next(); r; r = batch.next()) {
        inBatch++;
        expect(r.timestampNs).toBeGreaterThanOrEqual(last);
        last = r.timestampNs;
        names.add(`${r.format?.system}:${r.format?.name}`);
      }
      expect(inBatch).toBeLessThanOrEqual(100);
    }
    expect(stream.stats).toMatchObject({ records: 869, lostEvents: 0, lostUnknown: 0 });
    expect(stream.stats.lostByCpu.every((n) => n === 0)).toBe(true);
    expect(batches).toBe(9);
    expect(names).toEqual(new Set(['sched:sched_switch', 'sched:sched_wakeup']));
  });

  it('flattens to single records and stops on close', async () => {
    const stream = openTraceDatStream(file, { batchSize: 10 });
    let n = 0;
    for await (const r of streamRecords(stream)) {
      expect(r.recordLength).toBeGreaterThan(8);
      if (++n === 25) await stream.close();
    }
    expect(n).toBeLessThanOrEqual(30);
    expect(n).toBeGreaterThanOrEqual(25);
  });
});

describe('worker-thread chunk prefetch', () => {
  it('gives the same records as decoding on the reading thread, from the worker', { timeout: 180_000 }, async () => {
    const { openTraceDatFile } = await import('../src/node/trace-dat-file.js');
    const { prefetchChunks } = await import('../src/node/chunk-prefetch.js');
    const read = (prefetch: boolean) => {
      const f = openTraceDatFile(file, { prefetch });
      const out: string[] = [];
      const it = f.reader.records();
      for (let r = it.next(); r; r = it.next()) out.push(`${r.cpu} ${r.timestamp()} ${Buffer.from(r.data()).toString('hex')}`);
      f.close();
      return out;
    };
    expect(read(true)).toEqual(read(false));
    const big = '/work/shared/corpus/trace-dat/big/big.dat';
    if (existsSync(big)) {
      // A real 11 MiB of zstd chunks: every one read through the worker gives the same records.
      const a = openTraceDatFile(big, { prefetch: true });
      const b = openTraceDatFile(big);
      const ia = a.reader.records();
      const ib = b.reader.records();
      let n = 0;
      let mismatches = 0;
      for (let ra = ia.next(), rb = ib.next(); ra || rb; ra = ia.next(), rb = ib.next(), n++) {
        if (!ra || !rb || ra.tsLow !== rb.tsLow || ra.cpu !== rb.cpu || !Buffer.from(ra.data()).equals(Buffer.from(rb.data()))) mismatches++;
      }
      expect(n).toBe(2764089);
      expect(mismatches).toBe(0);
      a.close();
      b.close();
    } else console.log(`prefetch corpus check skipped: ${big} is absent`);
    const f = openTraceDatFile(file);
    expect(prefetchChunks(file, f.reader.dat)).toBeUndefined(); // 20 KiB: not worth a worker
    const p = prefetchChunks(file, f.reader.dat, { force: true })!;
    f.reader.decompressor = p.decompressor;
    const it = f.reader.records();
    let n = 0;
    while (it.next()) n++;
    expect(n).toBe(869);
    expect(p.stats.prefetched + p.stats.fallback).toBe(2); // one chunk per CPU in this file
    p.close();
    f.close();
  });
});
