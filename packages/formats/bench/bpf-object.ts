// Benchmarks of BPF object reading: readBpfObject on the fixture objects, and the running
// kernel's BTF (/sys/kernel/btf/vmlinux, ~5 MB, ~127k types): index only (lazy), then every
// friendly type decoded, then every type pretty-printed; hostile and scaled inputs of the robustness
// tests: 1 MiB of zeros / 0xff refused, and a call chain of n and 2n functions with n + 1
// relocations (the ratio near 2 says linear).
// Run: pnpm --filter @probeyard/formats exec tsx --conditions=@probeyard/source bench/bpf-object.ts
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeBtf } from '../src/btf/btf-spec.js';
import { formatBtfType } from '../src/btf/format-btf-type.js';
import { readBpfObject } from '../src/object/read-bpf-object.js';
import { bigFlatInputs, callChainObject } from '../test/support/hostile-inputs.js';

const here = dirname(fileURLToPath(import.meta.url));
console.log(`machine: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}, node ${process.version}`);

function best(runs: number, f: () => void): number {
  let ms = Infinity;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    f();
    ms = Math.min(ms, performance.now() - t);
  }
  return ms;
}

for (const name of ['sched_trace.o', 'legacy_probes.o', 'block_core.o']) {
  const bytes = new Uint8Array(readFileSync(join(here, '../test/fixtures/objects', name)));
  const ms = best(200, () => readBpfObject(bytes));
  console.log(`readBpfObject ${name} (${bytes.length} bytes): ${(ms * 1000).toFixed(0)} µs`);
}

const vmlinux = '/sys/kernel/btf/vmlinux';
if (existsSync(vmlinux)) {
  const bytes = new Uint8Array(readFileSync(vmlinux));
  const index = best(5, () => decodeBtf(bytes));
  const all = best(3, () => {
    const btf = decodeBtf(bytes);
    for (let id = 1; id < btf.typeCount; id++) btf.type(id);
  });
  const btf = decodeBtf(bytes);
  const printed = best(1, () => {
    for (let id = 1; id < btf.typeCount; id++) formatBtfType(btf, id);
  });
  console.log(`kernel BTF ${(bytes.length / 2 ** 20).toFixed(1)} MiB, ${btf.typeCount - 1} types: index ${index.toFixed(0)} ms, decode all ${all.toFixed(0)} ms, print all ${printed.toFixed(0)} ms`);
} else {
  console.log(`kernel BTF: ${vmlinux} absent, skipped`);
}

{
  const inputs = bigFlatInputs();
  const ms = best(5, () => {
    for (const b of inputs) {
      try {
        readBpfObject(b);
      } catch {
        // refused (test/bpf-object-robustness.test.ts checks it is a FormatError)
      }
    }
  });
  console.log(`1 MiB of zeros and 1 MiB of 0xff refused: ${ms.toFixed(1)} ms for both`);
  const n = 20_000;
  const small = callChainObject(n);
  const large = callChainObject(2 * n);
  // interleaved rounds, best of each: the ratio is what says linear (a scan per relocation gives ~4)
  let a = Infinity;
  let b = Infinity;
  for (let round = 0; round < 3; round++) {
    a = Math.min(a, best(1, () => readBpfObject(small)));
    b = Math.min(b, best(1, () => readBpfObject(large)));
  }
  console.log(`call chain: ${n} functions + ${n + 1} relocations ${a.toFixed(0)} ms, ${2 * n} + ${2 * n + 1} ${b.toFixed(0)} ms (ratio ${(b / a).toFixed(2)})`);
}
