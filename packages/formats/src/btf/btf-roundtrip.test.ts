// decode(build(types)) = types, for random type tables of every kind in either byte order.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { BtfBuilder } from '../../test/support/btf-builder.js';
import { decodeBtf } from './btf-spec.js';
import type { BtfType } from './btf-type.js';

type Gen = (n: number) => fc.Arbitrary<{ write: (b: BtfBuilder) => void; want: (id: number) => BtfType }>;

const name = fc.oneof(fc.constant(''), fc.stringMatching(/^[a-z_][a-z0-9_]{0,10}$/));
const nonEmptyName = fc.stringMatching(/^[a-z_][a-z0-9_]{0,10}$/);
const u32 = fc.nat({ max: 0xffffffff });
const linkage = fc.constantFrom(0, 1, 2);
const linkageName = (l: number) => (['static', 'global', 'extern'] as const)[l] as 'static' | 'global' | 'extern';

const gens: Gen[] = [
  () =>
    fc.record({ name: nonEmptyName, size: fc.constantFrom(1, 2, 4, 8, 16), enc: fc.constantFrom(0, 1, 2, 4), bitsPart: fc.nat({ max: 128 }) }).map((r) => {
      const bits = Math.min(r.bitsPart, r.size * 8);
      return {
        write: (b: BtfBuilder) => void b.int(r.name, r.size, r.enc, bits),
        want: (id: number) => ({ kind: 'int', id, name: r.name, size: r.size, signed: (r.enc & 1) !== 0, char: (r.enc & 2) !== 0, bool: (r.enc & 4) !== 0, bitOffset: 0, bits }),
      };
    }),
  (n) =>
    fc.record({ kind: fc.constantFrom('ptr', 'typedef', 'volatile', 'const', 'restrict', 'type_tag'), ref: fc.nat({ max: n }), name: nonEmptyName }).map((r) => ({
      write: (b: BtfBuilder) => {
        if (r.kind === 'ptr') b.ptr(r.ref);
        else if (r.kind === 'typedef') b.typedef(r.name, r.ref);
        else if (r.kind === 'type_tag') b.typeTag(r.name, r.ref);
        else b.qualifier(r.kind as 'const', r.ref);
      },
      want: (id: number) => ({ kind: r.kind, id, name: r.kind === 'typedef' || r.kind === 'type_tag' ? r.name : '', type: r.ref }) as BtfType,
    })),
  (n) =>
    fc.record({ elem: fc.nat({ max: n }), index: fc.nat({ max: n }), nelems: u32 }).map((r) => ({
      write: (b: BtfBuilder) => void b.array(r.elem, r.index, r.nelems),
      want: (id: number) => ({ kind: 'array', id, name: '', type: r.elem, indexType: r.index, nelems: r.nelems }),
    })),
  (n) =>
    fc
      .record({
        name,
        union: fc.boolean(),
        size: u32,
        bitfields: fc.boolean(),
        members: fc.array(fc.record({ name, ref: fc.nat({ max: n }), bitOffset: fc.nat({ max: 0xffffff }), bitfield: fc.nat({ max: 255 }) }), { maxLength: 6 }),
      })
      .map((r) => ({
        write: (b: BtfBuilder) =>
          void b.struct(
            r.name,
            r.size,
            r.members.map((m) => (r.bitfields ? [m.name, m.ref, m.bitOffset, m.bitfield] : [m.name, m.ref, m.bitOffset])),
            r.union,
          ),
        want: (id: number) =>
          ({
            kind: r.union ? 'union' : 'struct',
            id,
            name: r.name,
            size: r.size,
            members: r.members.map((m) => ({ name: m.name, type: m.ref, bitOffset: m.bitOffset, bitfieldSize: r.bitfields ? m.bitfield : 0 })),
          }) as BtfType,
      })),
  () =>
    fc.record({ name, signed: fc.boolean(), values: fc.array(fc.tuple(nonEmptyName, fc.integer({ min: -0x80000000, max: 0x7fffffff })), { maxLength: 5 }) }).map((r) => ({
      write: (b: BtfBuilder) => void b.enum(r.name, 4, r.values, r.signed),
      want: (id: number) => ({ kind: 'enum', id, name: r.name, size: 4, signed: r.signed, values: r.values.map(([n, v]) => ({ name: n, value: r.signed ? v : v >>> 0 })) }),
    })),
  () =>
    fc.record({ name, signed: fc.boolean(), values: fc.array(fc.tuple(nonEmptyName, fc.bigInt({ min: -(1n << 63n), max: (1n << 64n) - 1n })), { maxLength: 5 }) }).map((r) => ({
      write: (b: BtfBuilder) => void b.enum64(r.name, r.values, r.signed),
      want: (id: number) => ({
        kind: 'enum64',
        id,
        name: r.name,
        size: 8,
        signed: r.signed,
        values: r.values.map(([n, v]) => {
          const u = BigInt.asUintN(64, v);
          return { name: n, value: r.signed ? BigInt.asIntN(64, u) : u, lo32: Number(u & 0xffffffffn), hi32: Number(u >> 32n) };
        }),
      }),
    })),
  () =>
    fc.record({ name: nonEmptyName, union: fc.boolean() }).map((r) => ({
      write: (b: BtfBuilder) => void b.fwd(r.name, r.union),
      want: (id: number) => ({ kind: 'fwd', id, name: r.name, fwdKind: r.union ? 'union' : 'struct' }),
    })),
  (n) =>
    fc.record({ name: nonEmptyName, proto: fc.nat({ max: n }), linkage }).map((r) => ({
      write: (b: BtfBuilder) => void b.func(r.name, r.proto, r.linkage),
      want: (id: number) => ({ kind: 'func', id, name: r.name, type: r.proto, linkage: linkageName(r.linkage) }),
    })),
  (n) =>
    fc.record({ ret: fc.nat({ max: n }), variadic: fc.boolean(), params: fc.array(fc.tuple(nonEmptyName, fc.nat({ max: n })), { maxLength: 4 }) }).map((r) => ({
      write: (b: BtfBuilder) => void b.funcProto(r.ret, r.variadic ? [...r.params, ['', 0]] : r.params),
      want: (id: number) => ({ kind: 'func_proto', id, name: '', returnType: r.ret, params: r.params.map(([n, t]) => ({ name: n, type: t })), variadic: r.variadic }),
    })),
  (n) =>
    fc.record({ name: nonEmptyName, ref: fc.nat({ max: n }), linkage }).map((r) => ({
      write: (b: BtfBuilder) => void b.variable(r.name, r.ref, r.linkage),
      want: (id: number) => ({ kind: 'var', id, name: r.name, type: r.ref, linkage: linkageName(r.linkage) }),
    })),
  (n) =>
    fc.record({ name: nonEmptyName, size: u32, vars: fc.array(fc.tuple(fc.nat({ max: n }), u32, u32), { maxLength: 4 }) }).map((r) => ({
      write: (b: BtfBuilder) => void b.datasec(r.name, r.size, r.vars),
      want: (id: number) => ({ kind: 'datasec', id, name: r.name, size: r.size, vars: r.vars.map(([type, byteOffset, size]) => ({ type, byteOffset, size })) }),
    })),
  () =>
    fc.record({ name: nonEmptyName, size: fc.constantFrom(2, 4, 8, 12, 16) }).map((r) => ({
      write: (b: BtfBuilder) => void b.float(r.name, r.size),
      want: (id: number) => ({ kind: 'float', id, name: r.name, size: r.size }),
    })),
  (n) =>
    fc.record({ name: nonEmptyName, ref: fc.nat({ max: n }), idx: fc.integer({ min: -1, max: 20 }) }).map((r) => ({
      write: (b: BtfBuilder) => void b.declTag(r.name, r.ref, r.idx),
      want: (id: number) => ({ kind: 'decl_tag', id, name: r.name, type: r.ref, componentIdx: r.idx }),
    })),
];

const table = fc.integer({ min: 1, max: 24 }).chain((n) => fc.array(fc.oneof(...gens.map((g) => g(n))), { minLength: n, maxLength: n }));

it('decodeBtf(build(types)) gives back every type, both byte orders', () => {
  fc.assert(
    fc.property(table, fc.boolean(), (types, littleEndian) => {
      const b = new BtfBuilder();
      for (const t of types) t.write(b);
      const btf = decodeBtf(b.build(littleEndian));
      expect(btf.typeCount).toBe(types.length + 1);
      types.forEach((t, i) => {
        expect(btf.type(i + 1)).toEqual(t.want(i + 1));
      });
    }),
    { numRuns: 300 },
  );
});
