// The records of a recording with their fields decoded by name from the recording's own format
// files (packages/formats, independent of the VM and of relocation): what the expectations of the
// program tests are computed from.
import type { EventFormat } from '@probeyard/formats';
import { readFieldBigInt, readFieldNumber, readFieldString } from '@probeyard/formats';
import { openTraceDatStream } from '@probeyard/formats/node';

export type FieldValue = number | bigint | string | number[];

export interface DecodedRecord {
  /** `system/event`. */
  event: string;
  cpu: number;
  /** Timestamp, ns. */
  ts: bigint;
  /** `common_pid`. */
  pid: number;
  /** Fields by name: numbers (8-byte fields as bigints), strings for char arrays and __data_loc,
   * other arrays as their bytes. */
  fields: Record<string, FieldValue>;
  /** The command name of `pid` the recording saved (saved_cmdlines), if any. */
  comm: string | undefined;
}

/** Every record of `recording` whose event is in `events` (all when omitted), in time order. */
export async function readRecords(recording: string, events?: readonly string[]): Promise<DecodedRecord[]> {
  const stream = openTraceDatStream(recording);
  const out: DecodedRecord[] = [];
  try {
    for await (const batch of stream) {
      for (let r = batch.next(); r; r = batch.next()) {
        const f = r.format as EventFormat | undefined;
        if (!f) continue;
        const event = `${f.system}/${f.name}`;
        if (events && !events.includes(event)) continue;
        const fields: Record<string, FieldValue> = {};
        for (const field of [...f.commonFields, ...f.fields]) {
          const isString = field.dynamic !== undefined || (field.array !== undefined && /\bchar\b/.test(field.type));
          if (isString) fields[field.name] = readFieldString(r.view, r.recordOffset, r.recordLength, field);
          else if (field.array !== undefined) fields[field.name] = [...r.bytes.subarray(r.recordOffset + field.byteOffset, r.recordOffset + field.byteOffset + field.size)];
          else if (field.size === 8) fields[field.name] = readFieldBigInt(r.view, r.recordOffset, field);
          else if ([1, 2, 4].includes(field.size)) fields[field.name] = readFieldNumber(r.view, r.recordOffset, field);
        }
        const pid = Number(fields.common_pid);
        out.push({ event, cpu: r.cpu, ts: r.timestamp(), pid, fields, comm: stream.info.comm(pid) });
      }
    }
  } finally {
    await stream.close();
  }
  return out;
}

/** Counts of `key(record)` over `records`. */
export function countBy<K>(records: readonly DecodedRecord[], key: (r: DecodedRecord) => K | undefined): Map<K, number> {
  const out = new Map<K, number>();
  for (const r of records) {
    const k = key(r);
    if (k !== undefined) out.set(k, (out.get(k) ?? 0) + 1);
  }
  return out;
}

/** floor(log2(v)) with 0 and 1 in slot 0, capped at `slots - 1` (the programs' `struct hist`). */
export function log2Slot(v: bigint, slots = 32): number {
  let s = 0;
  while (v > 1n) {
    v >>= 1n;
    s++;
  }
  return Math.min(s, slots - 1);
}
