import { readFileSync } from 'node:fs';
import { loadProgramOrThrow, Vm } from '../src/index.js';
const ctxHash = new Uint8Array(Buffer.from(readFileSync('/work/wt/shared/corpus/perf-workloads/ctx_hash.hex', 'utf8').trim(), 'hex'));
const ctx64 = Uint8Array.from({ length: 64 }, (_, i) => i);
const page = new Uint8Array(4096);
page.set(ctx64, 128);
const vm = new Vm({ budget: 100_000_000, standardHelpers: false });
const program = loadProgramOrThrow(ctxHash, vm.loadOptions('ctx_hash'));
vm.tierOf(program);
for (let r = 0; r < 10; r++) {
  const t0 = performance.now();
  for (let i = 0; i < 1_000_000; i++) vm.run(program, page, 128, 64);
  console.log(((performance.now() - t0) * 1e6 / 1e6).toFixed(1), 'ns/run');
}
