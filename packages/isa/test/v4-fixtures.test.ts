// Hand-written ISA v4 programs (clang 14 cannot emit v4): bytes ↔ both disassembly syntaxes.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assembleInstructions, decode, disassemble, encode, isaVersionOfProgram } from '../src/index.js';

const dir = join(import.meta.dirname, 'fixtures', 'v4');

function readHex(file: string): Uint8Array {
  const text = readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.replace(/\/\/.*/, '').trim())
    .join(' ')
    .trim();
  return new Uint8Array(text.split(/\s+/).map((b) => Number.parseInt(b, 16)));
}

const names = readdirSync(dir)
  .filter((f) => f.endsWith('.hex'))
  .map((f) => f.slice(0, -4));

describe.each(names)('v4 fixture %s', (name) => {
  const bytes = readHex(join(dir, `${name}.hex`));
  const insns = decode(bytes);

  it.each(['llvm', 'conformance'] as const)('disassembles to the %s listing and back', (syntax) => {
    const listing = readFileSync(join(dir, `${name}.${syntax}.txt`), 'utf8');
    expect(disassemble(insns, { syntax })).toBe(listing);
    expect(encode(assembleInstructions(listing, { syntax }))).toEqual(bytes);
  });

  it('needs ISA v4', () => {
    expect(isaVersionOfProgram(insns)).toBe('v4');
  });
});
