import { appendFileSync, mkdtempSync, readdirSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type NewBatch, Spool } from './spool.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'probeyard-spool-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const batch = (targetId: string, n: number, pad = 0): NewBatch => ({
  targetId,
  kind: 'map_snapshot',
  payload: { v: 1, n, pad: 'x'.repeat(pad) },
  eventsSeen: n,
  eventsLost: 0,
});

describe('Spool', () => {
  it('gives each target its own sequence from 0 and reads batches back oldest first', () => {
    const spool = Spool.open(tempDir());
    const out = spool.append([batch('a', 1), batch('b', 2), batch('a', 3)]);
    expect(out.map((b) => [b.targetId, b.sequence])).toEqual([
      ['a', 0],
      ['b', 0],
      ['a', 1],
    ]);
    const { entries, batches } = spool.peek(10, 1 << 20);
    expect(entries).toHaveLength(3);
    expect(batches[2]).toEqual({ targetId: 'a', sequence: 1, kind: 'map_snapshot', payload: { v: 1, n: 3, pad: '' }, eventsSeen: 3, eventsLost: 0 });
    spool.ack(entries[1]!.no);
    spool.settle();
    expect(spool.batches).toBe(1);
    expect(spool.peek(10, 1 << 20).batches.map((b) => b.sequence)).toEqual([1]);
    spool.close();
  });

  it('keeps unacknowledged batches and sequences across a restart, and never reuses a sequence', () => {
    const dir = tempDir();
    let spool = Spool.open(dir);
    spool.append([batch('a', 1), batch('a', 2), batch('a', 3)]);
    const { entries } = spool.peek(1, 1 << 20);
    spool.ack(entries[0]!.no);
    spool.settle();
    spool.close();

    spool = Spool.open(dir);
    expect(spool.batches).toBe(2);
    expect(spool.peek(10, 1 << 20).batches.map((b) => b.sequence)).toEqual([1, 2]);
    spool.settle();
    expect(spool.append([batch('a', 4)])[0]!.sequence).toBe(3);
    // everything acknowledged: the sequence still continues after another restart
    spool.ack(Number.MAX_SAFE_INTEGER);
    spool.close();
    spool = Spool.open(dir);
    expect(spool.batches).toBe(0);
    expect(spool.nextSequence('a')).toBe(4);
    spool.close();
  });

  it('cuts a record torn by a crash and keeps the ones before it', () => {
    const dir = tempDir();
    const spool = Spool.open(dir);
    spool.append([batch('a', 1), batch('a', 2)]);
    spool.close();
    const seg = readdirSync(dir).find((f) => f.startsWith('seg-'))!;
    const size = statSync(join(dir, seg)).size;
    truncateSync(join(dir, seg), size - 5); // the second record loses its tail
    appendFileSync(join(dir, seg), Buffer.from([1, 2, 3])); // and some garbage follows
    const again = Spool.open(dir);
    expect(again.peek(10, 1 << 20).batches.map((b) => b.payload)).toEqual([{ v: 1, n: 1, pad: '' }]);
    again.settle();
    // the torn record was never taken: its sequence is given again
    expect(again.append([batch('a', 9)])[0]!.sequence).toBe(1);
    again.close();
  });

  it('drops the oldest batches past the cap and counts them per target, never those in flight', () => {
    const spool = Spool.open(tempDir(), { capBytes: 10_000, segmentBytes: 4096 });
    for (let i = 0; i < 20; i++) spool.append([batch(i % 2 ? 'a' : 'b', i, 900)]);
    expect(spool.bytes).toBeLessThanOrEqual(10_000);
    const kept = spool.batches;
    expect(kept).toBeGreaterThan(0);
    expect(spool.droppedTotal).toBe(20 - kept);
    expect(spool.lostBatchesOf('a') + spool.lostBatchesOf('b')).toBe(20 - kept);
    // the oldest kept are the newest written
    const head = spool.peek(1, 1 << 20);
    expect((head.batches[0]!.payload as { n: number }).n).toBe(20 - kept);
    // the head is in flight: appending more does not drop it
    for (let i = 20; i < 30; i++) spool.append([batch('a', i, 900)]);
    expect((spool.peek(1, 1 << 20).batches[0]!.payload as { n: number }).n).toBe(20 - kept);
    spool.settle();
    expect(spool.bytes).toBeLessThanOrEqual(10_000);
    // segments wholly behind the head are gone
    expect(readdirSync(spool.dir).filter((f) => f.startsWith('seg-')).length).toBeLessThanOrEqual(5);
    spool.close();
  });

  it('peeks at most the given batches and bytes, but always one', () => {
    const spool = Spool.open(tempDir());
    spool.append([batch('a', 1, 3000), batch('a', 2, 3000), batch('a', 3)]);
    expect(spool.peek(10, 100).entries).toHaveLength(1);
    spool.settle();
    expect(spool.peek(2, 1 << 20).entries).toHaveLength(2);
    spool.settle();
    expect(spool.peek(10, 6200).entries).toHaveLength(2);
    spool.close();
  });

  it('counts a batch the registry refuses for good and moves past it', () => {
    const spool = Spool.open(tempDir());
    spool.append([batch('a', 1), batch('a', 2)]);
    const { entries } = spool.peek(10, 1 << 20);
    spool.reject(entries[0]!.no);
    spool.ack(entries[1]!.no);
    spool.settle();
    expect(spool.rejectedTotal).toBe(1);
    expect(spool.lostBatchesOf('a')).toBe(1);
    expect(spool.batches).toBe(0);
    spool.close();
  });
});
