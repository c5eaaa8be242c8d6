// Objects written by test/support/elf-builder.ts: shapes clang does not produce, and scale.
import { describe, expect, it } from 'vitest';
import { FormatError } from '../src/errors.js';
import { readBpfObject } from '../src/object/read-bpf-object.js';
import { transitiveCallees } from '../src/object/programs.js';
import { buildElf, concat, insn } from './support/elf-builder.js';
import { callChainObject } from './support/hostile-inputs.js';

const EXIT = (le = true) => insn(0x95, 0, 0, 0, 0, le);
const MOV0 = (le = true) => insn(0xb7, 0, 0, 0, 0, le);
const LDDW = (imm = 0, src = 0, le = true) => concat([insn(0x18, 1, src, 0, imm, le), insn(0, 0, 0, 0, 0, le)]);
const CALL_FN = (imm: number, le = true) => insn(0x85, 0, 1, 0, imm, le);
const license = { name: 'license', flags: 0x3, data: new TextEncoder().encode('GPL\0') };

function expectError(bytes: Uint8Array, code: string, message: RegExp): FormatError {
  try {
    readBpfObject(bytes);
  } catch (e) {
    expect(e).toBeInstanceOf(FormatError);
    expect((e as FormatError).code).toBe(code);
    expect((e as FormatError).message).toMatch(message);
    return e as FormatError;
  }
  throw new Error('expected a FormatError');
}

