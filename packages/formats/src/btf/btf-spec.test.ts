import { describe, expect, it } from 'vitest';
import { BtfBuilder } from '../../test/support/btf-builder.js';
import { isFormatError } from '../errors.js';
import { decodeBtf, readBtf } from './btf-spec.js';
import { formatBtfDeclaration, formatBtfType, formatBtfTypeName } from './format-btf-type.js';

/** Every kind once, the way a kernel's or clang's BTF spells it. */
function everyKind(): { b: BtfBuilder; ids: Record<string, number> } {
  const b = new BtfBuilder();
  const ids: Record<string, number> = {};
  ids.int = b.int('int', 4, 1); // 1
  ids.uint = b.int('unsigned int', 4, 0); // 2
  ids.char = b.int('char', 1, 1 | 2); // 3
  ids.bool = b.int('_Bool', 1, 4, 8); // 4
  ids.ptrInt = b.ptr(ids.int); // 5
  ids.arr = b.array(ids.char, ids.uint, 16); // 6
  ids.u32 = b.typedef('__u32', ids.uint); // 7
  ids.volatileU32 = b.qualifier('volatile', ids.u32); // 8
  ids.constChar = b.qualifier('const', ids.char); // 9
  ids.ptrConstChar = b.ptr(ids.constChar); // 10
  ids.restrictPtr = b.qualifier('restrict', ids.ptrConstChar); // 11
  ids.fwd = b.fwd('task_struct'); // 12
  ids.fwdUnion = b.fwd('bpf_attr', true); // 13
  ids.enumSigned = b.enum('level', 4, [['LOW', -1], ['HIGH', 7]], true); // 14
  ids.enum64 = b.enum64('big', [['SMALL', 1n], ['HUGE', 0xffff_ffff_0000_0001n]]); // 15
  ids.enum64Signed = b.enum64('sbig', [['NEG', -2n]], true); // 16
  ids.float = b.float('double', 8); // 17
  ids.proto = b.funcProto(ids.int, [['ctx', ids.ptrInt], ['fmt', ids.ptrConstChar], ['', 0]]); // 18 (variadic)
  ids.func = b.func('handle', ids.proto, 1); // 19
  ids.staticFunc = b.func('helper', ids.proto, 0); // 20
  ids.typeTag = b.typeTag('user', ids.int); // 21
  ids.ptrTagged = b.ptr(ids.typeTag); // 22
  ids.union = b.struct('', 8, [['deadline', ids.uint, 0], ['weight', ids.float, 0]], true); // 23
  ids.flags = b.struct('flags', 16, [
    ['op', ids.uint, 0, 8],
    ['sync', ids.uint, 8, 1],
    ['prio', ids.int, 9, 3],
    ['', ids.union, 64, 0],
  ]); // 24
  ids.ptrArr = b.ptr(ids.arr); // 25
  ids.rec = b.struct('rec', 48, [
    ['pid', ids.int, 0],
    ['comm', ids.arr, 32],
    ['state', ids.volatileU32, 160],
    ['name', ids.restrictPtr, 192],
    ['buf', ids.ptrTagged, 256],
    ['cb', b.ptr(ids.proto), 320],
  ]); // 26, 27 (ptr to proto)
  ids.var = b.variable('counter', ids.u32, 1);
  ids.staticVar = b.variable('seed', ids.int, 0);
  ids.datasec = b.datasec('.data', 8, [[ids.var, 0, 4], [ids.staticVar, 4, 4]]);
  ids.declTag = b.declTag('tunable', ids.var, -1);
  ids.declTagParam = b.declTag('errno', ids.func, 1);
  ids.ptrFwd = b.ptr(ids.fwd);
  return { b, ids };
}

