import { describe, expect, it } from 'vitest';
import { BtfBuilder, buildBtfExt } from '../../test/support/btf-builder.js';
import { decodeBtfExt, readBtfExt } from './btf-ext.js';
import { decodeBtf } from './btf-spec.js';

function fixture(littleEndian: boolean) {
  const b = new BtfBuilder();
  const int = b.int('int', 4, 1);
  const proto = b.funcProto(int, []);
  const func = b.func('prog', proto);
  const sec = b.str('tracepoint/sched/sched_switch');
  const file = b.str('./x.c');
  const line = b.str('    return ctx->pid;');
  const access = b.str('0:1');
  const btf = decodeBtf(b.build(littleEndian));
  return { btf, int, func, sec, file, line, access };
}

describe('decodeBtfExt', () => {
  for (const littleEndian of [true, false]) {
    it(`reads func info, line info and CO-RE records (${littleEndian ? 'le' : 'be'})`, () => {
      const f = fixture(littleEndian);
      const ext = decodeBtfExt(
        buildBtfExt(
          {
            func: [[f.sec, [[0, f.func]]]],
            line: [[f.sec, [[0, f.file, f.line, (12 << 10) | 5], [16, f.file, f.line, 13 << 10]]]],
            core: [[f.sec, [[8, f.int, f.access, 0], [24, f.int, f.access, 2]]]],
          },
          undefined,
          littleEndian,
        ),
        f.btf,
      );
      expect(ext.header).toMatchObject({ version: 1, hdrLen: 32, littleEndian });
      expect(ext.funcInfo).toEqual([{ section: 'tracepoint/sched/sched_switch', records: [{ byteOffset: 0, typeId: f.func }] }]);
      expect(ext.lineInfo[0]?.records).toEqual([
        { byteOffset: 0, fileName: './x.c', line: '    return ctx->pid;', lineNumber: 12, column: 5 },
        { byteOffset: 16, fileName: './x.c', line: '    return ctx->pid;', lineNumber: 13, column: 0 },
      ]);
      expect(ext.coreRelocations[0]?.records).toEqual([
        { byteOffset: 8, typeId: f.int, accessString: '0:1', kind: 0, kindName: 'field-byte-offset' },
        { byteOffset: 24, typeId: f.int, accessString: '0:1', kind: 2, kindName: 'field-exists' },
      ]);
    });
  }

  it('uses the record size from the data, so longer records of a newer format still read', () => {
    const f = fixture(true);
    const ext = decodeBtfExt(buildBtfExt({ func: [[f.sec, [[0, f.func, 0xdead]]]] }, { func: 12, line: 16, core: 16 }), f.btf);
    expect(ext.funcInfo[0]?.records).toEqual([{ byteOffset: 0, typeId: f.func }]);
  });

  it('reads the 24-byte header without CO-RE relocations', () => {
    const f = fixture(true);
    const full = buildBtfExt({ func: [[f.sec, [[0, f.func]]]] });
    const short = new Uint8Array(full.length - 8);
    short.set(full.subarray(0, 24));
    short.set(full.subarray(32), 24);
    new DataView(short.buffer).setUint32(4, 24, true);
    const ext = decodeBtfExt(short, f.btf);
    expect(ext.header.coreReloLen).toBe(0);
    expect(ext.funcInfo[0]?.records.length).toBe(1);
    expect(ext.coreRelocations).toEqual([]);
  });

  it.each([
    ['record size below the minimum', (f: ReturnType<typeof fixture>) => buildBtfExt({ func: [[f.sec, [[0, f.func]]]] }, { func: 4, line: 16, core: 16 }), 'malformed'],
    ['a count past the end', (f: ReturnType<typeof fixture>) => {
      const u = buildBtfExt({ func: [[f.sec, [[0, f.func]]]] });
      new DataView(u.buffer).setUint32(32 + 8, 0x1000_0000, true);
      return u;
    }, 'truncated'],
    ['a section name past the strings', (f: ReturnType<typeof fixture>) => buildBtfExt({ func: [[99999, [[0, f.func]]]] }), 'out-of-range'],
    ['an access string past the strings', (f: ReturnType<typeof fixture>) => buildBtfExt({ core: [[f.sec, [[0, f.int, 99999, 0]]]] }), 'out-of-range'],
    ['func info length past the blob', (f: ReturnType<typeof fixture>) => {
      const u = buildBtfExt({ func: [[f.sec, [[0, f.func]]]] });
      new DataView(u.buffer).setUint32(12, 0x7fff_0000, true);
      return u;
    }, 'out-of-range'],
    ['version 2', (f: ReturnType<typeof fixture>) => {
      const u = buildBtfExt({ func: [[f.sec, [[0, f.func]]]] });
      u[2] = 2;
      return u;
    }, 'unsupported'],
    ['zero records', (f: ReturnType<typeof fixture>) => buildBtfExt({ func: [[f.sec, []]] }), 'malformed'],
  ])('%s → %s', (_name, make, code) => {
    const f = fixture(true);
    expect(() => readBtfExt(make(f), f.btf)).toThrow(expect.objectContaining({ code, message: expect.stringMatching(/^read btf\.ext: /) }));
  });

  it('a byte order different from .BTF is malformed', () => {
    const f = fixture(true);
    expect(() => decodeBtfExt(buildBtfExt({ func: [[f.sec, [[0, f.func]]]] }, undefined, false), f.btf)).toThrow(expect.objectContaining({ code: 'malformed' }));
  });
});
