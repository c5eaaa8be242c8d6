// Re-laying records out for another kernel's formats and writing them as a trace.dat: the records
// of a Linux 6.18 recording (examples/recordings/sched-small.dat) become Android 3.10.49 and 3.4.0
// records (packages/compat's fixture formats: a 32-bit `long`, `common_padding`, `success`), the
// file reads back field by field with the same values by name, and trace-cmd reports it as this
// package's report does.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type EventFormat, findField, parseEventFormat } from '../src/event-format/event-format.js';
import { readFieldBigInt, readFieldString } from '../src/event-format/field-read.js';
import { relayoutRecord } from '../src/event-format/relayout-record.js';
import { formatRecord, formatRecordRaw } from '../src/print-fmt/format-record.js';
import { compileRecordWriter } from '../src/print-fmt/record-writer.js';
import { encodeRecordPages, headerPageText } from '../src/ring-buffer/encode-page.js';
import { parseHeaderPage } from '../src/ring-buffer/header-page.js';
import { PageReader } from '../src/ring-buffer/page.js';
import { relayoutTraceDat } from '../src/trace-dat/relayout-trace-dat.js';
import { reportChunks } from '../src/trace-dat/report.js';
import { openTraceDat } from '../src/trace-dat/trace-dat-reader.js';

const root = join(__dirname, '..', '..', '..');
const kernels = join(root, 'packages', 'compat', 'test', 'fixtures', 'formats');
const recording = join(root, 'examples', 'recordings', 'sched-small.dat');
const parseFormat = (text: string, system: string) => parseEventFormat(text, { system });
const formatText = (kernel: string, key: string) => readFileSync(join(kernels, kernel, key, 'format'), 'utf8');
const format = (kernel: string, key: string) => parseFormat(formatText(kernel, key), key.split('/')[0]!);

/** A record of `f` with the given field values (numbers, or strings for char arrays). */
function recordOf(f: EventFormat, values: Record<string, number | bigint | string>): Uint8Array {
  const out = new Uint8Array(f.fixedSize + 64);
  const view = new DataView(out.buffer);
  view.setUint16(0, f.id, true);
  let tail = f.fixedSize;
  for (const field of [...f.commonFields, ...f.fields]) {
    const v = values[field.name];
    if (v === undefined) continue;
    if (typeof v === 'string') {
      const bytes = new TextEncoder().encode(`${v}\0`);
      if (field.dynamic) {
        out.set(bytes, tail);
        view.setUint32(field.byteOffset, (bytes.length << 16) | tail, true);
        tail += bytes.length;
      } else out.set(bytes.subarray(0, field.size), field.byteOffset);
      continue;
    }
    const n = BigInt.asUintN(field.size * 8, BigInt(v));
    for (let i = 0; i < field.size; i++) out[field.byteOffset + i] = Number((n >> BigInt(8 * i)) & 0xffn);
  }
  return out.subarray(0, (tail + 3) & ~3);
}

/** Every field of `f` in `bytes` by name: numbers as bigints, strings as text. */
function fieldsOf(f: EventFormat, bytes: Uint8Array): Record<string, bigint | string> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Record<string, bigint | string> = {};
  for (const field of [...f.commonFields, ...f.fields]) {
    if (field.name === 'common_type' || field.name === 'common_padding') continue;
    const text = field.dynamic !== undefined || (field.array !== undefined && field.type === 'char');
    if (field.array !== undefined && !text) continue;
    out[field.name] = text ? readFieldString(view, 0, bytes.length, field) : readFieldBigInt(view, 0, field);
  }
  return out;
}

