import { describe, expect, it } from 'vitest';
import { assembleInstructions } from './assembler/assemble.js';
import { decode } from './decode.js';
import { encode } from './encode.js';
import { disassemble, formatInstruction } from './format.js';
import { conformanceGroupOf, isaVersionOf } from './info.js';

function hex(text: string): Uint8Array {
  return new Uint8Array(text.trim().split(/\s+/).map((b) => Number.parseInt(b, 16)));
}

// One instruction a row: its bytes (8 a row; lddw takes two rows), the LLVM text (llvm-objdump's,
// LLVM 17+ where objdump 14 knows no text), the conformance text, conformance group and ISA version.
const rows: [string, string, string, string, string][] = [
  ['07 01 00 00 2a 00 00 00', 'r1 += 42', 'add %r1, 42', 'base64', 'v1'],
  ['0f 21 00 00 00 00 00 00', 'r1 += r2', 'add %r1, %r2', 'base64', 'v1'],
  ['04 01 00 00 fd ff ff ff', 'w1 += -3', 'add32 %r1, -3', 'base32', 'v1'],
  ['1c 21 00 00 00 00 00 00', 'w1 -= w2', 'sub32 %r1, %r2', 'base32', 'v1'],
  ['27 01 00 00 03 00 00 00', 'r1 *= 3', 'mul %r1, 3', 'divmul64', 'v1'],
  ['34 01 00 00 03 00 00 00', 'w1 /= 3', 'div32 %r1, 3', 'divmul32', 'v1'],
  ['3f 21 01 00 00 00 00 00', 'r1 s/= r2', 'sdiv %r1, %r2', 'divmul64', 'v4'],
  ['94 01 01 00 07 00 00 00', 'w1 s%= 7', 'smod32 %r1, 7', 'divmul32', 'v4'],
  ['9f 21 00 00 00 00 00 00', 'r1 %= r2', 'mod %r1, %r2', 'divmul64', 'v1'],
  ['47 01 00 00 01 00 00 00', 'r1 |= 1', 'or %r1, 1', 'base64', 'v1'],
  ['5c 21 00 00 00 00 00 00', 'w1 &= w2', 'and32 %r1, %r2', 'base32', 'v1'],
  ['67 01 00 00 20 00 00 00', 'r1 <<= 32', 'lsh %r1, 32', 'base64', 'v1'],
  ['7c 21 00 00 00 00 00 00', 'w1 >>= w2', 'rsh32 %r1, %r2', 'base32', 'v1'],
  ['87 01 00 00 00 00 00 00', 'r1 = -r1', 'neg %r1', 'base64', 'v1'],
  ['84 03 00 00 00 00 00 00', 'w3 = -w3', 'neg32 %r3', 'base32', 'v1'],
  ['a7 01 00 00 ff ff ff ff', 'r1 ^= -1', 'xor %r1, -1', 'base64', 'v1'],
  ['b7 00 00 00 00 00 00 80', 'r0 = -2147483648', 'mov %r0, -2147483648', 'base64', 'v1'],
  ['bc 21 00 00 00 00 00 00', 'w1 = w2', 'mov32 %r1, %r2', 'base32', 'v1'],
  ['bf 21 08 00 00 00 00 00', 'r1 = (s8)r2', 'movsx864 %r1, %r2', 'base64', 'v4'],
  ['bf 21 20 00 00 00 00 00', 'r1 = (s32)r2', 'movsx3264 %r1, %r2', 'base64', 'v4'],
  ['bc 21 10 00 00 00 00 00', 'w1 = (s16)w2', 'movsx1632 %r1, %r2', 'base32', 'v4'],
  ['c7 01 00 00 03 00 00 00', 'r1 s>>= 3', 'arsh %r1, 3', 'base64', 'v1'],
  ['cc 21 00 00 00 00 00 00', 'w1 s>>= w2', 'arsh32 %r1, %r2', 'base32', 'v1'],
  ['d4 01 00 00 10 00 00 00', 'r1 = le16 r1', 'le16 %r1', 'base32', 'v1'],
  ['dc 01 00 00 40 00 00 00', 'r1 = be64 r1', 'be64 %r1', 'base32', 'v1'],
  ['d7 01 00 00 20 00 00 00', 'r1 = bswap32 r1', 'bswap32 %r1', 'base64', 'v4'],
  ['18 01 00 00 88 77 66 55 00 00 00 00 44 33 22 11', 'r1 = 1234605616436508552 ll', 'lddw %r1, 0x1122334455667788', 'base64', 'v1'],
  ['18 01 00 00 ff ff ff ff 00 00 00 00 ff ff ff ff', 'r1 = -1 ll', 'lddw %r1, 0xffffffffffffffff', 'base64', 'v1'],
  ['18 11 00 00 03 00 00 00 00 00 00 00 00 00 00 00', 'ld_pseudo\tr1, 1, 3', 'lddw %r1, map_fd 3', 'base64', 'v1'],
  ['18 21 00 00 03 00 00 00 00 00 00 00 10 00 00 00', 'ld_pseudo\tr1, 2, 3, 16', 'lddw %r1, map_value 3, 16', 'base64', 'v1'],
  ['18 61 00 00 00 00 00 00 00 00 00 00 08 00 00 00', 'ld_pseudo\tr1, 6, 0, 8', 'lddw %r1, map_idx_value 0, 8', 'base64', 'v1'],
  ['30 00 00 00 0c 00 00 00', 'r0 = *(u8 *)skb[12]', 'ldabsb 12', 'packet', 'v1'],
  ['48 10 00 00 00 00 00 00', 'r0 = *(u16 *)skb[r1]', 'ldindh %r1, 0', 'packet', 'v1'],
  ['40 10 00 00 04 00 00 00', 'r0 = *(u32 *)skb[r1 + 4]', 'ldindw %r1, 4', 'packet', 'v1'],
  ['61 12 38 00 00 00 00 00', 'r2 = *(u32 *)(r1 + 56)', 'ldxw %r2, [%r1+56]', 'base32', 'v1'],
  ['79 a0 f8 ff 00 00 00 00', 'r0 = *(u64 *)(r10 - 8)', 'ldxdw %r0, [%r10-8]', 'base64', 'v1'],
  ['71 10 00 00 00 00 00 00', 'r0 = *(u8 *)(r1 + 0)', 'ldxb %r0, [%r1]', 'base32', 'v1'],
  ['91 21 04 00 00 00 00 00', 'r1 = *(s8 *)(r2 + 4)', 'ldxsb %r1, [%r2+4]', 'base64', 'v4'],
  ['81 a1 fc ff 00 00 00 00', 'r1 = *(s32 *)(r10 - 4)', 'ldxsw %r1, [%r10-4]', 'base64', 'v4'],
  ['62 0a fc ff 05 00 00 00', '*(u32 *)(r10 - 4) = 5', 'stw [%r10-4], 5', 'base32', 'v1'],
  ['7a 0a f8 ff fb ff ff ff', '*(u64 *)(r10 - 8) = -5', 'stdw [%r10-8], -5', 'base64', 'v1'],
  ['73 1a ff ff 00 00 00 00', '*(u8 *)(r10 - 1) = r1', 'stxb [%r10-1], %r1', 'base32', 'v1'],
  ['7b 1a f0 ff 00 00 00 00', '*(u64 *)(r10 - 16) = r1', 'stxdw [%r10-16], %r1', 'base64', 'v1'],
  ['db 1a f8 ff 00 00 00 00', 'lock *(u64 *)(r10 - 8) += r1', 'lock add [%r10-8], %r1', 'atomic64', 'v1'],
  ['c3 1a f8 ff 00 00 00 00', 'lock *(u32 *)(r10 - 8) += r1', 'lock add32 [%r10-8], %r1', 'atomic32', 'v1'],
  ['c3 1a f8 ff 40 00 00 00', 'lock *(u32 *)(r10 - 8) |= w1', 'lock or32 [%r10-8], %r1', 'atomic32', 'v3'],
  ['db 1a f8 ff 51 00 00 00', 'r1 = atomic_fetch_and((u64 *)(r10 - 8), r1)', 'lock fetch and [%r10-8], %r1', 'atomic64', 'v3'],
  ['c3 1a f8 ff a1 00 00 00', 'w1 = atomic_fetch_xor((u32 *)(r10 - 8), w1)', 'lock fetch xor32 [%r10-8], %r1', 'atomic32', 'v3'],
  ['db 26 20 00 e1 00 00 00', 'r2 = xchg_64(r6 + 32, r2)', 'lock xchg [%r6+32], %r2', 'atomic64', 'v3'],
  ['c3 76 44 00 f1 00 00 00', 'w0 = cmpxchg32_32(r6 + 68, w0, w7)', 'lock cmpxchg32 [%r6+68], %r7', 'atomic32', 'v3'],
  ['05 00 02 00 00 00 00 00', 'goto +2', 'ja +2', 'base32', 'v1'],
  ['05 00 ff ff 00 00 00 00', 'goto -1', 'ja -1', 'base32', 'v1'],
  ['06 00 00 00 00 00 01 00', 'gotol +65536', 'ja32 +65536', 'base32', 'v4'],
  ['15 01 03 00 00 00 00 00', 'if r1 == 0 goto +3', 'jeq %r1, 0, +3', 'base64', 'v1'],
  ['2d 21 fe ff 00 00 00 00', 'if r1 > r2 goto -2', 'jgt %r1, %r2, -2', 'base64', 'v1'],
  ['45 01 01 00 04 00 00 00', 'if r1 & 4 goto +1', 'jset %r1, 4, +1', 'base64', 'v1'],
  ['a5 01 01 00 0a 00 00 00', 'if r1 < 10 goto +1', 'jlt %r1, 10, +1', 'base64', 'v2'],
  ['de 21 01 00 00 00 00 00', 'if w1 s<= w2 goto +1', 'jsle32 %r1, %r2, +1', 'base32', 'v3'],
  ['66 01 00 00 ff ff ff ff', 'if w1 s> -1 goto +0', 'jsgt32 %r1, -1, +0', 'base32', 'v3'],
  ['85 00 00 00 0e 00 00 00', 'call 14', 'call 14', 'base32', 'v1'],
  ['85 10 00 00 ff ff ff ff', 'call -1', 'call local -1', 'base32', 'v1'],
  ['85 10 00 00 05 00 00 00', 'call pc+5', 'call local +5', 'base32', 'v1'],
  ['85 20 00 00 39 30 00 00', 'call kfunc 12345', 'call runtime 12345', 'base32', 'v1'],
  ['8d 02 00 00 00 00 00 00', 'callx r2', 'call %r2', 'base32', 'v1'],
  ['95 00 00 00 00 00 00 00', 'exit', 'exit', 'base32', 'v1'],
];

