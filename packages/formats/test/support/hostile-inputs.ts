// Hostile inputs shared by the robustness tests (which check what they give) and the benches
// (which print how long they take): the wall time is a figure of bench/, never a test assertion.
import { buildElf, concat, insn } from './elf-builder.js';

/** Print fmts nested or repeated far past anything real (each parses or throws a FormatError). */
export const hostilePrintFmts: readonly string[] = [
  `"%d", ${'('.repeat(100_000)}`,
  `"${'"'.repeat(50_000)}`,
  `"%d", ${'-'.repeat(100_000)}1`,
  `"${'%999999999d'.repeat(10)}", 1`,
  `"%d"${', 1'.repeat(50_000)}`,
];

/** 1 MiB of zeros and 1 MiB of 0xff: not an ELF, refused without scanning it. */
export function bigFlatInputs(): Uint8Array[] {
  return [new Uint8Array(1 << 20), new Uint8Array(1 << 20).fill(0xff)];
}

const EXIT = () => insn(0x95, 0, 0, 0, 0, true);
const LDDW = () => concat([insn(0x18, 1, 0, 0, 0, true), insn(0, 0, 0, 0, 0, true)]);
const CALL_FN = (imm: number) => insn(0x85, 0, 1, 0, imm, true);

/**
 * An object with `n` functions in .text each calling the next (the last calls back to the first),
 * and a program `main` in section `socket` with `n` map-value relocations (LDDW of `.data`) and a
 * call of `f0` by symbol: `n + 1` relocations, `n` subprograms reachable from `main`.
 */
export function callChainObject(n: number): Uint8Array {
  const text: Uint8Array[] = [];
  const symbols = [];
  for (let i = 0; i < n; i++) {
    // each function: call the next one pc-relatively (the last calls itself back to 0), exit
    text.push(i < n - 1 ? CALL_FN(1) : CALL_FN(-2 * (n - 1) - 1), EXIT());
    symbols.push({ name: `f${i}`, section: '.text', value: i * 16, size: 16, bind: 0 });
  }
  const prog: Uint8Array[] = [];
  const rels = [];
  for (let i = 0; i < n; i++) {
    prog.push(LDDW());
    rels.push({ section: 'socket', byteOffset: i * 16, type: 1, symbol: '.data' });
  }
  prog.push(CALL_FN(-1), EXIT());
  rels.push({ section: 'socket', byteOffset: n * 16, type: 10, symbol: 'f0' });
  return buildElf({
    sections: [{ name: '.text', code: true, data: concat(text) }, { name: 'socket', code: true, data: concat(prog) }, { name: '.data', flags: 3, data: new Uint8Array(8) }],
    symbols: [...symbols, { name: 'main', section: 'socket', value: 0, size: n * 16 + 16 }, { name: '.data', section: '.data', type: 3, bind: 0 }],
    rels,
  });
}