describe('relayoutRecord', () => {
  it('sched_switch 6.18 → 3.10.49: a 64-bit prev_state narrowed, the fields after it moved by 4', () => {
    const from = format('linux-6.18', 'sched/sched_switch');
    const to = format('android-3.10.49', 'sched/sched_switch');
    const values = { common_pid: 77, prev_comm: 'bash', prev_pid: 1234, prev_prio: 120, prev_state: -2, next_comm: 'kworker/0:1', next_pid: 4321, next_prio: 100 };
    const out = relayoutRecord(recordOf(from, values), from, to);
    expect(out.length).toBe(60);
    expect(new DataView(out.buffer).getUint16(0, true)).toBe(68);
    expect(fieldsOf(to, out)).toEqual({ ...fieldsOf(from, recordOf(from, values)), common_flags: 0n, common_preempt_count: 0n });
    expect(new DataView(out.buffer).getInt32(findField(to, 'prev_state')!.byteOffset, true)).toBe(-2);
  });

  it('sched_process_fork 6.18 → 3.4.0 and back: __data_loc comms ⇄ inline char[16], common_padding', () => {
    const modern = format('linux-6.18', 'sched/sched_process_fork');
    const old = format('android-3.4.0', 'sched/sched_process_fork');
    const record = recordOf(modern, { common_pid: 5, parent_comm: 'bash', parent_pid: 10, child_comm: 'sleep', child_pid: 11 });
    const down = relayoutRecord(record, modern, old);
    expect(fieldsOf(old, down)).toMatchObject({ parent_comm: 'bash', parent_pid: 10n, child_comm: 'sleep', child_pid: 11n, common_pid: 5n });
    const up = relayoutRecord(down, old, modern);
    expect(fieldsOf(modern, up)).toEqual(fieldsOf(modern, record));
    expect(up.length).toBe(record.length);
  });

  it('sys_enter 6.18 → 3.10.49: args[6] element by element, 8 → 4 bytes; a field only the target has is filled', () => {
    const from = format('linux-6.18', 'raw_syscalls/sys_enter');
    const to = format('android-3.10.49', 'raw_syscalls/sys_enter');
    const rec = recordOf(from, { common_pid: 3, id: 110 });
    new DataView(rec.buffer).setBigUint64(findField(from, 'args')!.byteOffset + 8, 0x1_0000_0007n, true);
    const out = relayoutRecord(rec, from, to);
    const args = findField(to, 'args')!;
    expect(args.size).toBe(24);
    expect(new DataView(out.buffer).getUint32(args.byteOffset + 4, true)).toBe(7);
    expect(fieldsOf(to, out).id).toBe(110n);
    const wake = relayoutRecord(recordOf(format('linux-6.18', 'sched/sched_wakeup'), { pid: 9 }), format('linux-6.18', 'sched/sched_wakeup'), format('android-3.10.49', 'sched/sched_wakeup'), { fill: { success: 1 } });
    expect(fieldsOf(format('android-3.10.49', 'sched/sched_wakeup'), wake)).toMatchObject({ pid: 9n, success: 1n });
  });
});

describe('encodeRecordPages', () => {
  it('pages records as the kernel does: deltas, time extends for gaps of 2^27 ns and more, a new page when full', () => {
    const layout = parseHeaderPage(headerPageText(4096));
    const records = Array.from({ length: 600 }, (_, i) => ({ timeNs: 1_000_000n + BigInt(i) * (i % 7 === 0 ? 200_000_000n : 1_000n), data: Uint8Array.of(i & 0xff, 1, 2, 3, i >> 8, 0, 0, 0) }));
    let t = 0n;
    for (const r of records) r.timeNs = t += r.timeNs - 999_000n;
    const pages = encodeRecordPages(records, layout);
    expect(pages.length % 4096).toBe(0);
    const reader = new PageReader(layout, true);
    const view = new DataView(pages.buffer);
    const got: [bigint, number][] = [];
    for (let at = 0; at < pages.length; at += 4096) {
      reader.load(pages, view, at, 4096);
      while (reader.next()) got.push([reader.record.timestamp(), reader.record.bytes[reader.record.recordOffset]! | (reader.record.bytes[reader.record.recordOffset + 4]! << 8)]);
    }
    expect(got).toEqual(records.map((r, i) => [r.timeNs, i]));
    expect(pages.length / 4096).toBeGreaterThan(1);
  });

  it('refuses records out of time order on a CPU', () => {
    const layout = parseHeaderPage(headerPageText());
    expect(() => encodeRecordPages([{ timeNs: 5, data: new Uint8Array(8) }, { timeNs: 4, data: new Uint8Array(8) }], layout)).toThrow(/comes before/);
  });
});

