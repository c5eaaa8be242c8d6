// Input that is not a program gets a VerifierError; a program with bad encodings gets a
// rejection naming the instruction; any input terminates within the limits.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeInsns, isVerifierError, MAX_PROGRAM_INSNS, verify } from '../src/index.js';

const hex = (text: string) => new Uint8Array(Buffer.from(text.replace(/\s+/g, ''), 'hex'));

describe('unusable input throws VerifierError', () => {
  it.each([
    ['no instructions', new Uint8Array(0), 'malformed', 'decode program: no instructions'],
    ['7 bytes', new Uint8Array(7), 'truncated', 'decode program: 7 bytes is not a whole number of 8-byte instructions'],
    [
      'more than 1M instructions',
      new Uint8Array((MAX_PROGRAM_INSNS + 1) * 8),
      'out-of-range',
      'decode program: 1000001 instructions is more than the limit of 1000000',
    ],
  ])('%s', (_, bytes, code, message) => {
    let err: unknown;
    try {
      verify(bytes);
    } catch (e) {
      err = e;
    }
    expect(isVerifierError(err, code as 'malformed')).toBe(true);
    expect((err as Error).message).toBe(message);
  });
});

describe('bad encodings are rejections at their instruction', () => {
  it.each([
    // (ff) ???
    ['unknown opcode', 'ff00000000000000 9500000000000000', 0, 'unknown opcode ff'],
    // lddw r0, ... without its second half
    ['lddw at the end', 'b700000000000000 1800000000000000', 1, 'invalid bpf_ld_imm64 insn'],
    // r0 = 0; if r0 == 0 goto +1 (into the lddw's second half); lddw r1, 0; exit
    ['jump into an lddw', 'b700000000000000 1500010000000000 1801000000000000 0000000000000000 9500000000000000', 1, 'jump into the middle of ldimm64 insn 2'],
    // r0 = 0 with src_reg 1
    ['reserved field', 'b710000000000000 9500000000000000', 0, 'BPF_MOV uses reserved fields'],
    // r0 = 0; if r0 == 0 goto +1; r2 = *(u8 *)(r10 - 1) with imm 32 (a path never taken); exit:
    // the kernel checks every load's reserved fields before it explores
    ['load reserved field on a dead path', 'b700000000000000 1500010000000000 71a2ffff20000000 9500000000000000', 2, 'BPF_LDX uses reserved fields'],
    // r0 = 0; r0 += r11
    ['register 11', 'b700000000000000 0fb0000000000000 9500000000000000', 1, 'R11 is invalid'],
    // r0 = 0 (no exit)
    ['falls off the end', 'b700000000000000', 0, 'last insn is not an exit or jmp'],
  ])('%s', (_, text, insnIndex, message) => {
    const r = verify(hex(text));
    expect(r.ok).toBe(false);
    expect(r.diagnostics[0]).toMatchObject({ insnIndex, message });
  });
});

describe('termination', () => {
  it('random bytes: a result or a VerifierError, never a hang or another exception', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 8, maxLength: 512 }).map((b) => b.slice(0, b.length - (b.length % 8))), (bytes) => {
        if (bytes.length === 0) return;
        const r = verify(bytes, { insnLimit: 50_000, timeLimitMs: 5_000 });
        expect(typeof r.ok).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });

  it('random plausible instructions with jumps terminate within the limits', () => {
    const insn = fc.record({
      opcode: fc.constantFrom(0x07, 0x0f, 0xb7, 0xbf, 0x15, 0x55, 0xa5, 0x2d, 0x05, 0x61, 0x7b, 0x79, 0x85),
      dst: fc.integer({ min: 0, max: 9 }),
      src: fc.integer({ min: 0, max: 10 }),
      off: fc.integer({ min: -4, max: 4 }),
      imm: fc.integer({ min: -3, max: 16 }),
    });
    fc.assert(
      fc.property(fc.array(insn, { minLength: 1, maxLength: 40 }), (insns) => {
        const bytes = encodeInsns([...insns, { opcode: 0xb7, dst: 0 }, { opcode: 0x95 }]);
        const r = verify(bytes, { insnLimit: 100_000, timeLimitMs: 5_000 });
        expect(typeof r.ok).toBe('boolean');
        // within the limits: the walk stops at the instruction budget (the limit + the one that
        // crossed it); the time limit is the code's own deadline, a loaded machine may reach it first
        expect(r.stats.insnsProcessed).toBeLessThanOrEqual(100_001);
      }),
      { numRuns: 300 },
    );
  });

  it('a long straight-line program (100,000 instructions)', () => {
    const body = Array.from({ length: 99_998 }, (_, k) => ({ opcode: 0x07, dst: 0, imm: k & 7 }));
    const r = verify(encodeInsns([{ opcode: 0xb7, dst: 0 }, ...body, { opcode: 0x95 }]));
    expect(r.ok).toBe(true);
    expect(r.stats.insnsProcessed).toBe(100_000);
  });

  it('the time limit rejects instead of hanging', () => {
    // r0 = 0; loop: r0 += 1; if r0 != 0 goto loop; exit
    const bytes = hex('b700000000000000 0700000001000000 5500feff00000000 9500000000000000');
    const r = verify(bytes, { timeLimitMs: 50 });
    expect(r.ok).toBe(false);
    expect(r.diagnostics[0]!.message).toBe('verification time limit of 50 ms exceeded');
  });
});
