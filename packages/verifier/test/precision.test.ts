// Precision must never make pruning unsafe: on random branchy programs that keep values in
// registers and stack slots (stored, read back, used as map value offsets, branch conditions or
// array keys, read through copied stack pointers, passed through a subprogram), every program
// accepted with precision is also accepted
// when every scalar is compared by range (`precision: false`), and the precision run never
// processes more instructions.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeInsns, type MapDef, type RawInsn, verify } from '../src/index.js';

const MAPS: MapDef[] = [
  { type: 1, keySize: 4, valueSize: 16, maxEntries: 4 },
  // an array: a lookup with a constant key in range is not null
  { type: 2, keySize: 4, valueSize: 16, maxEntries: 4 },
];
const reg = fc.integer({ min: 6, max: 9 });
const slot = fc.integer({ min: 1, max: 4 }).map((k) => -8 * k);

/**
 * Snippets as instruction lists; `j` is a forward jump patched to a target later, `sub` a call
 * of the subprogram appended after the main program (`r0 = r1; r0 &= 31; exit`).
 */
type Snippet = (RawInsn & { j?: number; sub?: boolean })[];
const snippet: fc.Arbitrary<Snippet> = fc.oneof(
  fc.constant<Snippet>([{ opcode: 0x85, imm: 7 }]), // call bpf_get_prandom_u32
  fc.tuple(reg, fc.integer({ min: 0, max: 40 })).map(([d, imm]): Snippet => [{ opcode: 0xb7, dst: d, imm }]), // rD = imm
  reg.map((d): Snippet => [{ opcode: 0xbf, dst: d, src: 0 }]), // rD = r0
  reg.map((d): Snippet => [{ opcode: 0x57, dst: d, imm: 15 }]), // rD &= 15
  fc.tuple(reg, slot, fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 20 })).map(([d, off, a, b]): Snippet => [
    // two sides that store different values in one slot
    { opcode: 0x85, imm: 7 },
    { opcode: 0xb7, dst: d, imm: a },
    { opcode: 0x25, dst: 0, imm: 5, off: 1 },
    { opcode: 0xb7, dst: d, imm: b },
    { opcode: 0x7b, dst: 10, src: d, off },
  ]),
  fc.tuple(reg, fc.integer({ min: 0, max: 20 }), fc.integer({ min: 1, max: 6 })).map(([d, imm, j]): Snippet => [
    { opcode: 0x25, dst: d, imm, j }, // if rD > imm goto +j
  ]),
  fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 1, max: 6 })).map(([imm, j]): Snippet => [{ opcode: 0x25, dst: 0, imm, j }]),
  fc.tuple(reg, slot).map(([s, off]): Snippet => [{ opcode: 0x7b, dst: 10, src: s, off }]), // *(u64 *)(r10 + off) = rS
  fc.tuple(reg, slot).map(([d, off]): Snippet => [{ opcode: 0x79, dst: d, src: 10, off }]), // rD = *(u64 *)(r10 + off)
  fc.tuple(reg, slot).map(([d, off]): Snippet => [
    // through a copied stack pointer
    { opcode: 0xbf, dst: 2, src: 10 },
    { opcode: 0x07, dst: 2, imm: off },
    { opcode: 0x79, dst: d, src: 2, off: 0 },
  ]),
  fc.tuple(reg, slot).map(([s, off]): Snippet => [
    { opcode: 0xbf, dst: 2, src: 10 },
    { opcode: 0x07, dst: 2, imm: off },
    { opcode: 0x7b, dst: 2, src: s, off: 0 },
  ]),
  reg.map((d): Snippet => [
    // rD through a subprogram and back
    { opcode: 0xbf, dst: 1, src: d },
    { opcode: 0x85, src: 1, sub: true },
    { opcode: 0xbf, dst: d, src: 0 },
  ]),
  reg.map((d): Snippet => [
    // rD as a 32-bit array key (zero bytes when rD is 0), the value read without a null check:
    // safe only when the key is known in range
    { opcode: 0x63, dst: 10, src: d, off: -40 },
    { opcode: 0xbf, dst: 2, src: 10 },
    { opcode: 0x07, dst: 2, imm: -40 },
    { opcode: 0x18, dst: 1, src: 1, imm: 1 },
    { opcode: 0x00 },
    { opcode: 0x85, imm: 1 },
    { opcode: 0x71, dst: 1, src: 0, off: 0 },
  ]),
  reg.map((d): Snippet => [
    // the same with an 8-byte key slot (a spilled constant when rD is known)
    { opcode: 0x7b, dst: 10, src: d, off: -40 },
    { opcode: 0xbf, dst: 2, src: 10 },
    { opcode: 0x07, dst: 2, imm: -40 },
    { opcode: 0x18, dst: 1, src: 1, imm: 1 },
    { opcode: 0x00 },
    { opcode: 0x85, imm: 1 },
    { opcode: 0x71, dst: 1, src: 0, off: 0 },
  ]),
  reg.map((d): Snippet => [
    // look up key 0 and read the value at offset rD
    { opcode: 0x62, dst: 10, off: -40, imm: 0 },
    { opcode: 0xbf, dst: 2, src: 10 },
    { opcode: 0x07, dst: 2, imm: -40 },
    { opcode: 0x18, dst: 1, src: 1, imm: 0 },
    { opcode: 0x00 },
    { opcode: 0x85, imm: 1 },
    { opcode: 0x15, dst: 0, off: 3 },
    { opcode: 0x0f, dst: 0, src: d },
    { opcode: 0x71, dst: 1, src: 0, off: 0 },
    { opcode: 0x05, off: 0 },
  ]),
);

