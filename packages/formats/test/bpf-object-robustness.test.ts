// Truncated, corrupted and hostile objects: every failure is a FormatError with a code (and,
// for byte-level damage, a byte offset); nothing hangs, crashes or allocates without bound.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatBtfType } from '../src/btf/format-btf-type.js';
import { resolveCoreAccess } from '../src/btf/core-access.js';
import { FormatError } from '../src/errors.js';
import { readElf } from '../src/elf/elf-file.js';
import type { ObjectSpec } from '../src/object/object-spec.js';
import { readBpfObject } from '../src/object/read-bpf-object.js';
import { tracepointFieldAccesses } from '../src/object/tracepoint-fields.js';
import { bigFlatInputs } from './support/hostile-inputs.js';

const dir = new URL('./fixtures/objects/', import.meta.url);
const objects = ['sched_trace.o', 'legacy_probes.o', 'block_core.o', 'block_core.bpfeb.o'];
const originals = new Map(objects.map((n) => [n, new Uint8Array(readFileSync(new URL(n, dir)))]));
const original = (n: string) => originals.get(n) as Uint8Array;

/** Touches everything lazy in a spec, so damage hidden behind laziness surfaces here. */
function exercise(spec: ObjectSpec): void {
  const btf = spec.btf;
  if (btf !== undefined) {
    for (let id = 0; id < btf.typeCount; id++) {
      for (const f of [() => btf.type(id), () => formatBtfType(btf, id), () => btf.sizeOf(id), () => btf.resolve(id)]) {
        try {
          f();
        } catch (e) {
          if (!(e instanceof FormatError)) throw e;
        }
      }
    }
    for (const c of spec.coreRelocations) {
      try {
        resolveCoreAccess(btf, c.record);
      } catch (e) {
        if (!(e instanceof FormatError)) throw e;
      }
    }
  }
  tracepointFieldAccesses(spec);
}

/** Either a spec (exercised) or a FormatError with a code; anything else fails the property. */
function readOrFormatError(bytes: Uint8Array): 'ok' | FormatError {
  try {
    exercise(readBpfObject(bytes));
    return 'ok';
  } catch (e) {
    if (e instanceof FormatError) {
      expect(['truncated', 'malformed', 'out-of-range', 'unsupported', 'not-found']).toContain(e.code);
      expect(e.message).toMatch(/^(read elf|read btf|read btf\.ext|load [a-z. ]+): /);
      expect(e.byteOffset, e.message).toBeTypeOf('number');
      expect(e.byteOffset as number).toBeGreaterThanOrEqual(0);
      expect(e.byteOffset as number, e.message).toBeLessThanOrEqual(bytes.length);
      return e;
    }
    throw e;
  }
}

function sectionRange(bytes: Uint8Array, name: string): [number, number] {
  const s = readElf(bytes).section(name);
  if (s === undefined) throw new Error(`no ${name}`);
  return [s.byteOffset, s.byteOffset + s.size];
}

function putU32(bytes: Uint8Array, at: number, value: number, littleEndian: boolean): Uint8Array {
  const copy = bytes.slice();
  new DataView(copy.buffer).setUint32(at, value >>> 0, littleEndian);
  return copy;
}

const hostile = fc.constantFrom(0, 1, 0xff, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff, 0x10000, 24, 0x1000_0000);

describe.each(objects)('%s under mutation', (name) => {
  const bytes = original(name);
  const le = !name.includes('bpfeb');
  const [btfStart, btfEnd] = sectionRange(bytes, '.BTF');
  const [extStart, extEnd] = sectionRange(bytes, '.BTF.ext');
  const shoff = readElf(bytes).header.sectionHeaderOffset;

  it('the original reads', () => {
    expect(readOrFormatError(bytes)).toBe('ok');
  });

  it('every cut of the file is a FormatError or a spec', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: bytes.length - 1 }), (n) => {
        const r = readOrFormatError(bytes.subarray(0, n));
        // the section headers sit at the end: any real cut loses some of them
        if (n < bytes.length) expect(r).toBeInstanceOf(FormatError);
      }),
      { numRuns: 150 },
    );
  });

  it('random byte flips anywhere', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: bytes.length - 1 }), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), (flips) => {
        const copy = bytes.slice();
        for (const [at, v] of flips) copy[at] = v;
        readOrFormatError(copy);
      }),
      { numRuns: 200 },
    );
  });

  it('hostile u32 values in the section headers (sizes, offsets, counts, links)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: (bytes.length - shoff) / 4 - 1 }), hostile, (word, value) => {
        readOrFormatError(putU32(bytes, shoff + word * 4, value, le));
      }),
      { numRuns: 200 },
    );
  });

  it('hostile u32 values in the symbol table and the relocation sections', () => {
    const elf = readElf(bytes);
    const words: number[] = [];
    for (const s of elf.sections) {
      if (s.name !== '.symtab' && !s.name.startsWith('.rel')) continue;
      for (let at = s.byteOffset; at + 4 <= s.byteOffset + s.size; at += 4) words.push(at);
    }
    fc.assert(
      fc.property(fc.constantFrom(...words), hostile, (at, value) => {
        readOrFormatError(putU32(bytes, at, value, le));
      }),
      { numRuns: 200 },
    );
  });

  it('hostile u32 values inside .BTF (header, type records, string offsets)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Math.floor((btfEnd - btfStart) / 4) - 1 }), hostile, (word, value) => {
        readOrFormatError(putU32(bytes, btfStart + word * 4, value, le));
      }),
      { numRuns: 200 },
    );
  });

  it('hostile u32 values inside .BTF.ext (record sizes, counts, offsets, access strings)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Math.floor((extEnd - extStart) / 4) - 1 }), hostile, (word, value) => {
        readOrFormatError(putU32(bytes, extStart + word * 4, value, le));
      }),
      { numRuns: 200 },
    );
  });
});

