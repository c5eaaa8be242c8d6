import { describe, expect, it } from 'vitest';
import { decode } from './decode.js';
import { encode } from './encode.js';
import { IsaError, type IsaErrorCode } from './errors.js';
import { imm64 } from './instruction.js';

function hex(text: string): Uint8Array {
  const bytes = text
    .split('\n')
    .map((l) => l.replace(/\/\/.*/, '').trim())
    .join(' ')
    .trim();
  return bytes === '' ? new Uint8Array() : new Uint8Array(bytes.split(/\s+/).map((b) => Number.parseInt(b, 16)));
}

function decodeError(bytes: Uint8Array): IsaError {
  try {
    decode(bytes);
  } catch (err) {
    if (err instanceof IsaError) return err;
    throw err;
  }
  throw new Error('decode accepted the bytes');
}

describe('decode', () => {
  it('reads fields, positions and the lddw halves', () => {
    const bytes = hex(`
      61 12 38 00 00 00 00 00 // r2 = *(u32 *)(r1 + 56)
      18 01 00 00 88 77 66 55 // r1 = 0x1122334455667788 ll
      00 00 00 00 44 33 22 11
      7b 1a f0 ff 00 00 00 00 // *(u64 *)(r10 - 16) = r1
      95 00 00 00 00 00 00 00 // exit`);
    const insns = decode(bytes);
    expect(insns).toEqual([
      { opcode: 0x61, dst: 2, src: 1, offset: 56, imm: 0, insnIndex: 0, byteOffset: 0 },
      { opcode: 0x18, dst: 1, src: 0, offset: 0, imm: 0x55667788, immHi: 0x11223344, insnIndex: 1, byteOffset: 8 },
      { opcode: 0x7b, dst: 10, src: 1, offset: -16, imm: 0, insnIndex: 3, byteOffset: 24 },
      { opcode: 0x95, dst: 0, src: 0, offset: 0, imm: 0, insnIndex: 4, byteOffset: 32 },
    ]);
    expect(imm64(insns[1]!)).toBe(0x1122334455667788n);
    expect(encode(insns)).toEqual(bytes);
  });

  it('reads an empty program as no instructions', () => {
    expect(decode(new Uint8Array())).toEqual([]);
  });

  it('decodes from a view into a larger buffer', () => {
    const big = hex('ff ff 95 00 00 00 00 00 00 00 ff');
    expect(decode(big.subarray(2, 10))).toEqual([{ opcode: 0x95, dst: 0, src: 0, offset: 0, imm: 0, insnIndex: 0, byteOffset: 0 }]);
  });

  // Each row: the bytes (8 a row), the exact code, the instruction index, and a piece of the message.
  const bad: [string, string, IsaErrorCode, number, string][] = [
    ['9 bytes', '95 00 00 00 00 00 00 00 00', 'truncated', -1, '9 bytes is not a multiple of 8'],
    ['lddw without second half', '18 01 00 00 01 00 00 00', 'incomplete-lddw', 0, 'second slot is missing'],
    ['lddw second half with opcode', '18 01 00 00 01 00 00 00\n95 00 00 00 00 00 00 00', 'reserved-field', 1, 'second slot of lddw'],
    ['unknown opcode 0x8f (neg with BPF_X)', '8f 00 00 00 00 00 00 00', 'unknown-opcode', 0, 'unknown opcode: 0x8f'],
    ['unknown opcode 0xe7', 'e7 00 00 00 00 00 00 00', 'unknown-opcode', 0, '0xe7'],
    ['unknown opcode 0x00', '00 00 00 00 00 00 00 00', 'unknown-opcode', 0, '0x00'],
    ['bswap with BPF_TO_BE bit (0xdf)', 'df 01 00 00 10 00 00 00', 'unknown-opcode', 0, '0xdf'],
    ['ldxsdw does not exist (0x99)', '99 01 00 00 00 00 00 00', 'unknown-opcode', 0, '0x99'],
    ['ld abs dw (0x38)', '38 00 00 00 00 00 00 00', 'unknown-opcode', 0, '0x38'],
    ['atomic byte (0xd3)', 'd3 1a f8 ff 00 00 00 00', 'unknown-opcode', 0, '0xd3'],
    ['call in JMP32 (0x86)', '86 00 00 00 01 00 00 00', 'unknown-opcode', 0, '0x86'],
    // add64 imm with offset 1: 07 00 01 00 01 00 00 00  (r0 += 1, offset must be 0)
    ['add64 imm with offset', '07 00 01 00 01 00 00 00', 'reserved-field', 0, 'needs offset 0, got 1'],
    ['add imm with src', '04 10 00 00 01 00 00 00', 'reserved-field', 0, 'needs src 0, got 1'],
    ['add reg with imm', '0f 00 00 00 01 00 00 00', 'reserved-field', 0, 'needs imm 0, got 1'],
    ['exit with dst', '95 01 00 00 00 00 00 00', 'reserved-field', 0, 'needs dst 0, got 1'],
    ['ja with imm', '05 00 00 00 01 00 00 00', 'reserved-field', 0, 'needs imm 0, got 1'],
    ['gotol with offset', '06 00 01 00 01 00 00 00', 'reserved-field', 0, 'needs offset 0, got 1'],
    ['ldxw with imm', '61 a0 fc ff 01 00 00 00', 'reserved-field', 0, 'needs imm 0, got 1'],
    ['stw with src', '62 1a fc ff 00 00 00 00', 'reserved-field', 0, 'needs src 0, got 1'],
    ['be16 with offset', 'dc 00 01 00 10 00 00 00', 'reserved-field', 0, 'needs offset 0, got 1'],
    ['le24', 'd4 00 00 00 18 00 00 00', 'invalid-field', 0, 'byte swap width 24'],
    ['movsx offset 32 in ALU', 'bc 21 20 00 00 00 00 00', 'invalid-field', 0, 'movsx takes 8, 16'],
    ['sdiv offset 2', '3f 21 02 00 00 00 00 00', 'invalid-field', 0, 'offset 2'],
    ['atomic op 0x10', 'db 1a f8 ff 10 00 00 00', 'invalid-field', 0, 'atomic operation 0x10'],
    ['call source 3', '85 30 00 00 01 00 00 00', 'invalid-field', 0, 'call source 3'],
    ['lddw pseudo source 7', '18 71 00 00 00 00 00 00\n00 00 00 00 00 00 00 00', 'invalid-field', 0, 'pseudo source 7'],
    ['register r11', 'bf b0 00 00 00 00 00 00', 'invalid-register', 0, 'r11'],
  ];

  it.each(bad)('rejects %s', (_name, bytes, code, insnIndex, message) => {
    const err = decodeError(hex(bytes));
    expect(err.code).toBe(code);
    if (insnIndex >= 0) {
      expect(err.insnIndex).toBe(insnIndex);
      expect(err.byteOffset).toBe(insnIndex * 8);
    }
    expect(err.message).toContain(message);
  });

  it('names the failing instruction after good ones', () => {
    const err = decodeError(hex('b7 00 00 00 00 00 00 00\n18 01 00 00 00 00 00 00\n00 00 00 00 00 00 00 00\n95 01 00 00 00 00 00 00'));
    expect(err.insnIndex).toBe(3);
    expect(err.message).toBe('instruction 3 (byte 24): reserved field: opcode 0x95 needs dst 0, got 1');
  });
});

describe('encode', () => {
  it('rejects invalid fields before writing', () => {
    expect(() => encode([{ opcode: 0x07, dst: 11, src: 0, offset: 0, imm: 1 }])).toThrowError(/invalid register/);
    expect(() => encode([{ opcode: 0x07, dst: 1, src: 0, offset: 0, imm: 2 ** 31 }])).toThrowError(/signed 32-bit/);
    expect(() => encode([{ opcode: 0x05, dst: 0, src: 0, offset: 40000, imm: 0 }])).toThrowError(/signed 16-bit/);
  });
});