function build(snippets: Snippet[]): Uint8Array {
  const insns: Snippet = [];
  for (const r of [6, 7, 8, 9]) insns.push({ opcode: 0xb7, dst: r, imm: 0 });
  for (let k = 1; k <= 5; k++) insns.push({ opcode: 0x7a, dst: 10, off: -8 * k, imm: 0 }); // *(u64 *)(r10 - 8k) = 0
  for (const s of snippets) insns.push(...s.map((x) => ({ ...x })));
  const end = insns.length;
  insns.push({ opcode: 0xb7, dst: 0, imm: 0 }, { opcode: 0x95 });
  const sub = insns.length;
  const calls = insns.some((x) => x.sub);
  if (calls) insns.push({ opcode: 0xbf, dst: 0, src: 1 }, { opcode: 0x57, dst: 0, imm: 31 }, { opcode: 0x95 });
  return encodeInsns(
    insns.map((x, i) => {
      const { j, sub: isCall, ...rest } = x;
      if (isCall) return { ...rest, imm: sub - i - 1 };
      if (j === undefined) return rest;
      return { ...rest, off: Math.min(j, end - i - 1) };
    }),
  );
}

describe('precision keeps pruning safe', () => {
  it('accepted with precision ⇒ accepted without, with no more instructions processed', () => {
    let pruned = 0;
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(snippet, { minLength: 4, maxLength: 30 }), (snippets) => {
        const bytes = build(snippets);
        const withIt = verify(bytes, { maps: MAPS, insnLimit: 200_000 });
        const without = verify(bytes, { maps: MAPS, insnLimit: 200_000, precision: false });
        if (withIt.ok) expect(without.diagnostics).toEqual([]);
        if (withIt.ok && without.ok) {
          accepted++;
          expect(withIt.stats.insnsProcessed).toBeLessThanOrEqual(without.stats.insnsProcessed);
          if (withIt.stats.insnsProcessed < without.stats.insnsProcessed) pruned++;
        }
      }),
      { numRuns: 2000, seed: 20261129 },
    );
    // the property is only worth something if precision actually pruned in some programs
    console.log(`precision property: ${accepted} accepted, precision pruned more in ${pruned}`);
    expect(pruned).toBeGreaterThan(20);
  });
});