describe('instruction table', () => {
  it.each(rows)('%s  %s', (bytes, llvm, conformance, group, version) => {
    const insns = decode(hex(bytes));
    expect(insns).toHaveLength(1);
    const insn = insns[0]!;
    expect(formatInstruction(insn)).toBe(llvm);
    expect(formatInstruction(insn, { syntax: 'conformance' })).toBe(conformance);
    expect(conformanceGroupOf(insn)).toBe(group);
    expect(isaVersionOf(insn)).toBe(version);
    expect(encode(assembleInstructions(llvm, { syntax: 'llvm' }))).toEqual(hex(bytes));
    expect(encode(assembleInstructions(conformance, { syntax: 'conformance' }))).toEqual(hex(bytes));
    expect(encode(assembleInstructions(llvm))).toEqual(hex(bytes));
    expect(encode(assembleInstructions(conformance))).toEqual(hex(bytes));
  });

  it('names helpers in comments when asked', () => {
    const [insn] = decode(hex('85 00 00 00 83 00 00 00'));
    expect(formatInstruction(insn!, { helperComments: true })).toBe('call 131 # bpf_ringbuf_reserve');
    expect(encode(assembleInstructions('call 131 # bpf_ringbuf_reserve'))).toEqual(hex('85 00 00 00 83 00 00 00'));
  });

  it('names jump targets when asked', () => {
    const insns = assembleInstructions('r0 = 0\nloop:\nr0 += 1\nif r0 < 10 goto loop\ncall local f\ngoto +1\nexit\nf:\nexit');
    expect(disassemble(insns, { labels: true })).toBe('r0 = 0\nL1:\nr0 += 1\nif r0 < 10 goto L1\ncall L6\ngoto L6\nexit\nL6:\nexit\n');
    expect(disassemble(insns, { syntax: 'conformance', labels: true })).toBe(
      'mov %r0, 0\nL1:\nadd %r0, 1\njlt %r0, 10, L1\ncall local L6\nja L6\nexit\nL6:\nexit\n',
    );
  });

  it('disassembles a program one line per instruction', () => {
    const bytes = hex(`
      b7 00 00 00 00 00 00 00
      18 01 00 00 01 00 00 00 00 00 00 00 00 00 00 00
      95 00 00 00 00 00 00 00`);
    expect(disassemble(decode(bytes))).toBe('r0 = 0\nr1 = 1 ll\nexit\n');
    expect(disassemble(decode(bytes), { syntax: 'conformance' })).toBe('mov %r0, 0\nlddw %r1, 0x1\nexit\n');
  });
});
