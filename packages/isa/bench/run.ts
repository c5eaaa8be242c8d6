// Throughput of decode, encode, assemble and disassemble on the bpf_conformance corpus
// (instructions per second). Run: pnpm --filter @probeyard/isa bench
import { existsSync } from 'node:fs';
import { cpus, platform, release } from 'node:os';
import { assembleInstructions, decode, disassemble, encode, type Instruction } from '../src/index.js';
import { corpusRoot, readCases } from '../test/support/corpus.js';

if (!existsSync(corpusRoot)) {
  console.log(`bench: skipped, the corpus folder ${corpusRoot} is absent`);
  process.exit(0);
}

const sources = readCases('tests')
  .map((c) => c.sections.get('asm'))
  .filter((s): s is string => s !== undefined);
const programs = sources.map((s) => assembleInstructions(s));
const binaries = programs.map((p) => encode(p));
const llvmTexts = programs.map((p) => disassemble(p, { syntax: 'llvm' }));
const insnCount = programs.reduce((n, p) => n + p.length, 0);

/** Runs `pass` (one pass over the corpus) for at least `ms`, returns instructions per second. */
function measure(pass: () => void, ms = 1000): number {
  for (let i = 0; i < 5; i++) pass(); // warm up
  let passes = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    pass();
    passes++;
    elapsed = performance.now() - start;
  }
  return (passes * insnCount) / (elapsed / 1000);
}

let sink = 0;
const rows: [string, number][] = [
  ['decode', measure(() => { for (const b of binaries) sink += decode(b).length; })],
  ['encode', measure(() => { for (const p of programs) sink += encode(p).length; })],
  ['assemble (conformance syntax)', measure(() => { for (const s of sources) sink += assembleInstructions(s, { syntax: 'conformance' }).length; })],
  ['assemble (LLVM syntax)', measure(() => { for (const s of llvmTexts) sink += assembleInstructions(s, { syntax: 'llvm' }).length; })],
  ['disassemble (LLVM syntax)', measure(() => { for (const p of programs) sink += disassemble(p as Instruction[]).length; })],
];

const cpu = cpus();
console.log(`machine: ${cpu[0]?.model ?? 'unknown cpu'}, ${cpu.length} cores, ${platform()} ${release()}, node ${process.version}`);
console.log(`corpus: ${sources.length} bpf_conformance programs, ${insnCount} instructions\n`);
const width = Math.max(...rows.map((r) => r[0].length));
console.log(`${'operation'.padEnd(width)}  instructions/s`);
for (const [name, rate] of rows) console.log(`${name.padEnd(width)}  ${Math.round(rate).toLocaleString('en-US').padStart(14)}`);
if (sink === 0) console.log('');
