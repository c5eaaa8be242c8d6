// Decodes the raw trace_pipe_raw captures of /work/shared/corpus/tracefs/linux-6.18 and compares
// every record with decoded_all_records.txt (an independent reference decoder's output).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PageReader } from '../src/ring-buffer/page.js';
import { parseHeaderPage } from '../src/ring-buffer/header-page.js';
import { parseHeaderEvent } from '../src/ring-buffer/header-event.js';
import { parseMiniFormat, type MiniFormat } from './helpers/mini-format.js';
import { referenceLines } from './helpers/reference-lines.js';

const dir = join(__dirname, '../../../../shared/corpus/tracefs/linux-6.18');
const present = existsSync(join(dir, 'decoded_all_records.txt'));
if (!present) console.log(`ring-buffer corpus tests skipped: ${dir} is absent`);

function formatsById(): Map<number, MiniFormat> {
  const m = new Map<number, MiniFormat>();
  for (const system of readdirSync(join(dir, 'events'))) {
    for (const event of readdirSync(join(dir, 'events', system))) {
      const f = parseMiniFormat(readFileSync(join(dir, 'events', system, event, 'format'), 'utf8'));
      m.set(f.id, f);
    }
  }
  return m;
}

/** Decodes a capture file into the reference decoder's text (headers and record lines). */
function decodeCapture(name: string, headerPageText: string, withTimeExtends: boolean, subbuf8k = false): string[] {
  const style = subbuf8k ? 'subbuf' : withTimeExtends ? 'time-extend' : 'missed';
  return referenceLines(name, new Uint8Array(readFileSync(join(dir, name))), parseHeaderPage(headerPageText), formatsById(), style);
}

describe.runIf(present)('ring-buffer pages of linux 6.18 (corpus)', () => {
  it('parses header_page and header_event of 6.18', () => {
    expect(parseHeaderPage(readFileSync(join(dir, 'header_page'), 'utf8'))).toEqual({
      timestampOffset: 0,
      timestampSize: 8,
      commitOffset: 8,
      commitSize: 8,
      dataOffset: 16,
      dataSize: 4080,
      subBufferSize: 4096,
    });
    expect(parseHeaderPage(readFileSync(join(dir, 'subbuf8k/header_page_subbuf8k'), 'utf8')).subBufferSize).toBe(8192);
    expect(parseHeaderEvent(readFileSync(join(dir, 'header_event'), 'utf8')).timeStamp).toBe(31);
  });

  it('decodes every capture to exactly decoded_all_records.txt', () => {
    const hp = readFileSync(join(dir, 'header_page'), 'utf8');
    const expected = readFileSync(join(dir, 'decoded_all_records.txt'), 'utf8').trimEnd().split('\n');
    const actual = [
      ...decodeCapture('cpu0.raw', hp, false),
      ...decodeCapture('cpu1.raw', hp, false),
      ...decodeCapture('missed/cpu0_first.raw', hp, false),
      ...decodeCapture('missed/cpu0_after_overrun.raw', hp, false),
      ...decodeCapture('subbuf8k/cpu0_subbuf8k.raw', readFileSync(join(dir, 'subbuf8k/header_page_subbuf8k'), 'utf8'), false, true),
    ];
    expect(actual.length).toBe(expected.length);
    for (let i = 0; i < expected.length; i++) expect(`${i + 1}: ${actual[i]}`).toBe(`${i + 1}: ${expected[i]}`);
  });

  it('decodes the time_extend captures to exactly time_extend/decoded.txt', () => {
    const hp = readFileSync(join(dir, 'header_page'), 'utf8');
    const expected = readFileSync(join(dir, 'time_extend/decoded.txt'), 'utf8').trimEnd().split('\n');
    const actual = [...decodeCapture('time_extend/cpu0.raw', hp, true), ...decodeCapture('time_extend/cpu1.raw', hp, true)];
    expect(actual.length).toBe(expected.length);
    for (let i = 0; i < expected.length; i++) expect(`${i + 1}: ${actual[i]}`).toBe(`${i + 1}: ${expected[i]}`);
  });

  it('reports the lost-event counts of missed/ on the first record of the page', () => {
    const layout = parseHeaderPage(readFileSync(join(dir, 'header_page'), 'utf8'));
    const bytes = new Uint8Array(readFileSync(join(dir, 'missed/cpu0_after_overrun.raw')));
    const reader = new PageReader(layout);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const missed: number[] = [];
    for (let off = 0; off < bytes.length; off += 4096) {
      reader.load(bytes, view, off, 4096);
      while (reader.next()) missed.push(reader.record.missedEvents);
    }
    expect(missed.filter((m) => m !== 0)).toEqual([50883]);
    expect(missed[0]).toBe(50883);
  });
});