describe('decodeBtf', () => {
  const { b, ids } = everyKind();
  for (const littleEndian of [true, false]) {
    describe(littleEndian ? 'little endian' : 'big endian', () => {
      const btf = decodeBtf(b.build(littleEndian));
      it('reads the header and indexes every record', () => {
        expect(btf.littleEndian).toBe(littleEndian);
        expect(btf.header.version).toBe(1);
        expect(btf.typeCount).toBe(b.records.length + 1);
      });
      it.each([
        ['int', { kind: 'int', name: 'int', size: 4, signed: true, char: false, bool: false, bitOffset: 0, bits: 32 }],
        ['char', { kind: 'int', name: 'char', size: 1, signed: true, char: true, bool: false }],
        ['bool', { kind: 'int', name: '_Bool', size: 1, signed: false, bool: true, bits: 8 }],
        ['ptrInt', { kind: 'ptr', name: '', type: 1 }],
        ['arr', { kind: 'array', type: 3, indexType: 2, nelems: 16 }],
        ['u32', { kind: 'typedef', name: '__u32', type: 2 }],
        ['volatileU32', { kind: 'volatile', type: 7 }],
        ['constChar', { kind: 'const', type: 3 }],
        ['restrictPtr', { kind: 'restrict', type: 10 }],
        ['fwd', { kind: 'fwd', name: 'task_struct', fwdKind: 'struct' }],
        ['fwdUnion', { kind: 'fwd', name: 'bpf_attr', fwdKind: 'union' }],
        ['enumSigned', { kind: 'enum', name: 'level', size: 4, signed: true, values: [{ name: 'LOW', value: -1 }, { name: 'HIGH', value: 7 }] }],
        ['float', { kind: 'float', name: 'double', size: 8 }],
        ['func', { kind: 'func', name: 'handle', type: 18, linkage: 'global' }],
        ['staticFunc', { kind: 'func', name: 'helper', linkage: 'static' }],
        ['typeTag', { kind: 'type_tag', name: 'user', type: 1 }],
        ['var', { kind: 'var', name: 'counter', type: 7, linkage: 'global' }],
        ['staticVar', { kind: 'var', name: 'seed', linkage: 'static' }],
        ['declTag', { kind: 'decl_tag', name: 'tunable', componentIdx: -1 }],
        ['declTagParam', { kind: 'decl_tag', name: 'errno', componentIdx: 1 }],
      ])('%s', (key, want) => {
        expect(btf.type(ids[key] as number)).toMatchObject(want);
      });
      it('func_proto with a variadic tail', () => {
        expect(btf.type(ids.proto as number)).toEqual({
          kind: 'func_proto',
          id: ids.proto,
          name: '',
          returnType: 1,
          params: [
            { name: 'ctx', type: 5 },
            { name: 'fmt', type: 10 },
          ],
          variadic: true,
        });
      });
      it('enum64 values as BigInt plus halves, signed by kind_flag', () => {
        expect(btf.type(ids.enum64 as number)).toMatchObject({
          kind: 'enum64',
          signed: false,
          values: [
            { name: 'SMALL', value: 1n, lo32: 1, hi32: 0 },
            { name: 'HUGE', value: 0xffff_ffff_0000_0001n, lo32: 1, hi32: 0xffffffff },
          ],
        });
        expect(btf.type(ids.enum64Signed as number)).toMatchObject({ values: [{ name: 'NEG', value: -2n }] });
      });
      it('bitfield members of a kind_flag struct', () => {
        expect(btf.type(ids.flags as number)).toMatchObject({
          kind: 'struct',
          members: [
            { name: 'op', bitOffset: 0, bitfieldSize: 8 },
            { name: 'sync', bitOffset: 8, bitfieldSize: 1 },
            { name: 'prio', bitOffset: 9, bitfieldSize: 3 },
            { name: '', bitOffset: 64, bitfieldSize: 0 },
          ],
        });
      });
      it('datasec vars', () => {
        expect(btf.type(ids.datasec as number)).toMatchObject({ kind: 'datasec', name: '.data', vars: [{ type: ids.var, byteOffset: 0, size: 4 }, { type: ids.staticVar, byteOffset: 4, size: 4 }] });
      });
      it('resolves typedef and qualifier chains', () => {
        expect(btf.resolve(ids.volatileU32 as number)).toBe(ids.uint);
        expect(btf.skipQualifiers(ids.volatileU32 as number)).toBe(ids.u32);
        expect(btf.resolve(ids.typeTag as number)).toBe(ids.int);
      });
      it.each([
        ['int', 4],
        ['arr', 16],
        ['ptrInt', 8],
        ['volatileU32', 4],
        ['rec', 48],
        ['enum64', 8],
        ['var', 4],
      ])('sizeOf(%s) = %d', (key, size) => {
        expect(btf.sizeOf(ids[key] as number)).toBe(size);
      });
      it('sizeOf a func is malformed', () => {
        expect(() => btf.sizeOf(ids.func as number)).toThrow(expect.objectContaining({ code: 'malformed' }));
      });
      it('finds members by name, through anonymous members', () => {
        expect(btf.member(ids.rec as number, 'state')).toMatchObject({ bitOffset: 160, indices: [2], member: { name: 'state' } });
        expect(btf.member(ids.flags as number, 'weight')).toMatchObject({ bitOffset: 64, indices: [3, 1] });
        expect(btf.member(ids.flags as number, 'missing')).toBeUndefined();
      });
      it('looks types up by name', () => {
        expect(btf.typeByName('rec', 'struct').id).toBe(ids.rec);
        expect(btf.typeIdsByName('__u32')).toEqual([ids.u32]);
        expect(() => btf.typeByName('rec', 'union')).toThrow(expect.objectContaining({ code: 'not-found' }));
      });
      it('signedness', () => {
        expect(btf.isSigned(ids.int as number)).toBe(true);
        expect(btf.isSigned(ids.volatileU32 as number)).toBe(false);
        expect(btf.isSigned(ids.enumSigned as number)).toBe(true);
      });
    });
  }
});

