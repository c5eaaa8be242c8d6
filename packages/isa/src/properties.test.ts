// Round-trip properties over random valid programs (fast-check).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assemble, assembleInstructions } from './assembler/assemble.js';
import { decode } from './decode.js';
import { encode } from './encode.js';
import { disassemble } from './format.js';
import { type InstructionFields, placeInstructions } from './instruction.js';
import { checkInstruction } from './validate.js';

/** Every opcode byte that some instruction uses. */
const validOpcodes = Array.from({ length: 256 }, (_, op) => op).filter(
  (opcode) => normalize({ opcode, dst: 1, src: 2, offset: 0, imm: 0, immHi: 0 }) !== undefined,
);

/** Variants of fields to try when making random fields valid for their opcode. */
function candidates(f: InstructionFields): InstructionFields[] {
  const out: InstructionFields[] = [f];
  const pick = <T>(xs: readonly T[], n: number) => xs[Math.abs(n) % xs.length]!;
  out.push({ ...f, imm: pick([16, 32, 64], f.imm) });
  out.push({ ...f, offset: pick([0, 8, 16, 32], f.offset) });
  out.push({ ...f, offset: pick([0, 8, 16], f.offset) });
  out.push({ ...f, offset: f.offset & 1 });
  out.push({ ...f, imm: pick([0x00, 0x01, 0x40, 0x41, 0x50, 0x51, 0xa0, 0xa1, 0xe1, 0xf1], f.imm) });
  out.push({ ...f, src: f.src % 3 });
  out.push({ ...f, src: f.src % 7 });
  return out;
}

/** Makes random fields valid for their opcode by zeroing reserved fields and picking allowed values. */
function normalize(raw: InstructionFields): InstructionFields | undefined {
  let f: InstructionFields = { ...raw };
  if (f.opcode !== 0x18) delete f.immHi;
  for (let round = 0; round < 6; round++) {
    const problem = checkInstruction(f);
    if (!problem) return f;
    if (problem.code === 'reserved-field') {
      const m = /needs (\w+) 0/.exec(problem.message);
      const field = m?.[1] as 'dst' | 'src' | 'offset' | 'imm' | undefined;
      if (!field) return undefined;
      f = { ...f, [field]: 0 };
      continue;
    }
    const fixed = candidates(f).find((c) => !checkInstruction(c));
    if (!fixed) return undefined;
    f = fixed;
  }
  return checkInstruction(f) ? undefined : f;
}

const instruction = fc
  .record({
    opcode: fc.constantFrom(...validOpcodes),
    dst: fc.integer({ min: 0, max: 10 }),
    src: fc.integer({ min: 0, max: 10 }),
    offset: fc.oneof(fc.integer({ min: -0x8000, max: 0x7fff }), fc.constantFrom(0, 1, -1, 8, 16, 32)),
    imm: fc.oneof(fc.integer({ min: -0x80000000, max: 0x7fffffff }), fc.constantFrom(0, 1, -1, 16, 32, 64, 0x41)),
    immHi: fc.integer({ min: -0x80000000, max: 0x7fffffff }),
  })
  .map(normalize)
  .filter((f): f is InstructionFields => f !== undefined);

const program = fc.array(instruction, { minLength: 1, maxLength: 40 });

describe('round-trip properties', () => {
  it('covers every opcode', () => {
    // ALU 27, ALU64 26, JMP 26 (with callx), JMP32 23, LD 7, LDX 7, ST 4, STX 6.
    expect(validOpcodes.length).toBe(126);
  });

  it('decode(encode(p)) = p', () => {
    fc.assert(
      fc.property(program, (p) => {
        expect(decode(encode(p))).toEqual(placeInstructions(p));
      }),
      { numRuns: 500 },
    );
  });

  it.each(['llvm', 'conformance'] as const)('assemble(disassemble(p)) = p in the %s syntax', (syntax) => {
    fc.assert(
      fc.property(program, (p) => {
        const text = disassemble(p, { syntax });
        expect(assembleInstructions(text, { syntax })).toEqual(placeInstructions(p));
        // Without a syntax, `call -1` is a local call (src 1) as in LLVM's; a helper call with a
        // negative id (src 0) reads the same in the conformance syntax, so only its own syntax
        // can tell (seed -921591904 found one).
        const ambiguous = syntax === 'conformance' && p.some((f) => f.opcode === 0x85 && f.src === 0 && f.imm < 0);
        if (!ambiguous) expect(assembleInstructions(text)).toEqual(placeInstructions(p));
        const labelled = disassemble(p, { syntax, labels: true });
        expect(assembleInstructions(labelled, { syntax })).toEqual(placeInstructions(p));
      }),
      { numRuns: 500 },
    );
  });
});

describe('malformed input', () => {
  const isaErrorOnly = (run: () => unknown) => {
    try {
      run();
    } catch (err) {
      expect((err as Error).name).toBe('IsaError');
    }
  };

  it('decode of arbitrary bytes returns or throws IsaError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => isaErrorOnly(() => decode(bytes))),
      { numRuns: 2000 },
    );
  });

  const token = fc.constantFrom(
    'r1', 'w2', '%r3', 'r11', '=', '+=', 's/=', '*(u32 *)', '(r1 + 4)', '[%r1+4]', '[r1 + ev.f]', 'll', 'goto', 'if', '>',
    '+1', '-1', 'lbl', 'lbl:', ',', 'lock', 'fetch', 'add', 'call', 'local', 'exit', 'lddw', 'ldxw', 'mov32', 'jeq',
    '0x7fffffff', '99999999999', '.map', '.section', 'tp/a/b', '.license', '"GPL"', 'hash', 'key=4', '#', ';', '(', ')', '[', ']',
  );
  const line = fc.array(token, { maxLength: 8 }).map((ts) => ts.join(' '));

  it('assemble of token soup returns or throws IsaError', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 8 }), (lines) => isaErrorOnly(() => assemble(lines.join('\n')))),
      { numRuns: 3000 },
    );
  });

  it('assemble of arbitrary text returns or throws IsaError', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => isaErrorOnly(() => assemble(text))),
      { numRuns: 2000 },
    );
  });
});
