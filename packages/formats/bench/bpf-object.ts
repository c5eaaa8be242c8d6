// Benchmarks of BPF object reading: readBpfObject on the fixture objects, and the running
// kernel's BTF (/sys/kernel/btf/vmlinux, ~5 MB, ~127k types): index only (lazy), then every
// friendly type decoded, then every type pretty-printed.
// Run: pnpm --filter @probeyard/formats exec tsx --conditions=@probeyard/source bench/bpf-object.ts
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeBtf } from '../src/btf/btf-spec.js';
import { formatBtfType } from '../src/btf/format-btf-type.js';
import { readBpfObject } from '../src/object/read-bpf-object.js';

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