describe('formatBtfType', () => {
  const { b, ids } = everyKind();
  const btf = decodeBtf(b.build());
  it.each([
    ['ptrInt', 'int *'],
    ['arr', 'char[16]'],
    ['ptrArr', 'char (*)[16]'],
    ['volatileU32', 'volatile __u32'],
    ['restrictPtr', 'const char *restrict'],
    ['ptrTagged', 'int __attribute__((btf_type_tag("user"))) *'],
    ['fwd', 'struct task_struct'],
    ['fwdUnion', 'union bpf_attr'],
    ['ptrFwd', 'struct task_struct *'],
    ['proto', 'int (int *ctx, const char *fmt, ...)'],
  ])('type name of %s is %s', (key, text) => {
    expect(formatBtfTypeName(btf, ids[key] as number)).toBe(text);
  });
  it('declarations put the name where C wants it', () => {
    expect(formatBtfDeclaration(btf, ids.arr as number, 'comm')).toBe('char comm[16]');
    expect(formatBtfDeclaration(btf, ids.ptrArr as number, 'type')).toBe('char (*type)[16]');
  });
  it('prints a struct with bitfields, an anonymous union, function pointers', () => {
    expect(formatBtfType(btf, ids.flags as number)).toBe(
      ['struct flags {', '\tunsigned int op: 8;', '\tunsigned int sync: 1;', '\tint prio: 3;', '\tunion {', '\t\tunsigned int deadline;', '\t\tdouble weight;', '\t};', '};'].join('\n'),
    );
    expect(formatBtfType(btf, ids.rec as number)).toBe(
      [
        'struct rec {',
        '\tint pid;',
        '\tchar comm[16];',
        '\tvolatile __u32 state;',
        '\tconst char *restrict name;',
        '\tint __attribute__((btf_type_tag("user"))) *buf;',
        '\tint (*cb)(int *ctx, const char *fmt, ...);',
        '};',
      ].join('\n'),
    );
  });
  it.each([
    ['enumSigned', 'enum level {\n\tLOW = -1,\n\tHIGH = 7,\n};'],
    ['u32', 'typedef unsigned int __u32;'],
    ['func', 'int handle(int *ctx, const char *fmt, ...);'],
    ['staticFunc', 'static int helper(int *ctx, const char *fmt, ...);'],
    ['var', '__u32 counter;'],
    ['staticVar', 'static int seed;'],
    ['datasec', 'SEC(".data") {\n\t__u32 counter; /* offset 0, size 4 */\n\tint seed; /* offset 4, size 4 */\n}'],
    ['enum64', 'enum big {\n\tSMALL = 1,\n\tHUGE = 18446744069414584321,\n};'],
  ])('definition of %s', (key, text) => {
    expect(formatBtfType(btf, ids[key] as number)).toBe(text);
  });
});

