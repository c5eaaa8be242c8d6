// Ring-buffer sub-buffers: real pages from test/fixtures/ring-buffer (decoded to the reference
// decoder's exact text), every event kind on written pages, and hostile pages.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FormatError } from '../src/errors.js';
import { parseHeaderEvent } from '../src/ring-buffer/header-event.js';
import { parseHeaderPage } from '../src/ring-buffer/header-page.js';
import { decodePageHeader, PageReader } from '../src/ring-buffer/page.js';
import { parseMiniFormat, type MiniFormat } from './helpers/mini-format.js';
import { encodePage as writePage, headerPageText, type PageEvent, type PageOptions } from '../src/ring-buffer/encode-page.js';
import { referenceLines, type HeaderStyle } from './helpers/reference-lines.js';

const fixtures = join(__dirname, 'fixtures/ring-buffer');
const read = (name: string) => new Uint8Array(readFileSync(join(fixtures, name)));
const text = (name: string) => readFileSync(join(fixtures, name), 'utf8');
const formats = new Map<number, MiniFormat>();
for (const f of readdirSync(join(fixtures, 'events'))) {
  const m = parseMiniFormat(text(`events/${f}`));
  formats.set(m.id, m);
}
const layout4k = parseHeaderPage(text('header_page'));

/** Every data record of a page as [timestamp, offset, length, missed]. */
function decodeAll(page: Uint8Array, opts: { pageSize?: number; littleEndian?: boolean; commitSize?: 4 | 8 } = {}) {
  const layout = parseHeaderPage(headerPageText(opts.pageSize ?? 4096, opts.commitSize ?? 8));
  const r = new PageReader(layout, opts.littleEndian ?? true);
  r.load(page, new DataView(page.buffer, page.byteOffset, page.byteLength), 0, page.length);
  const out: { ts: bigint; offset: number; length: number; missed: number }[] = [];
  while (r.next()) out.push({ ts: r.record.timestamp(), offset: r.record.recordOffset, length: r.record.recordLength, missed: r.record.missedEvents });
  return out;
}

describe('header_page and header_event', () => {
  it.each([
    ['6.18, 4 KiB', text('header_page'), { commitOffset: 8, commitSize: 8, dataOffset: 16, dataSize: 4080, subBufferSize: 4096 }],
    ['6.18, 8 KiB sub-buffer', text('header_page_subbuf8k'), { commitOffset: 8, commitSize: 8, dataOffset: 16, dataSize: 8176, subBufferSize: 8192 }],
    ['32-bit kernel', headerPageText(4096, 4), { commitOffset: 8, commitSize: 4, dataOffset: 12, dataSize: 4084, subBufferSize: 4096 }],
    ['64 KiB pages', headerPageText(65536, 8), { commitOffset: 8, commitSize: 8, dataOffset: 16, dataSize: 65520, subBufferSize: 65536 }],
  ])('parses header_page of %s', (_name, t, expected) => {
    expect(parseHeaderPage(t)).toMatchObject(expected);
  });

  it.each([
    ['no data field', '\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n', 'malformed'],
    ['commit of 2 bytes', headerPageText().replace('size:8;\tsigned:1', 'size:2;\tsigned:1'), 'unsupported'],
    ['data before the header end', headerPageText().replace('offset:16', 'offset:4'), 'malformed'],
    ['a 1 GiB sub-buffer', headerPageText().replace('size:4080', 'size:1073741808'), 'malformed'],
  ])('rejects header_page with %s', (_name, t, code) => {
    expect(() => parseHeaderPage(t)).toThrow(expect.objectContaining({ code }));
  });

  it('parses header_event of 6.18 and refuses another bit layout', () => {
    expect(parseHeaderEvent(text('header_event'))).toEqual({ typeLenBits: 5, timeDeltaBits: 27, padding: 29, timeExtend: 30, timeStamp: 31, dataMaxTypeLen: 28 });
    expect(() => parseHeaderEvent(text('header_event').replace('27 bits', '26 bits'))).toThrow(expect.objectContaining({ code: 'unsupported' }));
  });
});

