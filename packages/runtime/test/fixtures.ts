// Test helpers: the example objects and recording, the compat fixture kernels, records laid out by
// a format, and a record stream over records made in memory.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type KernelProfile, type ProgramSpec, readProgramSpec } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { type EventFormat, type RecordBatch, type RecordStream, type RecordStreamStats, TraceRecord } from '@probeyard/formats';

export const repoRoot = join(import.meta.dirname, '..', '..', '..');
export const examplesDir = join(repoRoot, 'examples');
export const smallRecording = join(examplesDir, 'recordings', 'sched-small.dat');
export const kernelDir = (k: 'linux-6.18' | 'android-3.10.49' | 'android-3.4.0') => join(repoRoot, 'packages', 'compat', 'test', 'fixtures', 'formats', k);

const profiles = new Map<string, Promise<KernelProfile>>();
export function fixtureProfile(k: 'linux-6.18' | 'android-3.10.49' | 'android-3.4.0'): Promise<KernelProfile> {
  let p = profiles.get(k);
  // packages/compat's fixture folders hold a few events of each kernel: partial profiles
  if (!p) profiles.set(k, (p = readProfile(kernelDir(k), { release: k.replace(/^android-/, ''), complete: false })));
  return p;
}

export const exampleSpec = (name: string): Promise<ProgramSpec> => readProgramSpec(new Uint8Array(readFileSync(join(examplesDir, 'c', `${name}.o`))));
export const asmSpec = (text: string): Promise<ProgramSpec> => readProgramSpec(new TextEncoder().encode(text));

/** A record of `format` with fields set from `values` (numbers, or strings for char arrays). */
export function recordOf(format: EventFormat, values: Record<string, number | bigint | string>): Uint8Array {
  const bytes = new Uint8Array(format.fixedSize);
  const view = new DataView(bytes.buffer);
  view.setUint16(0, format.id, true);
  for (const f of [...format.commonFields, ...format.fields]) {
    const v = values[f.name];
    if (v === undefined) continue;
    if (typeof v === 'string') {
      bytes.set(new TextEncoder().encode(v).subarray(0, f.size - 1), f.byteOffset);
      continue;
    }
    const big = BigInt(v);
    if (f.size === 8) view.setBigUint64(f.byteOffset, BigInt.asUintN(64, big), true);
    else if (f.size === 4) view.setUint32(f.byteOffset, Number(BigInt.asUintN(32, big)), true);
    else if (f.size === 2) view.setUint16(f.byteOffset, Number(BigInt.asUintN(16, big)), true);
    else if (f.size === 1) view.setUint8(f.byteOffset, Number(BigInt.asUintN(8, big)));
  }
  return bytes;
}

/** One record of a {@link memoryStream}: its bytes, CPU, time and the loss reported before it. */
export interface MemoryRecord {
  data: Uint8Array;
  cpu?: number;
  timeNs?: number;
  missedEvents?: number;
}

/**
 * A record stream over records in memory, `batchSize` records a batch; `between(i)` runs after
 * batch i (to attach or detach while the stream runs).
 */
export function memoryStream(records: readonly MemoryRecord[], batchSize = 4, between?: (batch: number) => void): RecordStream {
  const stats: RecordStreamStats = { records: 0, lostEvents: 0, lostUnknown: 0, lostByCpu: [0, 0] };
  const cursor = new TraceRecord();
  let at = 0;
  return {
    info: { kind: 'trace-dat', cpuCount: 2, littleEndian: true, longSize: 8, format: () => undefined, comm: () => undefined },
    stats,
    async close() {},
    async *[Symbol.asyncIterator]() {
      let batchNo = 0;
      while (at < records.length) {
        const end = Math.min(records.length, at + batchSize);
        const batch: RecordBatch = {
          next() {
            if (at >= end) return undefined;
            const r = records[at++]!;
            cursor.bytes = r.data;
            cursor.view = new DataView(r.data.buffer, r.data.byteOffset, r.data.byteLength);
            cursor.recordOffset = 0;
            cursor.recordLength = r.data.length;
            cursor.eventId = r.data[0]! | (r.data[1]! << 8);
            cursor.cpu = r.cpu ?? 0;
            cursor.tsLow = (r.timeNs ?? at) >>> 0;
            cursor.tsHigh = Math.floor((r.timeNs ?? at) / 2 ** 32);
            cursor.missedEvents = r.missedEvents ?? 0;
            stats.records++;
            if (cursor.missedEvents > 0) {
              stats.lostEvents += cursor.missedEvents;
              stats.lostByCpu[cursor.cpu] = (stats.lostByCpu[cursor.cpu] ?? 0) + cursor.missedEvents;
            }
            return cursor;
          },
        };
        yield batch;
        between?.(batchNo++);
      }
    },
  };
}
