// Reads bpf_conformance test files (`-- asm`, `-- raw`, `-- result`, `-- error`, ...).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const corpusRoot = '/work/shared/corpus/bpf-conformance';

/** The sections every bpf_conformance test file may have. */
const knownSections = new Set(['asm', 'raw', 'mem', 'result', 'error', 'c', 'no register offset']);

export interface CorpusCase {
  name: string;
  file: string;
  /** Section name → text (lines joined with \n). */
  sections: Map<string, string>;
  /** Sections this reader does not know (`-- Unknown directive`). */
  unknownSections: string[];
}

export function readCase(file: string): CorpusCase {
  const text = readFileSync(file, 'utf8');
  const sections = new Map<string, string>();
  const unknownSections: string[] = [];
  let current: string | undefined;
  let buf: string[] = [];
  const flush = () => {
    if (current !== undefined) sections.set(current, buf.join('\n'));
  };
  for (const line of text.split(/\r?\n/)) {
    const m = /^-- (.*)$/.exec(line);
    if (m) {
      flush();
      current = m[1]!.trim();
      buf = [];
      if (!knownSections.has(current)) unknownSections.push(current);
      continue;
    }
    if (current === undefined) continue; // header comments
    buf.push(line);
  }
  flush();
  return { name: file.split('/').at(-1)!, file, sections, unknownSections };
}

export function readCases(folder: string): CorpusCase[] {
  const dir = join(corpusRoot, folder);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.data'))
    .sort()
    .map((f) => readCase(join(dir, f)));
}

/** `-- raw` bytes: either one little-endian 64-bit hex value a line (`0x...18`) or 8 hex bytes a line. */
export function parseRaw(text: string): Uint8Array {
  const bytes: number[] = [];
  for (const line of text.split('\n')) {
    const t = line.replace(/#.*/, '').trim();
    if (t === '') continue;
    if (/^0x[0-9a-f]{1,16}$/i.test(t)) {
      let v = BigInt(t);
      for (let i = 0; i < 8; i++) {
        bytes.push(Number(v & 0xffn));
        v >>= 8n;
      }
      continue;
    }
    for (const b of t.split(/\s+/)) bytes.push(Number.parseInt(b, 16));
  }
  return new Uint8Array(bytes);
}