describe('real pages (fixtures) decode to the reference decoder output', () => {
  it.each<[string, string, HeaderStyle, string, string]>([
    ['cpu0_page0.raw', 'cpu0.raw', 'missed', 'header_page', 'cpu0_page0.decoded.txt'],
    ['missed_page.raw', 'missed/cpu0_first.raw', 'missed', 'header_page', 'missed_page.decoded.txt'],
    ['time_extend_page.raw', 'time_extend/cpu0.raw', 'time-extend', 'header_page', 'time_extend_page.decoded.txt'],
    ['subbuf8k_page.raw', 'subbuf8k/cpu0_subbuf8k.raw', 'subbuf', 'header_page_subbuf8k', 'subbuf8k_page.decoded.txt'],
  ])('%s', (file, corpusName, style, header, expected) => {
    const lines = referenceLines(corpusName, read(file), parseHeaderPage(text(header)), formats, style);
    expect(lines).toEqual(text(expected).trimEnd().split('\n'));
  });

  it('reads the missed-events flags and stored count of a real page', () => {
    const h = decodePageHeader(read('missed_page.raw'), 0, layout4k);
    expect(h).toEqual({ timestamp: 318704997259n, commitRaw: 0xffffffffc0000fb4n, dataLength: 4020, missedEvents: true, missedCount: 9074, });
    expect(decodeAll(read('missed_page.raw')).map((r) => r.missed).slice(0, 3)).toEqual([9074, 0, 0]);
  });
});