describe('hostile objects, case by case', () => {
  const bytes = original('sched_trace.o');
  const elf = readElf(bytes);
  const shoff = elf.header.sectionHeaderOffset;
  const header = (name: string) => shoff + (elf.section(name)?.index ?? 0) * 64;

  const cases: [string, () => Uint8Array, string, RegExp, number | undefined][] = [
    ['a section count of 65535', () => putU32(bytes, 60, 0xffff | (1 << 16), true), 'truncated', /^read elf: section headers \(65535\): needs 4194240 bytes/, shoff],
    ['a huge .symtab size', () => putU32(bytes, header('.symtab') + 32, 0x7fff_fff8, true), 'out-of-range', /^read elf: section \d+: contents at \d+ size 2147483640 end past the file/, header('.symtab') + 24],
    ['a .BTF offset past the file', () => putU32(bytes, header('.BTF') + 24, 0x7fff_0000, true), 'out-of-range', /^read elf: section \d+: contents at 2147418112/, header('.BTF') + 24],
    ['a .BTF type_len past the section', () => putU32(bytes, sectionRange(bytes, '.BTF')[0] + 12, 0x00ff_ffff, true), 'out-of-range', /^read btf: btf header: types at 0 length 16777215/, sectionRange(bytes, '.BTF')[0] + 8],
    ['a .BTF string offset past the strings', () => putU32(bytes, sectionRange(bytes, '.BTF')[0] + 24, 0x00ff_ffff, true), 'out-of-range', /^load maps: type 1 name: string offset 16777215 past the string section/, undefined],
    ['.BTF.ext line info count past the end', () => putU32(bytes, sectionRange(bytes, '.BTF.ext')[0] + 32 + 4 + 4, 0x0100_0000, true), 'truncated', /^read btf\.ext: func info \S+: 16777216 records of 8 bytes/, undefined],
    ['a license without NUL', () => {
      const c = bytes.slice();
      const [a, b] = sectionRange(bytes, 'license');
      c.fill(0x41, a, b);
      return c;
    }, 'malformed', /^load license: license section: 13 bytes without a NUL$/, sectionRange(bytes, 'license')[0]],
    ['a relocation off an instruction boundary', () => {
      const rel = elf.sections.find((s) => s.name === '.reltracepoint/sched/sched_switch');
      return putU32(bytes, (rel?.byteOffset ?? 0) + 0, 0x3c, true);
    }, 'malformed', /^load relocations: relocation at tracepoint\/sched\/sched_switch\+60: not on an instruction boundary$/, undefined],
  ];
  it.each(cases)('%s → %s', (_name, make, code, message, byteOffset) => {
    const r = readOrFormatError(make());
    expect(r).toBeInstanceOf(FormatError);
    const e = r as FormatError;
    expect(e.code).toBe(code);
    expect(e.message).toMatch(message);
    if (byteOffset !== undefined) expect(e.byteOffset).toBe(byteOffset);
  });

  it('an access string out of range poisons that relocation only', () => {
    const c = bytes.slice();
    const [a, b] = sectionRange(bytes, '.BTF');
    const text = new TextDecoder('latin1').decode(c.subarray(a, b));
    const at = text.indexOf('\u00000:6\u0000'); // next_pid of sched_switch
    expect(at).toBeGreaterThan(0);
    c[a + at + 3] = '9'.charCodeAt(0);
    const spec = readBpfObject(c);
    const bad = spec.coreRelocations.filter((r) => r.error !== undefined);
    expect(bad.map((r) => [r.program, r.insnIndex, r.error?.code, r.error?.message])).toEqual([
      ['on_switch', 3, 'out-of-range', 'core relocation at tracepoint/sched/sched_switch+24: access string "0:9": member 9 of struct trace_event_raw_sched_switch with 8 members'],
    ]);
    expect(spec.coreRelocations.filter((r) => r.error === undefined).length).toBe(spec.coreRelocations.length - 1);
    expect(tracepointFieldAccesses(spec).some((t) => t.field === 'next_pid')).toBe(false);
  });

  it('a typedef loop planted in the object fails the maps that use it, by code', () => {
    // Point the BTF record of __u32 (a typedef) at itself.
    const spec = readBpfObject(bytes);
    const btf = spec.btf as NonNullable<ObjectSpec['btf']>;
    const id = btf.typeIdsByName('__u32')[0] as number;
    const raw = btf.raw.get(id);
    const [a] = sectionRange(bytes, '.BTF');
    const at = a + btf.header.hdrLen + btf.header.typeOff + raw.byteOffset + 8;
    const r = readOrFormatError(putU32(bytes, at, id, true));
    expect(r).toBeInstanceOf(FormatError);
    expect((r as FormatError).code).toBe('malformed');
    expect((r as FormatError).message).toMatch(/^load maps: type \d+: typedef\/qualifier chain longer than 32/);
  });

  it('big inputs of zeros or 0xff are refused', () => {
    // how quickly: a figure of bench/bpf-object.ts
    for (const big of bigFlatInputs()) expect(readOrFormatError(big)).toBeInstanceOf(FormatError);
  });
});