describe('synthetic objects', () => {
  for (const littleEndian of [true, false]) {
    it(`externs, RELA, calls by symbol, and a function address (${littleEndian ? 'le' : 'be'})`, () => {
      const le = littleEndian;
      const prog = concat([LDDW(0, 0, le), CALL_FN(-1, le), LDDW(16, 4, le), MOV0(le), EXIT(le)]);
      const text = concat([MOV0(le), EXIT(le), MOV0(le), EXIT(le)]);
      const bytes = buildElf({
        littleEndian: le,
        rela: true,
        sections: [{ name: '.text', code: true, data: text }, { name: 'kprobe/x', code: true, data: prog }, license],
        symbols: [
          { name: 'a', section: '.text', value: 0, size: 16, bind: 0 },
          { name: 'b', section: '.text', value: 16, size: 16, bind: 1 },
          { name: 'probe', section: 'kprobe/x', value: 0, size: prog.length },
          { name: 'bpf_ksym', type: 0 },
          { name: '.text', section: '.text', type: 3, bind: 0 },
        ],
        rels: [
          { section: 'kprobe/x', byteOffset: 0, type: 1, symbol: 'bpf_ksym' },
          { section: 'kprobe/x', byteOffset: 16, type: 10, symbol: 'b' },
          { section: 'kprobe/x', byteOffset: 24, type: 1, symbol: '.text' },
        ],
      });
      const spec = readBpfObject(bytes);
      expect(spec.littleEndian).toBe(le);
      expect(spec.license).toBe('GPL');
      expect(spec.relocations.map((r) => [r.typeName, r.symbol.name])).toEqual([
        ['R_BPF_64_64', 'bpf_ksym'],
        ['R_BPF_64_32', 'b'],
        ['R_BPF_64_64', '.text'],
      ]);
      expect(spec.program('probe')?.relocations).toEqual([
        { insnIndex: 0, byteOffset: 0, symbol: 'bpf_ksym', elfType: 1, kind: 'extern', weak: false, call: false },
        { insnIndex: 2, byteOffset: 16, symbol: 'b', elfType: 10, kind: 'call', targetSection: '.text', targetByteOffset: 16, target: 'b' },
        { insnIndex: 3, byteOffset: 24, symbol: '.text', elfType: 1, kind: 'func-address', targetSection: '.text', targetByteOffset: 16, target: 'b' },
      ]);
      expect(spec.subprograms.map((p) => [p.name, p.isGlobal])).toEqual([
        ['a', false],
        ['b', true],
      ]);
      expect(spec.btf).toBeUndefined();
      expect(spec.coreRelocations).toEqual([]);
    });
  }

  it.each([
    [
      'a code section without function symbols',
      () => buildElf({ sections: [{ name: 'xdp', code: true, data: concat([MOV0(), EXIT()]) }] }),
      'malformed',
      /^load programs: section xdp: no function symbols$/,
    ],
    [
      'a code section of 12 bytes',
      () => buildElf({ sections: [{ name: 'xdp', code: true, data: new Uint8Array(12) }], symbols: [{ name: 'f', section: 'xdp', size: 8 }] }),
      'malformed',
      /^load programs: section xdp: size 12 is not a multiple of 8$/,
    ],
    [
      'overlapping functions',
      () =>
        buildElf({
          sections: [{ name: 'xdp', code: true, data: concat([MOV0(), MOV0(), EXIT()]) }],
          symbols: [
            { name: 'f', section: 'xdp', value: 0, size: 16 },
            { name: 'g', section: 'xdp', value: 8, size: 16 },
          ],
        }),
      'malformed',
      /overlaps the one before/,
    ],
    [
      'a function past its section',
      () => buildElf({ sections: [{ name: 'xdp', code: true, data: concat([MOV0(), EXIT()]) }], symbols: [{ name: 'f', section: 'xdp', value: 8, size: 16 }] }),
      'out-of-range',
      /^load programs: section xdp: function f at 8 size 16 ends past 16$/,
    ],
    [
      'R_BPF_64_64 on a mov',
      () =>
        buildElf({
          sections: [{ name: 'xdp', code: true, data: concat([MOV0(), EXIT()]) }, { name: '.data', flags: 3, data: new Uint8Array(8) }],
          symbols: [{ name: 'f', section: 'xdp', size: 16 }, { name: 'g', section: '.data', type: 1, size: 8 }],
          rels: [{ section: 'xdp', byteOffset: 0, type: 1, symbol: 'g' }],
        }),
      'malformed',
      /^load relocations: relocation at xdp\+0: R_BPF_64_64 on opcode 0xb7, want ld_imm64 \(0x18\)$/,
    ],
    [
      'a call into the middle of a function',
      () =>
        buildElf({
          sections: [{ name: '.text', code: true, data: concat([MOV0(), EXIT()]) }, { name: 'xdp', code: true, data: concat([CALL_FN(0), EXIT()]) }],
          symbols: [{ name: 'sub', section: '.text', size: 16, bind: 0 }, { name: 'f', section: 'xdp', size: 16 }, { name: '.text', section: '.text', type: 3, bind: 0 }],
          rels: [{ section: 'xdp', byteOffset: 0, type: 10, symbol: '.text' }],
        }),
      'out-of-range',
      /^load relocations: relocation at xdp\+0: call target \.text\+8 is not a function start$/,
    ],
    [
      'a pc-relative call out of its section',
      () => buildElf({ sections: [{ name: 'xdp', code: true, data: concat([CALL_FN(100), EXIT()]) }], symbols: [{ name: 'f', section: 'xdp', size: 16 }] }),
      'out-of-range',
      /^load relocations: call at xdp\+0: target 808 is not a function start$/,
    ],
    [
      'a reference to the license section',
      () =>
        buildElf({
          sections: [{ name: 'xdp', code: true, data: concat([LDDW(), EXIT()]) }, license],
          symbols: [{ name: 'f', section: 'xdp', size: 24 }, { name: 'lic', section: 'license', type: 1, size: 4 }],
          rels: [{ section: 'xdp', byteOffset: 0, type: 1, symbol: 'lic' }],
        }),
      'unsupported',
      /^load relocations: relocation at xdp\+0: reference to section license \(symbol lic\)$/,
    ],
    [
      'a version section of 3 bytes',
      () => buildElf({ sections: [{ name: 'version', flags: 3, data: new Uint8Array(3) }] }),
      'malformed',
      /^load version: version section: 3 bytes, want 4$/,
    ],
    [
      // found by the hostile section-header property: type 0 on legacy_probes.o's version section
      'a version section of 4 bytes typed NOBITS (a size, no contents)',
      () => buildElf({ sections: [{ name: 'version', type: 8, flags: 3, size: 4 }] }),
      'malformed',
      /^load version: version section: no contents \(section type 8\), want 4 bytes$/,
    ],
    [
      'legacy maps not dividing the section',
      () =>
        buildElf({
          sections: [{ name: 'maps', flags: 3, data: new Uint8Array(40) }],
          symbols: [
            { name: 'm1', section: 'maps', type: 1, value: 0 },
            { name: 'm2', section: 'maps', type: 1, value: 12 },
            { name: 'm3', section: 'maps', type: 1, value: 24 },
          ],
        }),
      'malformed',
      /^load maps: maps section: size 40 is not a multiple of 3 map symbols$/,
    ],
    [
      'a legacy map with unknown non-zero options',
      () => {
        const data = new Uint8Array(28);
        data[24] = 1;
        return buildElf({ sections: [{ name: 'maps', flags: 3, data }], symbols: [{ name: 'm1', section: 'maps', type: 1, value: 0 }] });
      },
      'unsupported',
      /^load maps: map m1: unknown non-zero definition byte 24$/,
    ],
    [
      'a .maps section without BTF',
      () => buildElf({ sections: [{ name: '.maps', flags: 3, data: new Uint8Array(32) }] }),
      'malformed',
      /^load maps: \.maps section: BTF-defined maps need a \.BTF section$/,
    ],
    ['an x86-64 object', () => buildElf({ sections: [], machine: 62 }), 'unsupported', /^read elf: elf header: machine 62 is not EM_BPF \(247\)$/],
  ])('%s → %s', (_name, make, code, message) => {
    expectError(make(), code, message);
  });

  it('a legacy map definition longer than bpf_map_def with zero padding reads', () => {
    const data = new Uint8Array(56);
    const v = new DataView(data.buffer);
    for (const [i, x] of [1, 4, 8, 16, 0].entries()) v.setUint32(i * 4, x, true);
    for (const [i, x] of [2, 4, 4, 1, 0].entries()) v.setUint32(28 + i * 4, x, true);
    const spec = readBpfObject(buildElf({ sections: [{ name: 'maps', flags: 3, data }], symbols: [{ name: 'a', section: 'maps', type: 1, value: 0 }, { name: 'b', section: 'maps', type: 1, value: 28 }] }));
    expect(spec.maps.map((m) => [m.name, m.type, m.keySize, m.valueSize, m.maxEntries])).toEqual([
      ['a', 1, 4, 8, 16],
      ['b', 2, 4, 4, 1],
    ]);
  });

  it('global data without BTF takes its variables from symbols; .bss has no bytes', () => {
    const spec = readBpfObject(
      buildElf({
        sections: [{ name: '.rodata', data: new Uint8Array([1, 2, 3, 4]) }, { name: '.bss', type: 8, flags: 3, size: 1 << 30 }],
        symbols: [{ name: 'k', section: '.rodata', type: 1, value: 0, size: 4 }, { name: 'big', section: '.bss', type: 1, value: 0, size: 1 << 30 }],
      }),
    );
    expect(spec.globals).toMatchObject([
      { section: '.rodata', kind: 'rodata', readonly: true, size: 4, vars: [{ name: 'k', byteOffset: 0, size: 4 }] },
      { section: '.bss', kind: 'bss', readonly: false, size: 1 << 30, bytes: undefined, vars: [{ name: 'big', size: 1 << 30 }] },
    ]);
  });

  it('scale: 20 000 functions in .text calling each other and 20 000 relocations, every one read', () => {
    // How long it takes (and that doubling n about doubles it: linear, not a scan per relocation)
    // is a figure of bench/bpf-object.ts, not an assertion here.
    const n = 20_000;
    const spec = readBpfObject(callChainObject(n));
    expect(spec.subprograms.length).toBe(n);
    expect(spec.program('main')?.relocations.length).toBe(n + 1);
    expect(transitiveCallees(spec, 'main').length).toBe(n);
  });
});
