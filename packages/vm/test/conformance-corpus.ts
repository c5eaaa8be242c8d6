import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assembleInstructions, encode } from '@probeyard/isa';

/** Where the shared corpus lives, from the repository root or this package. */
export const corpusRoot = [
  join(import.meta.dirname, '../../../../shared/corpus'),
  '/work/shared/corpus',
].find((p) => existsSync(p));

/** One bpf_conformance `.data` file, split into its sections. */
export interface ConformanceCase {
  name: string;
  asm?: string;
  raw?: Uint8Array;
  mem: Uint8Array;
  /** Expected full 64-bit r0. */
  result?: bigint;
  /** Expected error text (`-- error`), possibly empty. */
  error?: string;
}

export function parseConformanceFile(name: string, text: string): ConformanceCase {
  const sections = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    const m = /^-- (.*)$/.exec(line);
    if (m) {
      current = [];
      sections.set((m[1] as string).trim(), current);
    } else if (current) current.push(line);
  }
  const c: ConformanceCase = { name, mem: new Uint8Array(0) };
  const asm = sections.get('asm');
  if (asm) c.asm = asm.join('\n');
  const raw = sections.get('raw');
  if (raw) c.raw = parseRaw(raw);
  const mem = sections.get('mem');
  if (mem) c.mem = hexBytes(mem.join(' '));
  const result = sections.get('result');
  if (result) c.result = BigInt.asUintN(64, BigInt((result.find((l) => l.trim() !== '') ?? '0').trim()));
  const error = sections.get('error');
  if (error) c.error = error.join('\n').trim();
  return c;
}

function hexBytes(text: string): Uint8Array {
  const tokens = text.split(/\s+/).filter((t) => t !== '' && !t.startsWith('#'));
  return Uint8Array.from(tokens.map((t) => Number.parseInt(t, 16)));
}

/** `-- raw`: either one 64-bit word per line (`0x…`, opcode in the low byte) or 8 hex bytes. */
function parseRaw(lines: string[]): Uint8Array {
  const out: number[] = [];
  for (const line of lines) {
    const t = line.replace(/#.*/, '').trim();
    if (t === '') continue;
    if (t.startsWith('0x')) {
      let v = BigInt(t);
      for (let i = 0; i < 8; i++) {
        out.push(Number(v & 0xffn));
        v >>= 8n;
      }
    } else out.push(...hexBytes(t));
  }
  return Uint8Array.from(out);
}

/** The program bytes of a case: `-- raw` when present, else the assembled `-- asm`. */
export function programBytes(c: ConformanceCase): Uint8Array {
  if (c.raw) return c.raw;
  if (c.asm === undefined) return new Uint8Array(0);
  return encode(assembleInstructions(c.asm, { syntax: 'conformance' }));
}

export function readCases(folder: string): ConformanceCase[] {
  return readdirSync(folder)
    .filter((f) => f.endsWith('.data'))
    .sort()
    .map((f) => parseConformanceFile(f, readFileSync(join(folder, f), 'utf8')));
}
