// Cost of the compatibility matrix: reading the corpus kernel profiles, and checkCompat (compute
// fixups, apply, verify again) for every example × kernel. Run: pnpm --filter @probeyard/compat bench
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import type { KernelProfile } from '../src/kernel-profile.js';
import { readProfile } from '../src/node/read-profile.js';
import { checkCompat } from '../src/verdict.js';
import { androidDir, corpusKernels, examples, linuxTarball } from '../test/corpus-table.js';
import { exampleSpec } from '../test/fixtures.js';

if (!existsSync(androidDir) || !existsSync(linuxTarball)) {
  console.log(`bench: skipped, the corpus (${androidDir}, ${linuxTarball}) is absent`);
  process.exit(0);
}

let t = performance.now();
const profiles: KernelProfile[] = [];
for (const k of corpusKernels()) profiles.push(await readProfile(k.path, { release: k.release }));
const readMs = performance.now() - t;
const formats = profiles.reduce((n, p) => n + p.events.size, 0);

const specs = await Promise.all(examples.map((n) => exampleSpec(n)));
for (const s of specs) for (const p of profiles) checkCompat(s, p); // warm up
const rounds = 20;
t = performance.now();
for (let r = 0; r < rounds; r++) for (const s of specs) for (const p of profiles) checkCompat(s, p);
const perVerdictMs = (performance.now() - t) / (rounds * specs.length * profiles.length);

console.log(`compat bench on ${cpus()[0]?.model ?? 'unknown cpu'}, node ${process.version}`);
console.log(`read ${profiles.length} profiles (${formats} formats): ${readMs.toFixed(0)} ms`);
console.log(`checkCompat (fixups + apply + verify): ${perVerdictMs.toFixed(3)} ms a verdict, ${(1000 / perVerdictMs).toFixed(0)} verdicts/s`);