describe('every event kind on written pages', () => {
  const payload = (n: number, fill = 0xab) => new Uint8Array(n).fill(fill);

  it.each<[string, PageEvent[], PageOptions, { ts: bigint; length: number; missed?: number }[]]>([
    ['short records (type_len 1..28)', [{ kind: 'data', delta: 5, payload: payload(8) }, { kind: 'data', delta: 7, payload: payload(112) }], {}, [{ ts: 1005n, length: 8 }, { ts: 1012n, length: 112 }]],
    ['a long record (type_len 0)', [{ kind: 'data', delta: 3, payload: payload(200) }], {}, [{ ts: 1003n, length: 200 }]],
    ['a short payload forced long', [{ kind: 'data', delta: 0, payload: payload(12), long: true }], {}, [{ ts: 1000n, length: 12 }]],
    ['a time extend (type 30) of 2^40 ns', [{ kind: 'extend', delta: 1n << 40n }, { kind: 'data', delta: 1, payload: payload(4) }], {}, [{ ts: 1000n + (1n << 40n) + 1n, length: 4 }]],
    ['an absolute time stamp (type 31)', [{ kind: 'stamp', ts: 5_000_000_000n }, { kind: 'data', delta: 2, payload: payload(4) }], {}, [{ ts: 5_000_000_002n, length: 4 }]],
    ['a discarded event (padding with delta)', [{ kind: 'padding', delta: 9, size: 16 }, { kind: 'data', delta: 1, payload: payload(4) }], {}, [{ ts: 1010n, length: 4 }]],
    ['padding to the end (delta 0)', [{ kind: 'data', delta: 1, payload: payload(4) }, { kind: 'padding', delta: 0, size: 0 }, { kind: 'data', delta: 1, payload: payload(4) }], {}, [{ ts: 1001n, length: 4 }]],
    ['lost events with a count', [{ kind: 'data', delta: 0, payload: payload(4) }, { kind: 'data', delta: 0, payload: payload(4) }], { missed: 77 }, [{ ts: 1000n, length: 4, missed: 77 }, { ts: 1000n, length: 4, missed: 0 }]],
    ['lost events without a count', [{ kind: 'data', delta: 0, payload: payload(4) }], { missed: 'unknown' }, [{ ts: 1000n, length: 4, missed: -1 }]],
    ['a 32-bit kernel (4-byte commit)', [{ kind: 'data', delta: 4, payload: payload(8) }], { commitSize: 4, missed: 3 }, [{ ts: 1004n, length: 8, missed: 3 }]],
    ['a big-endian kernel', [{ kind: 'data', delta: 0x7ffffff, payload: payload(8) }], { littleEndian: false }, [{ ts: 1000n + 0x7ffffffn, length: 8 }]],
  ])('%s', (_name, events, options, expected) => {
    const page = writePage(1000n, events, options);
    const got = decodeAll(page, options);
    expect(got.map((g) => ({ ts: g.ts, length: g.length, missed: g.missed }))).toEqual(expected.map((e) => ({ missed: 0, ...e })));
  });

  it('carries time across the 32-bit boundary without BigInt in the loop', () => {
    const page = writePage(0xffff_fff0n, [{ kind: 'data', delta: 0x20, payload: new Uint8Array(4) }, { kind: 'data', delta: 0x7ffffff, payload: new Uint8Array(4) }]);
    expect(decodeAll(page).map((r) => r.ts)).toEqual([0x1_0000_0010n, 0x1_0000_0010n + 0x7ffffffn]);
  });

  it('keeps the top bits of the running time for an absolute stamp (rb_fix_abs_ts)', () => {
    const base = 0x0800_0000_0000_0000n + 100n; // bit 59 set: above what a stamp holds
    const page = writePage(base, [{ kind: 'stamp', ts: base + 50n }, { kind: 'data', delta: 0, payload: new Uint8Array(4) }]);
    expect(decodeAll(page).map((r) => r.ts)).toEqual([base + 50n]);
  });

  it('round-trips random pages (fast-check)', () => {
    const event = fc.oneof(
      fc.record({ kind: fc.constant('data' as const), delta: fc.integer({ min: 0, max: 0x7ffffff }), payload: fc.uint8Array({ minLength: 4, maxLength: 300 }), long: fc.boolean() }),
      fc.record({ kind: fc.constant('extend' as const), delta: fc.bigInt({ min: 0n, max: (1n << 59n) - 1n }) }),
      fc.record({ kind: fc.constant('padding' as const), delta: fc.integer({ min: 1, max: 1000 }), size: fc.integer({ min: 1, max: 64 }).map((n) => n * 4) }),
    );
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 1n << 50n }), fc.array(event, { maxLength: 12 }), (ts, events) => {
        const page = writePage(ts, events);
        let t = ts;
        const expected: bigint[] = [];
        for (const e of events) {
          if (e.kind === 'data') {
            t += BigInt(e.delta);
            expected.push(t);
          } else t += e.kind === 'extend' ? e.delta : BigInt(e.delta);
        }
        expect(decodeAll(page).map((r) => r.ts)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});

describe('hostile pages', () => {
  const layout = parseHeaderPage(headerPageText());
  const load = (page: Uint8Array, available = page.length) => {
    const r = new PageReader(layout);
    r.load(page, new DataView(page.buffer, page.byteOffset, page.byteLength), 0, available);
    let n = 0;
    while (r.next()) n++;
    return n;
  };

  it.each<[string, (p: Uint8Array, v: DataView) => void, string, number]>([
    ['a commit beyond the data size', (_p, v) => v.setUint32(8, 5000, true), 'out-of-range', 8],
    ['a record that crosses the data end', (_p, v) => v.setUint32(8, 10, true), 'out-of-range', 16],
    ['a long record shorter than its length word', (_p, v) => v.setUint32(20, 2, true), 'malformed', 20],
    ['a long record longer than the page', (_p, v) => v.setUint32(20, 0x7fffffff, true), 'out-of-range', 16],
    ['a long record of nearly 4 GiB (no 32-bit wrap)', (_p, v) => v.setUint32(20, 0xfffffff1, true), 'out-of-range', 16],
    ['a missed count past the page', (_p, v) => v.setUint32(8, (0xc0000000 | 4078) >>> 0, true), 'out-of-range', 4094],
  ])('%s is a FormatError', (_name, mutate, code, byteOffset) => {
    const page = writePage(1n, [{ kind: 'data', delta: 1, payload: new Uint8Array(40), long: true }]);
    mutate(page, new DataView(page.buffer));
    let err: unknown;
    try {
      load(page);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FormatError);
    expect(err).toMatchObject({ code, byteOffset });
  });

  it('refuses a page shorter than its header', () => {
    expect(() => load(new Uint8Array(10))).toThrow(expect.objectContaining({ code: 'truncated', byteOffset: 0 }));
  });

  it('mutated and cut real pages give records inside the page or a FormatError (fast-check)', () => {
    const real = [read('cpu0_page0.raw'), read('missed_page.raw'), read('time_extend_page.raw')];
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: real.length - 1 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 4095 }), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 0, max: 4096 }),
        (which, flips, cut) => {
          const page = real[which]!.slice();
          for (const [at, value] of flips) page[at] = value;
          const r = new PageReader(layout4k);
          try {
            r.load(page, new DataView(page.buffer), 0, cut);
            let n = 0;
            while (r.next()) {
              const rec = r.record;
              expect(rec.recordOffset).toBeGreaterThanOrEqual(16);
              expect(rec.recordOffset + rec.recordLength).toBeLessThanOrEqual(Math.min(cut, 4096));
              expect(++n).toBeLessThanOrEqual(1020);
            }
          } catch (e) {
            expect(e).toBeInstanceOf(FormatError);
            expect(typeof (e as FormatError).byteOffset).toBe('number');
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