function traceCmdInstalled(): boolean {
  const v = spawnSync('trace-cmd', ['--version'], { encoding: 'utf8' });
  return !v.error && v.status !== null;
}
if (!traceCmdInstalled()) console.log('relayout: trace-cmd report comparison skipped: trace-cmd is not installed');

const report = (bytes: Uint8Array) => [...reportChunks<EventFormat>(openTraceDat(bytes, { parseFormat }), { formatRecord, formatRecordRaw, compileWriter: compileRecordWriter, raw: false, kernelStateLetters: false, chunkChars: 4096 })].join('');

describe.each(['android-3.10.49', 'android-3.4.0'])('a 6.18 recording re-laid out as %s', (kernel) => {
  const sourceBytes = new Uint8Array(readFileSync(recording));
  const keys = ['sched/sched_switch', 'sched/sched_wakeup'];
  const dat = relayoutTraceDat(
    sourceBytes,
    { headerPage: readFileSync(join(kernels, kernel, 'header_page'), 'utf8'), formats: keys.map((k) => ({ system: 'sched', text: formatText(kernel, k) })) },
    { fill: { success: 1 } },
  );
  // the same, record by record with relayoutRecord
  const source = openTraceDat(sourceBytes, { parseFormat });
  const targets = new Map(keys.map((k) => [k, format(kernel, k)]));
  const records: { cpu: number; timeNs: bigint; data: Uint8Array }[] = [];
  const expected: Record<string, bigint | string>[] = [];
  const it0 = source.records();
  for (let r = it0.next(); r; r = it0.next()) {
    const from = r.format!;
    const to = targets.get(`${from.system}/${from.name}`)!;
    const data = relayoutRecord(r.data(), from, to, { fill: { success: 1 } });
    records.push({ cpu: r.cpu, timeNs: r.timestamp(), data });
    expected.push(fieldsOf(to, data));
  }

  it('reads back with every record and field by name', () => {
    expect(records.length).toBe(869);
    const back = openTraceDat(dat, { parseFormat });
    expect(back.dat.cpuCount).toBe(source.dat.cpuCount);
    const got: Record<string, bigint | string>[] = [];
    const it1 = back.records();
    for (let r = it1.next(); r; r = it1.next()) got.push(fieldsOf(r.format!, r.data()));
    expect(got).toEqual(expected);
    // and the values are the 6.18 recording's own, by name
    const orig: Record<string, bigint | string>[] = [];
    const it2 = openTraceDat(new Uint8Array(readFileSync(recording)), { parseFormat }).records();
    for (let r = it2.next(); r; r = it2.next()) orig.push(fieldsOf(r.format!, r.data()));
    got.forEach((g, i) => {
      for (const [k, v] of Object.entries(orig[i]!)) if (k in g && k !== 'common_flags' && k !== 'common_preempt_count') expect(g[k], `record ${i} ${k}`).toEqual(v);
    });
  });

  it.runIf(traceCmdInstalled())('trace-cmd report prints it as this package\'s report does', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'relayout-'));
    try {
      const file = join(tmp, `${kernel}.dat`);
      writeFileSync(file, dat);
      const r = spawnSync('trace-cmd', ['report', file], { encoding: 'utf8', maxBuffer: 1 << 26 });
      expect(r.status).toBe(0);
      const ours = report(dat);
      expect(ours.split('\n').length).toBeGreaterThan(869);
      expect(r.stdout).toBe(ours);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
