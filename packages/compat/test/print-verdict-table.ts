// Prints the README verdict table: pnpm exec tsx --conditions=@probeyard/source test/print-verdict-table.ts
import { checkCompat } from '../src/verdict.js';
import { readProfile } from '../src/node/read-profile.js';
import { exampleSpec } from './fixtures.js';
import { cell, corpusKernels, examples } from './corpus-table.js';
const ks = corpusKernels();
console.log(`| program | ${ks.map((k) => k.column).join(' | ')} |`);
console.log(`|${ks.map(() => '---').concat('---').join('|')}|`);
const ps = await Promise.all(ks.map((k) => readProfile(k.path, { release: k.release })));
for (const n of examples) {
  const spec = await exampleSpec(n);
  console.log(`| \`${n}\` | ${ps.map((p) => cell(checkCompat(spec, p))).join(' | ')} |`);
}