describe('hostile BTF', () => {
  it('a typedef loop is malformed, not a hang', () => {
    const b = new BtfBuilder();
    b.typedef('a', 2);
    b.typedef('b', 1);
    const btf = decodeBtf(b.build());
    for (const f of [() => btf.resolve(1), () => btf.sizeOf(1), () => btf.member(1, 'x')]) {
      expect(f).toThrow(expect.objectContaining({ code: 'malformed' }));
    }
    // Printing stops at a typedef's name, so the loop is harmless there.
    expect(formatBtfType(btf, 1)).toBe('typedef b a;');
  });
  it('a pointer loop prints (pointers to named types stop) and an anonymous struct loop is caught', () => {
    const b = new BtfBuilder();
    const ptr = b.ptr(2);
    b.struct('', 8, [['self', ptr, 0]]);
    const btf = decodeBtf(b.build());
    expect(() => formatBtfType(btf, 2)).toThrow(expect.objectContaining({ code: 'malformed' }));
  });
  it('an array loop in sizeOf is malformed', () => {
    const b = new BtfBuilder();
    b.array(1, 0, 1);
    expect(() => decodeBtf(b.build()).sizeOf(1)).toThrow(expect.objectContaining({ code: 'malformed' }));
  });
  it('a huge array size overflows to out-of-range', () => {
    const b = new BtfBuilder();
    const int = b.int('int', 4, 1);
    const a = b.array(int, int, 0xffffffff);
    b.array(a, int, 0xffffffff);
    expect(() => decodeBtf(b.build()).sizeOf(3)).toThrow(expect.objectContaining({ code: 'out-of-range' }));
  });
  it('references past the last type are out-of-range', () => {
    const b = new BtfBuilder();
    b.ptr(99);
    const btf = decodeBtf(b.build());
    expect(() => btf.type(btf.resolve(1) === 1 ? 99 : 99)).toThrow(expect.objectContaining({ code: 'out-of-range' }));
    expect(() => btf.type(-1)).toThrow(expect.objectContaining({ code: 'out-of-range' }));
  });
  it('a name offset past the strings is out-of-range', () => {
    const b = new BtfBuilder();
    b.add({ name: 5000, kind: 1, sizeOrType: 4, extra: [32] });
    expect(() => decodeBtf(b.build()).type(1)).toThrow(expect.objectContaining({ code: 'out-of-range' }));
  });
  it('an unknown kind is malformed with the offset of its info word', () => {
    const b = new BtfBuilder();
    b.int('int', 4, 1);
    b.add({ kind: 25, sizeOrType: 0 });
    try {
      readBtf(b.build());
      expect.unreachable();
    } catch (e) {
      expect(isFormatError(e, 'malformed')).toBe(true);
      expect((e as Error).message).toBe('read btf: type 2: unknown kind 25');
      expect((e as { byteOffset: number }).byteOffset).toBe(24 + 16 + 4);
    }
  });
  it.each([
    ['bad magic', (u: Uint8Array) => u.set([0, 0], 0), 'malformed'],
    ['version 2', (u: Uint8Array) => u.set([2], 2), 'unsupported'],
    ['hdr_len 8', (u: Uint8Array) => u.set([8, 0, 0, 0], 4), 'malformed'],
    ['type_len too big', (u: Uint8Array) => u.set([0xff, 0xff, 0, 0], 12), 'out-of-range'],
    ['str_off too big', (u: Uint8Array) => u.set([0xff, 0xff, 0xff, 0x7f], 16), 'out-of-range'],
    ['type_off unaligned', (u: Uint8Array) => u.set([2, 0, 0, 0], 8), 'malformed'],
  ])('header: %s → %s', (_name, mutate, code) => {
    const b = new BtfBuilder();
    b.int('int', 4, 1);
    const bytes = b.build();
    mutate(bytes);
    expect(() => readBtf(bytes)).toThrow(expect.objectContaining({ code }));
  });
  it('a record cut in its trailing data is truncated', () => {
    const b = new BtfBuilder();
    b.add({ name: 'x', kind: 4, vlen: 1000, sizeOrType: 4, extra: [] });
    expect(() => decodeBtf(b.build())).toThrow(expect.objectContaining({ code: 'truncated' }));
  });
  it('the string section must end with NUL', () => {
    const bytes = new BtfBuilder().build();
    const b = new BtfBuilder();
    b.int('int', 4, 1);
    const built = b.build();
    built[built.length - 1] = 0x41;
    expect(() => decodeBtf(built)).toThrow(expect.objectContaining({ code: 'malformed' }));
    expect(decodeBtf(bytes).typeCount).toBe(1);
  });
  it('anonymous types fanning out exponentially hit a budget, not the memory limit', () => {
    // level k: an anonymous struct with 8 members of level k-1; printing inlines all 8^20 leaves.
    const b = new BtfBuilder();
    let cur = b.int('int', 4, 1);
    for (let k = 0; k < 20; k++) {
      const members: [string, number, number][] = [];
      for (let i = 0; i < 8; i++) members.push(['', cur, 0]);
      cur = b.struct('', 4, members);
    }
    const btf = decodeBtf(b.build());
    // Without the budget these would walk 8^20 leaves (never finish); the throw is the budget.
    expect(() => formatBtfType(btf, cur)).toThrow(expect.objectContaining({ code: 'out-of-range' }));
    expect(() => btf.member(cur, 'missing')).toThrow(expect.objectContaining({ code: 'out-of-range' }));
  });
});
