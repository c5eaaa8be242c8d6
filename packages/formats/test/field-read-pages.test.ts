// Field reads on real kernel bytes: every sched_switch / sched_wakeup record of the 6.18
// `trace_pipe_raw` captures (decoded into records by the ring-buffer reader) read through
// readFieldNumber / readFieldString and formatRecordRaw, against the values of the corpus'
// independent reference decoder (`decoded_all_records.txt`).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type EventFormat, parseEventFormat } from '../src/event-format/event-format.js';
import { readFieldNumber, readFieldString } from '../src/event-format/field-read.js';
import { formatRecordRaw } from '../src/print-fmt/format-record.js';
import { parseHeaderPage } from '../src/ring-buffer/header-page.js';
import { PageReader } from '../src/ring-buffer/page.js';

const dir = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus', 'tracefs', 'linux-6.18');
const present = existsSync(join(dir, 'decoded_all_records.txt'));
if (!present) console.log(`skipping real-page field read tests: ${dir} is absent`);

/** `{'a': 1, 'b': 'x'}` (Python dict text of the reference decoder) → entries. */
function parseDict(text: string): Map<string, string | number> {
  const out = new Map<string, string | number>();
  const re = /'(\w+)': ('((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|-?\d+)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const str = m[3] ?? m[4];
    out.set(m[1]!, str !== undefined ? str.replace(/\\(.)/g, '$1') : Number(m[2]));
  }
  return out;
}

describe.skipIf(!present)('field reads on real 6.18 ring-buffer pages', () => {
  it('every record of cpu0.raw and cpu1.raw reads the values the reference decoder printed', () => {
    const formats = new Map<number, EventFormat>();
    for (const name of ['sched_switch', 'sched_wakeup']) {
      const f = parseEventFormat(readFileSync(join(dir, 'events/sched', name, 'format'), 'utf8'), { system: 'sched' });
      formats.set(f.id, f);
    }
    const layout = parseHeaderPage(readFileSync(join(dir, 'header_page'), 'utf8'));
    const expected = readFileSync(join(dir, 'decoded_all_records.txt'), 'utf8').split('\n');
    let checked = 0;
    for (const file of ['cpu0.raw', 'cpu1.raw']) {
      const lines = expected
        .slice(expected.findIndex((l) => l.startsWith(`# ${file} page 0`)))
        .filter((l) => /^\s+\d+ \w+ \{/.test(l));
      const bytes = new Uint8Array(readFileSync(join(dir, file)));
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const reader = new PageReader(layout);
      let k = 0;
      for (let page = 0; page + layout.subBufferSize <= bytes.length; page += layout.subBufferSize) {
        reader.load(bytes, view, page, layout.subBufferSize);
        while (reader.next()) {
          const r = reader.record;
          const format = formats.get(r.eventId);
          expect(format, `event id ${r.eventId}`).toBeDefined();
          const want = parseDict(lines[k++]!);
          for (const f of [...format!.commonFields, ...format!.fields]) {
            const got = f.array ? readFieldString(r.view, r.recordOffset, r.recordLength, f) : readFieldNumber(r.view, r.recordOffset, f);
            expect(got, `${file} record ${k} ${f.name}`).toBe(want.get(f.name));
          }
          const raw = formatRecordRaw(format!, r.bytes.subarray(r.recordOffset, r.recordOffset + r.recordLength));
          expect(raw).toContain(` ${format!.fields[0]!.name}=${want.get(format!.fields[0]!.name)} `);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(500);
  });
});
