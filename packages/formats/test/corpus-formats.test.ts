// Every format file of the shared corpus must parse, and every print fmt must parse into a tree:
// five Android kernels (3.4 to 5.10), the 6.18 `events/` folder and the 6.18 tarball of all 2323.
// Rendering each event over a synthetic record must never throw.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEventsTree } from '../src/node/events-tree.js';
import { formatRecord, formatRecordRaw, formatRecordWith } from '../src/print-fmt/format-record.js';
import { compileRecordWriter } from '../src/print-fmt/record-writer.js';
import { TextWriter } from '../src/print-fmt/text-writer.js';
import { type EventFormatSet, readEventsTarball } from '../src/profile/event-format-set.js';

const corpus = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus');
const present = existsSync(join(corpus, 'kernel-formats'));
if (!present) console.log(`skipping corpus format tests: ${corpus} is absent`);

const kernels = present
  ? readdirSync(join(corpus, 'kernel-formats')).filter((d) => d.startsWith('android_')).sort()
  : [];

/** A record of the format's fixed size with every dynamic field pointing at an 8-byte tail. */
function syntheticRecord(fixedSize: number, dynamicOffsets: number[]): Uint8Array {
  const r = new Uint8Array(fixedSize + 16);
  for (let k = 0; k < r.length; k++) r[k] = (k * 37 + 11) & 0xff;
  const view = new DataView(r.buffer);
  for (const at of dynamicOffsets) view.setUint32(at, (8 << 16) | fixedSize, true);
  r[fixedSize + 7] = 0;
  return r;
}

function summarize(set: EventFormatSet): { formats: number; printFmts: number; rendered: number; failedToParse: number; written: number } {
  let written = 0;
  let printFmts = 0;
  let rendered = 0;
  let failedToParse = 0;
  for (const { format } of set.formats.values()) {
    if (format.printFmt) printFmts++;
    const dyn = format.fields.filter((f) => f.dynamic === 'data_loc').map((f) => f.byteOffset);
    const record = syntheticRecord(format.fixedSize, dyn);
    for (const handlers of ['trace-cmd', 'print-fmt'] as const) {
      const text = formatRecord(format, record, { handlers, longSize: format.longSize ?? 8 });
      expect(typeof text).toBe('string');
      // The report's compiled byte writer, where the format has one, writes the same text.
      const writer = compileRecordWriter(format, { handlers, longSize: format.longSize ?? 8 });
      if (writer) {
        const out = new TextWriter(16);
        if (writer(new DataView(record.buffer), 0, record.length, out)) {
          expect(out.take(), `${format.system}/${format.name}`).toBe(text);
          if (handlers === 'print-fmt') written++;
        }
      }
      if (handlers === 'print-fmt') {
        // The compiled evaluator agrees with the tree-walking reference on every corpus format.
        expect(formatRecordWith(format, record, { handlers, longSize: format.longSize ?? 8 }, true), `${format.system}/${format.name}`).toBe(text);
        if (text.startsWith('[FAILED TO PARSE]')) failedToParse++;
        else rendered++;
      }
    }
    expect(formatRecordRaw(format, record).startsWith(format.fields.length > 0 ? ' ' : '')).toBe(true);
  }
  return { formats: set.formats.size, printFmts, rendered, failedToParse, written };
}

describe.skipIf(!present)('corpus format files', () => {
  it.each(kernels)('%s: every events/**/format parses', async (kernel) => {
    const set = await readEventsTree(join(corpus, 'kernel-formats', kernel, 'events'));
    expect(set.errors.map((e) => e.error.message)).toEqual([]);
    const expected = readFileSync(join(corpus, 'kernel-formats', kernel, 'available_events'), 'utf8').trim().split('\n').length;
    const s = summarize(set);
    console.log(`${kernel}: ${s.formats} formats, ${s.printFmts} print fmts parsed, ${s.rendered} render fully, ${s.failedToParse} [FAILED TO PARSE], ${s.written} through the byte writer`);
    expect(s.formats).toBeGreaterThanOrEqual(Math.min(expected, 400));
    // One 3.10 format (sched/sched_switch_end) has no print fmt line at all.
    expect(s.printFmts).toBe(kernel.includes('3.10.40') ? s.formats - 1 : s.formats);
    expect(set.headerPage ?? '').toMatch(/commit/);
    // 3.4.0 (hammerhead) and 3.10.49 (seed) are 32-bit ARM kernels: 4-byte long and pointers.
    expect(set.longSize).toBe(kernel.includes('3.4.0') || kernel.includes('3.10.49') ? 4 : 8);
  });

  it('linux-6.18 events/ folder: every format parses', async () => {
    const set = await readEventsTree(join(corpus, 'tracefs/linux-6.18/events'));
    expect(set.errors).toEqual([]);
    const s = summarize(set);
    expect(s.formats).toBe(19);
    expect(s.printFmts).toBe(19);
  });

  it('linux-6.18 tarball: all 2323 formats parse, all print fmts parse', async () => {
    const set = await readEventsTarball(readFileSync(join(corpus, 'tracefs/linux-6.18/all_event_formats_linux-6.18.44.tar.gz')));
    expect(set.errors).toEqual([]);
    const s = summarize(set);
    console.log(`linux-6.18 tarball: ${s.formats} formats, ${s.printFmts} print fmts parsed, ${s.rendered} render fully, ${s.failedToParse} [FAILED TO PARSE], ${s.written} through the byte writer`);
    expect(s.formats).toBe(2323);
    expect(s.written).toBeGreaterThan(100); // integer-only print fmts: the report's fast path
    expect(s.printFmts).toBe(2323);
    expect(s.rendered).toBeGreaterThan(2300);
    expect(set.headerPage).toBe(readFileSync(join(corpus, 'tracefs/linux-6.18/header_page'), 'utf8'));
    expect(set.hash).toMatch(/^[0-9a-f]{64}$/);
    // The formats of the events/ folder are the same texts as in the tarball.
    const folder = await readEventsTree(join(corpus, 'tracefs/linux-6.18/events'));
    for (const [key, f] of folder.formats) expect(set.formats.get(key)?.hash, key).toBe(f.hash);
  });

  it('the same kernel profile gives the same hash; different kernels differ', async () => {
    const a = await readEventsTree(join(corpus, 'kernel-formats', kernels[0]!, 'events'));
    const b = await readEventsTree(join(corpus, 'kernel-formats', kernels[0]!, 'events'));
    const c = await readEventsTree(join(corpus, 'kernel-formats', kernels[1]!, 'events'));
    expect(a.hash).toBe(b.hash);
    expect(a.hash).not.toBe(c.hash);
  });
});
