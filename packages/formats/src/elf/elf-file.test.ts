import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isFormatError } from '../errors.js';
import { readElf } from './elf-file.js';
import { BpfRelocationType, relocationTypeName } from './elf-relocation.js';
import { SymbolBinding, SymbolType } from './elf-symbol.js';

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../../test/fixtures/objects/${name}`, import.meta.url)));

function mutated(bytes: Uint8Array, at: number, values: number[]): Uint8Array {
  const copy = bytes.slice();
  copy.set(values, at);
  return copy;
}

describe('readElf', () => {
  const le = fixture('block_core.o');
  const be = fixture('block_core.bpfeb.o');

  it('decodes both byte orders to the same sections and symbols', () => {
    const a = readElf(le);
    const b = readElf(be);
    expect(a.littleEndian).toBe(true);
    expect(b.littleEndian).toBe(false);
    expect(b.sections.map((s) => [s.name, s.type, s.size])).toEqual(a.sections.map((s) => [s.name, s.type, s.size]));
    expect(b.symbols.map((s) => [s.name, s.value, s.size, s.type, s.binding])).toEqual(a.symbols.map((s) => [s.name, s.value, s.size, s.type, s.binding]));
    expect(b.relocations.map((r) => [r.targetSection, r.byteOffset, r.typeName, r.symbol.name])).toEqual(
      a.relocations.map((r) => [r.targetSection, r.byteOffset, r.typeName, r.symbol.name]),
    );
  });

  it('finds function symbols and relocations by target section', () => {
    const elf = readElf(le);
    const fn = elf.symbols.find((s) => s.name === 'on_rq_complete');
    expect(fn).toMatchObject({ type: SymbolType.Func, binding: SymbolBinding.Global, section: 'tracepoint/block/block_rq_complete', value: 0 });
    const idx = elf.section('tracepoint/block/block_rq_complete')?.index ?? -1;
    const relocs = elf.relocationsFor(idx);
    expect(relocs.length).toBeGreaterThan(0);
    expect(relocs.every((r) => r.targetSection === 'tracepoint/block/block_rq_complete')).toBe(true);
  });

  it.each([
    [BpfRelocationType.Imm64, 'R_BPF_64_64'],
    [BpfRelocationType.Abs64, 'R_BPF_64_ABS64'],
    [BpfRelocationType.Abs32, 'R_BPF_64_ABS32'],
    [BpfRelocationType.NoDyld32, 'R_BPF_64_NODYLD32'],
    [BpfRelocationType.Call32, 'R_BPF_64_32'],
    [7, 'R_BPF_7'],
  ])('relocation type %d is %s', (t, name) => expect(relocationTypeName(t)).toBe(name));

  it.each([
    ['bad magic', 0, [0x7f, 0x45, 0x4c, 0x47], 'malformed', 'read elf: elf header: bad magic, want 7f 45 4c 46', 0],
    ['ELF32', 4, [1], 'unsupported', 'read elf: elf header: class 1 (ELF32) is not supported, BPF objects are ELF64', 4],
    ['x86-64 machine', 18, [62, 0], 'unsupported', 'read elf: elf header: machine 62 is not EM_BPF (247)', 18],
    ['unknown data encoding', 5, [3], 'malformed', 'read elf: elf header: unknown data encoding 3', 5],
    ['ET_EXEC', 16, [2, 0], 'unsupported', 'read elf: elf header: type 2 is not ET_REL (1)', 16],
    ['section header size 40', 58, [40, 0], 'malformed', 'read elf: elf header: section header size 40, want 64', 58],
    ['extended shstrndx', 62, [0xff, 0xff], 'unsupported', 'read elf: elf header: extended section name index (SHN_XINDEX) is not supported', 62],
  ])('%s', (_name, at, bytes, code, message, byteOffset) => {
    try {
      readElf(mutated(le, at, bytes));
      expect.unreachable();
    } catch (e) {
      expect(isFormatError(e, code as 'malformed')).toBe(true);
      expect((e as Error).message).toBe(message);
      expect((e as { byteOffset: number }).byteOffset).toBe(byteOffset);
    }
  });

  it('a file cut inside the header is truncated', () => {
    expect(() => readElf(le.subarray(0, 40))).toThrow(expect.objectContaining({ code: 'truncated', byteOffset: 0 }));
    expect(() => readElf(le.subarray(0, 3))).toThrow(expect.objectContaining({ code: 'truncated' }));
  });

  it('a file cut before its section headers is truncated', () => {
    expect(() => readElf(le.subarray(0, le.length - 100))).toThrow(expect.objectContaining({ code: 'truncated' }));
  });

  it('a section whose contents end past the file is out-of-range at its header', () => {
    const elf = readElf(le);
    const shoff = elf.header.sectionHeaderOffset;
    const text = elf.section('.text')?.index ?? 0;
    const at = shoff + text * 64 + 32; // sh_size
    expect(() => readElf(mutated(le, at, [0, 0, 0, 0x40, 0, 0, 0, 0]))).toThrow(
      expect.objectContaining({ code: 'out-of-range', byteOffset: shoff + text * 64 + 24 }),
    );
    // a 2^60 size is refused before any arithmetic goes wrong
    expect(() => readElf(mutated(le, at, [0, 0, 0, 0, 0, 0, 0, 0x10]))).toThrow(expect.objectContaining({ code: 'out-of-range' }));
  });

  it('a section name offset past .strtab is out-of-range', () => {
    const elf = readElf(le);
    const at = elf.header.sectionHeaderOffset + 2 * 64;
    expect(() => readElf(mutated(le, at, [0xff, 0xff, 0, 0]))).toThrow(expect.objectContaining({ code: 'out-of-range' }));
  });

  it('a relocation naming a symbol past the table is out-of-range', () => {
    const elf = readElf(le);
    const rel = elf.sections.find((s) => s.name === '.reltracepoint/block/block_rq_complete');
    if (rel === undefined) throw new Error('fixture lacks the rel section');
    expect(() => readElf(mutated(le, rel.byteOffset + 12, [0xff, 0xff, 0, 0]))).toThrow(
      expect.objectContaining({ code: 'out-of-range', byteOffset: rel.byteOffset + 8 }),
    );
  });
});
