// The bpf_conformance suite (/work/shared/corpus/bpf-conformance) as it is: every `-- asm` block
// assembles, matches its `-- raw` bytes where given, and round-trips through both disassembly
// syntaxes; every negative case is rejected with a clear error, or is listed below with the reason it
// is not an instruction-set error.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { assembleInstructions, decode, disassemble, encode, IsaError, type IsaErrorCode } from '../src/index.js';
import { type CorpusCase, corpusRoot, parseRaw, readCases } from './support/corpus.js';

const present = existsSync(join(corpusRoot, 'tests'));
if (!present) console.warn(`conformance: skipped, the corpus folder ${corpusRoot} is absent`);

const positives = present ? readCases('tests') : [];
const negatives = present ? readCases('negative') : [];

function rejection(run: () => unknown): IsaError {
  try {
    run();
  } catch (err) {
    if (err instanceof IsaError) return err;
    throw err;
  }
  throw new Error('accepted');
}

/**
 * Negative cases that are not instruction-set errors: the text assembles and the runner rejects it
 * later (a verifier or a wrong expected result). If one of them starts being rejected here, the test
 * fails and the entry must go.
 */
const notIsaErrors: Record<string, string> = {
  'error.data': 'or %r0, %r10 reads r0 before it is written: a verifier error, the instructions are valid',
  'incorrect_return_value_high_bits.data': 'a deliberately wrong -- result for the runner; the instructions are valid',
};

/** The exact code each assembler-level negative case gets. */
const expectedAsmCodes: Record<string, IsaErrorCode> = {
  'empty.data': 'empty-program',
  'empty_instructions.data': 'empty-program',
  'invalid_imm32_dec_range.data': 'out-of-range',
  'invalid_imm32_hex_range.data': 'out-of-range',
  'invalid_label.data': 'unknown-label',
  'invalid_lock.data': 'operand-count',
  'invalid_lock2.data': 'operand-count',
  'invalid_mnemonic.data': 'unknown-mnemonic',
  'invalid_offset.data': 'invalid-operand',
  'invalid_offset_range.data': 'out-of-range',
  'invalid_operand_count.data': 'operand-count',
  'invalid_register.data': 'invalid-register',
  'invalid_unknown_directive.data': 'empty-program',
};

const counts = { asm: 0, raw: 0, roundTrips: 0, negativeAsm: 0, negativeRaw: 0, notIsa: 0 };

describe.skipIf(!present)('bpf_conformance corpus', () => {
  afterAll(() => {
    console.log(
      `bpf_conformance: ${counts.asm}/${positives.length} tests assembled, ${counts.raw} matched -- raw, ` +
        `${counts.roundTrips} round-trips (2 syntaxes each); negative: ${counts.negativeAsm} rejected by the assembler, ` +
        `${counts.negativeRaw} raw encodings rejected by decode, ${counts.notIsa} not instruction-set errors (listed)`,
    );
  });

  it('has the whole suite', () => {
    expect(positives.length).toBe(313);
    expect(negatives.length).toBe(60);
  });

  describe('tests', () => {
    it.each(positives.map((c) => [c.name, c] as [string, CorpusCase]))('%s', (_name, c) => {
      const asm = c.sections.get('asm');
      expect(asm, 'every test has an -- asm block').toBeDefined();
      const insns = assembleInstructions(asm!);
      const bytes = encode(insns);
      counts.asm++;
      const raw = c.sections.get('raw');
      if (raw !== undefined) {
        expect(bytes).toEqual(parseRaw(raw));
        counts.raw++;
      }
      expect(decode(bytes)).toEqual(insns);
      for (const syntax of ['llvm', 'conformance'] as const) {
        const text = disassemble(insns, { syntax });
        expect(encode(assembleInstructions(text, { syntax })), `${syntax}:\n${text}`).toEqual(bytes);
        expect(encode(assembleInstructions(text)), `auto (${syntax}):\n${text}`).toEqual(bytes);
        counts.roundTrips++;
      }
    });
  });

  describe('negative', () => {
    it.each(negatives.map((c) => [c.name, c] as [string, CorpusCase]))('%s', (name, c) => {
      const raw = c.sections.get('raw');
      if (raw !== undefined) {
        const err = rejection(() => decode(parseRaw(raw)));
        expect(err.insnIndex).toBe(0);
        if (name === 'unused-mov_reg-offset.data' || name === 'unused-mov64_reg-offset.data') {
          // Since v4 the offset of a register mov is the movsx width: 1 is an invalid width, not a reserved field.
          expect(err.code).toBe('invalid-field');
          expect(err.message).toMatch(/^instruction 0 \(byte 0\): invalid field: opcode 0xb[cf] offset 1 \(movsx takes 8, 16/);
        } else {
          // Every other unused-* case sets one field the instruction does not use.
          expect(err.code).toBe('reserved-field');
          expect(err.message).toMatch(/^instruction 0 \(byte 0\): reserved field: opcode 0x[0-9a-f]{2} needs (dst|src|offset|imm) 0, got -?\d+$/);
        }
        counts.negativeRaw++;
        return;
      }
      const asm = c.sections.get('asm') ?? '';
      if (notIsaErrors[name]) {
        expect(() => assembleInstructions(asm)).not.toThrow();
        counts.notIsa++;
        return;
      }
      if (name === 'invalid_unknown_directive.data') expect(c.unknownSections).toEqual(['Unknown directive']);
      const err = rejection(() => assembleInstructions(asm));
      expect(err.code).toBe(expectedAsmCodes[name]);
      expect(err.line).toBeGreaterThanOrEqual(1);
      expect(err.column).toBeGreaterThanOrEqual(1);
      counts.negativeAsm++;
    });
  });
});
