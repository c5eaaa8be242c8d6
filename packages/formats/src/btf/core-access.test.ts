import { describe, expect, it } from 'vitest';
import { BtfBuilder } from '../../test/support/btf-builder.js';
import { decodeBtf } from './btf-spec.js';
import { parseAccessString, resolveCoreAccess } from './core-access.js';
import { CoreRelocationKind as K } from './core-relocation-kind.js';

function fixture(littleEndian = true) {
  const b = new BtfBuilder();
  const int = b.int('int', 4, 1);
  const uint = b.int('unsigned int', 4, 0);
  const ushort = b.int('unsigned short', 2, 0);
  const uchar = b.int('unsigned char', 1, 0);
  const char = b.int('char', 1, 1);
  const long = b.int('long', 8, 1);
  const comm = b.array(char, uint, 16);
  const entry = b.struct('trace_entry', 8, [['type', ushort, 0], ['flags', uchar, 16], ['preempt_count', uchar, 24], ['pid', int, 32]]);
  const rec = b.struct('trace_event_raw_sched_switch', 64, [
    ['ent', entry, 0],
    ['prev_comm', comm, 64],
    ['prev_pid', int, 192],
    ['prev_prio', int, 224],
    ['prev_state', long, 256],
  ]);
  const typedefRec = b.typedef('rec_t', rec);
  const bits = b.struct('bits', 8, [['a', uint, 0, 7], ['b', int, 7, 4], ['c', uint, 30, 6]]);
  const level = b.enum('level', 4, [['LOW', 0], ['HIGH', 9]]);
  const btf = decodeBtf(b.build(littleEndian));
  return { btf, rec, typedefRec, bits, level, entry, int };
}

describe('parseAccessString', () => {
  it.each([
    ['0', [0]],
    ['0:2:1', [0, 2, 1]],
    ['3:10', [3, 10]],
  ])('%s', (s, want) => expect(parseAccessString(s)).toEqual(want));
  it.each([[''], ['0:'], ['a'], ['0::1'], ['-1'], [`0${':1'.repeat(64)}`], ['99999999999']])('rejects %j', (s) => {
    expect(() => parseAccessString(s)).toThrow(expect.objectContaining({ code: expect.stringMatching(/malformed|out-of-range/) }));
  });
});

describe('resolveCoreAccess', () => {
  const f = fixture();
  it.each([
    ['0:2', K.FieldByteOffset, 'prev_pid', 24],
    ['0:4', K.FieldByteSize, 'prev_state', 8],
    ['0:4', K.FieldSigned, 'prev_state', 1],
    ['0:4', K.FieldExists, 'prev_state', 1],
    ['0:0:3', K.FieldByteOffset, 'ent.pid', 4],
    ['0:0:0', K.FieldSigned, 'ent.type', 0],
    ['0:1:3', K.FieldByteOffset, 'prev_comm[3]', 11],
    ['0:1', K.FieldByteSize, 'prev_comm', 16],
    ['1:2', K.FieldByteOffset, 'prev_pid', 64 + 24],
  ])('%s kind %d → %s = %d', (access, kind, path, value) => {
    const a = resolveCoreAccess(f.btf, { typeId: f.rec, accessString: access, kind });
    expect(a.fieldPath).toBe(path);
    expect(a.localValue).toBe(value);
    expect(a.rootName).toBe('trace_event_raw_sched_switch');
  });
  it('follows a typedef root', () => {
    const a = resolveCoreAccess(f.btf, { typeId: f.typedefRec, accessString: '0:2', kind: K.FieldByteOffset });
    expect(a).toMatchObject({ rootTypeId: f.rec, typeId: f.typedefRec, byteOffset: 24, byteSize: 4, signed: true });
    expect(a.steps).toEqual([{ kind: 'member', index: 2, name: 'prev_pid', structTypeId: f.rec, typeId: f.int, bitOffset: 192, bitfieldSize: 0 }]);
  });
  it.each([
    // member b: bits 7..10 of a u32 load at 0
    ['0:1', K.FieldByteOffset, 0],
    ['0:1', K.FieldByteSize, 4],
    ['0:1', K.FieldSigned, 1],
    ['0:1', K.FieldLShiftU64, 64 - 11],
    ['0:1', K.FieldRShiftU64, 60],
    // member c: bits 30..35 straddle a u32 boundary, so the load widens to 8 bytes
    ['0:2', K.FieldByteSize, 8],
    ['0:2', K.FieldByteOffset, 0],
    ['0:2', K.FieldLShiftU64, 64 - 36],
    ['0:2', K.FieldRShiftU64, 58],
  ])('bitfield %s kind %d = %d', (access, kind, value) => {
    expect(resolveCoreAccess(f.btf, { typeId: f.bits, accessString: access, kind }).localValue).toBe(value);
  });
  it('big-endian lshift counts from the top of the load (libbpf)', () => {
    const be = fixture(false);
    expect(resolveCoreAccess(be.btf, { typeId: be.bits, accessString: '0:1', kind: K.FieldLShiftU64 }).localValue).toBe(32 + 7);
  });
  it.each([
    [K.TypeExists, 1],
    [K.TypeSize, 64],
    [K.TypeIdLocal, 'rec'],
    [K.TypeMatches, 1],
  ])('type kind %d', (kind, value) => {
    const a = resolveCoreAccess(f.btf, { typeId: f.rec, accessString: '0', kind });
    expect(a.localValue).toBe(value === 'rec' ? f.rec : value);
  });
  it('enum value kinds name the enumerator', () => {
    expect(resolveCoreAccess(f.btf, { typeId: f.level, accessString: '1', kind: K.EnumvalValue })).toMatchObject({
      fieldPath: 'HIGH',
      enumerator: { name: 'HIGH', value: 9 },
      localValue: 9,
    });
    expect(resolveCoreAccess(f.btf, { typeId: f.level, accessString: '0', kind: K.EnumvalExists }).localValue).toBe(1);
  });
  it.each([
    ['member index past the struct', f.rec, '0:9', K.FieldByteOffset, 'out-of-range'],
    ['array index past the array', f.rec, '0:1:16', K.FieldByteOffset, 'out-of-range'],
    ['index into an int', f.rec, '0:2:0', K.FieldByteOffset, 'malformed'],
    ['type kind with a path', f.rec, '0:1', K.TypeSize, 'malformed'],
    ['enumerator past the enum', f.level, '5', K.EnumvalValue, 'out-of-range'],
    ['enum kind on a struct', f.rec, '0', K.EnumvalExists, 'malformed'],
    ['unknown kind', f.rec, '0', 13, 'unsupported'],
    ['type id past the end', 999, '0:1', K.FieldByteOffset, 'out-of-range'],
    ['type id 0', 0, '0', K.TypeExists, 'out-of-range'],
    ['garbage access string', f.rec, 'x:1', K.FieldByteOffset, 'malformed'],
  ])('%s → %s', (_name, typeId, accessString, kind, code) => {
    expect(() => resolveCoreAccess(f.btf, { typeId, accessString, kind })).toThrow(expect.objectContaining({ code }));
  });
});
