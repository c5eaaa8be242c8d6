import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Code } from './interpreter-code.js';
import { loadProgramOrThrow } from '../program.js';

const hex = (s: string) => new Uint8Array(Buffer.from(s.replace(/\s+/g, ''), 'hex'));
const codesOf = (s: string) => Array.from(loadProgramOrThrow(hex(s), { helpers: () => true }).insn, (w) => w & 0xff);

// Each row: a program (eight bytes a slot, disassembly in the comment) and the interpreter's
// code of every slot: the first slot of a fused pair gets the superinstruction, the second
// keeps its own code (a jump may land on it).
describe('interpreterCode', () => {
  it.each([
    [
      'add-imm + jne-imm on the same register',
      `07 06 00 00 ff ff ff ff
       55 06 fe ff 00 00 00 00
       95 00 00 00 00 00 00 00`, // r6 += -1; if r6 != 0 goto -2; exit
      [Code.addImmJneImm, Code.jneImm, Code.exit],
    ],
    [
      'add-imm + jne-imm on different registers: not fused',
      `07 06 00 00 ff ff ff ff
       55 05 fe ff 00 00 00 00
       95 00 00 00 00 00 00 00`, // r6 += -1; if r5 != 0 goto -2; exit
      [Code.add64Imm, Code.jneImm, Code.exit],
    ],
    [
      'add-imm + jlt-reg, then add-imm + jeq-imm',
      `07 01 00 00 01 00 00 00
       ad 21 fe ff 00 00 00 00
       07 03 00 00 02 00 00 00
       15 03 00 00 08 00 00 00
       95 00 00 00 00 00 00 00`, // r1 += 1; if r1 < r2 goto -2; r3 += 2; if r3 == 8 goto +0; exit
      [Code.addImmJltReg, Code.jltReg, Code.addImmJeqImm, Code.jeqImm, Code.exit],
    ],
    [
      'mov + rsh and mov + lsh on the same destination',
      `bf 01 00 00 00 00 00 00
       77 01 00 00 07 00 00 00
       bf 32 00 00 00 00 00 00
       67 02 00 00 20 00 00 00
       95 00 00 00 00 00 00 00`, // r1 = r0; r1 >>= 7; r2 = r3; r2 <<= 32; exit
      [Code.movRshImm, Code.rsh64Imm, Code.movLshImm, Code.lsh64Imm, Code.exit],
    ],
    [
      'load + add of the loaded register (three widths), and one whose add reads another register',
      `71 36 00 00 00 00 00 00
       0f 60 00 00 00 00 00 00
       61 16 04 00 00 00 00 00
       0f 60 00 00 00 00 00 00
       79 16 08 00 00 00 00 00
       0f 60 00 00 00 00 00 00
       71 36 00 00 00 00 00 00
       0f 70 00 00 00 00 00 00
       95 00 00 00 00 00 00 00`, // r6 = *(u8 *)(r3 + 0); r0 += r6; (u32, u64 alike); r6 = *(u8 *)(r3 + 0); r0 += r7; exit
      [Code.ldxbAdd, Code.add64Reg, Code.ldxwAdd, Code.add64Reg, Code.ldxdwAdd, Code.add64Reg, Code.ldxb, Code.add64Reg, Code.exit],
    ],
    [
      'gotol takes its own code (offset in imm)',
      `06 00 00 00 00 00 00 00
       95 00 00 00 00 00 00 00`, // gotol +0; exit
      [Code.gotol, Code.exit],
    ],
  ])('%s', (_what, program, codes) => {
    expect(codesOf(program)).toEqual(codes);
  });

  it('packs dst, src and the signed offset beside the code', () => {
    const [w] = loadProgramOrThrow(hex('71 36 fe ff 00 00 00 00 95 00 00 00 00 00 00 00'), { helpers: () => true }).insn;
    // r6 = *(u8 *)(r3 - 2)
    expect([(w as number) & 0xff, ((w as number) >> 8) & 15, ((w as number) >> 12) & 15, (w as number) >> 16]).toEqual([
      Code.ldxb,
      6,
      3,
      -2,
    ]);
  });

  it("labels every code in the interpreter's switch with its name (the labels are literals)", () => {
    const source = readFileSync(new URL('./interpret.ts', import.meta.url), 'utf8');
    const missing = Object.entries(Code)
      .filter(([name, id]) => id !== Code.invalid && !new RegExp(`case ${id}: (?:\\{ )?// ${name}\\b`).test(source))
      .map(([name, id]) => `${id} ${name}`);
    expect(missing).toEqual([]);
  });
});
