// Per-run fixed cost of the compiled tier on ctx_hash (15 instructions, 64-byte context), split
// into its parts, each measured side by side in one process (ns per run, medians of rounds).
//
//   pnpm --filter @probeyard/vm exec tsx --conditions=@probeyard/source bench/per-run.ts
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { EventRuntime, type LoadedProgram, loadProgramOrThrow, Vm } from '../src/index.js';
import { KernelProgType, KernelRunner } from '../src/node/index.js';
import { slot } from '../test/slot.js';
import { findCorpus } from '../../../tooling/scripts/find-corpus.mjs';

const corpus = findCorpus();
if (!corpus) {
  console.log('per-run: the shared corpus (perf-workloads) is absent; nothing to measure');
  process.exit(0);
}
const ctxHash = new Uint8Array(Buffer.from(readFileSync(join(corpus, 'perf-workloads/ctx_hash.hex'), 'utf8').trim(), 'hex'));
const ctx64 = Uint8Array.from({ length: 64 }, (_, i) => i);
const page = new Uint8Array(4096);
page.set(ctx64, 128);

const vm = new Vm({ budget: 100_000_000, standardHelpers: false });
const program: LoadedProgram = loadProgramOrThrow(ctxHash, vm.loadOptions('ctx_hash'));
if (vm.tierOf(program) !== 'compiled') throw new Error('ctx_hash is not compiled');
if (vm.runOrThrow(program, ctx64) !== 0xc56d329an) throw new Error('wrong r0');
const runtime = new EventRuntime(vm, program);
const sampled = new EventRuntime(vm, program, { timeEvery: 16 });
// the same with records read in place (Vm.stageRecords, what the Dispatcher turns on per batch)
const stagedVm = new Vm({ budget: 100_000_000, standardHelpers: false });
const stagedProgram: LoadedProgram = loadProgramOrThrow(ctxHash, stagedVm.loadOptions('ctx_hash'));
if (stagedVm.tierOf(stagedProgram) !== 'compiled') throw new Error('ctx_hash is not compiled');
stagedVm.stageRecords(true);
if (stagedVm.runOrThrow(stagedProgram, page.subarray(128, 192)) !== 0xc56d329an) throw new Error('wrong r0 (staged)');
const stagedSampled = new EventRuntime(stagedVm, stagedProgram, { timeEvery: 16 });
// 60 records of 64 bytes over a page, in turn (the page's window is staged once)
const recordAt = (i: number) => 64 + 64 * (i % 60);
const pageOfRecords = Uint8Array.from({ length: 4096 }, (_, i) => (i * 37) & 0xff);

// an empty exported wasm function (i32) -> i32: the floor of one JS -> wasm call
const emptyModule = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x03, 0x02, 0x01, 0x00,
  0x07, 0x07, 0x01, 0x03, 0x72, 0x75, 0x6e, 0x00, 0x00, 0x0a, 0x06, 0x01, 0x04, 0x00, 0x20, 0x00, 0x0b,
]);
const wasm = (globalThis as unknown as { WebAssembly: { Module: new (b: Uint8Array) => object; Instance: new (m: object) => { exports: Record<string, unknown> } } }).WebAssembly;
const empty = new wasm.Instance(new wasm.Module(emptyModule)).exports.run as (n: number) => number;
// biome-ignore lint/suspicious/noExplicitAny: reaching a private field for the measurement
const compiled = (vm as any).entryOf(program) as { run: (n: number) => number; start: (n: number, length: number, staged: number, flags: number) => number };
const entry = compiled.run;
const start = compiled.start;

let k = 0;
const cases: [string, () => void][] = [
  ['empty wasm call', () => empty(0)],
  ['compiled entry alone (run(0))', () => entry(0)],
  ['compiled entry alone (start(0, 64, 0, 0))', () => start(0, 64, 0, 0)],
  ['vm.setContext(64 bytes)', () => vm.setContext(ctx64)],
  ['vm.run(ctx_hash, 64-byte array)', () => vm.run(program, ctx64)],
  ['vm.run(ctx_hash, record in a page)', () => vm.run(program, page, 128, 64)],
  ['runtime.runBytes(record in a page)', () => runtime.runBytes(0, 1, 0, page, 128, 64)],
  ['  the same, timeEvery 16 (the agent)', () => sampled.runBytes(0, 1, 0, page, 128, 64)],
  ['vm.run(ctx_hash, record in a page), staged', () => stagedVm.run(stagedProgram, page, 128, 64)],
  ['  runBytes, timeEvery 16, staged', () => stagedSampled.runBytes(0, 1, 0, page, 128, 64)],
  ['vm.run, 60 records of a page in turn', () => vm.run(program, pageOfRecords, recordAt(k++), 64)],
  ['  the same, staged', () => stagedVm.run(stagedProgram, pageOfRecords, recordAt(k++), 64)],
];
const iters = 1_000_000;
const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 7;
const results = cases.map(() => [] as number[]);
const cpuResults = cases.map(() => [] as number[]);
const cpuNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};
// the kernel JIT on the same bytes, interleaved (BPF_PROG_TEST_RUN, XDP, repeat: the packet is
// copied once per test run, as a staged page is once per window), when bpf() is usable
const opened = KernelRunner.open();
const kernel = opened instanceof KernelRunner ? opened : undefined;
const cat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));
const kernelInsns = cat(
  slot(0x61, 2, 1, 0, 0), // r2 = data
  slot(0x61, 3, 1, 4, 0), // r3 = data_end
  slot(0xbf, 4, 2, 0, 0),
  slot(0x07, 4, 0, 0, 64),
  slot(0x2d, 4, 3, 2 + ctxHash.length / 8, 0), // if data + 64 > data_end goto out
  slot(0xbf, 1, 2, 0, 0),
  slot(0xb7, 2, 0, 0, 64),
  ctxHash,
  slot(0xb7, 0, 0, 0, 0),
  slot(0x95, 0, 0, 0, 0),
);
const kernelNs: number[] = [];
for (let w = 0; w < 3; w++) for (const [, f] of cases) for (let i = 0; i < 200_000; i++) f();
for (let r = 0; r < rounds; r++) {
  cases.forEach(([, f], c) => {
    const c0 = cpuNs();
    const t0 = performance.now();
    for (let i = 0; i < iters; i++) f();
    results[c]?.push(((performance.now() - t0) * 1e6) / iters);
    cpuResults[c]?.push((cpuNs() - c0) / iters);
  });
  if (kernel) {
    const res = await kernel.runProgram({ progType: KernelProgType.xdp, insns: kernelInsns, data: ctx64, repeat: 1_000_000 });
    if (!res.ok) throw new Error(`kernel refused ctx_hash: ${res.errno} ${res.log}`);
    if (res.retval >>> 0 !== 0xc56d329a) throw new Error(`kernel r0 ${res.retval.toString(16)}`);
    kernelNs.push(res.durationNs);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; ${rounds} rounds of ${iters.toLocaleString('en')} calls, medians (wall, cpu)`);
const kNs = kernelNs.length > 0 ? median(kernelNs) : undefined;
if (kNs !== undefined) console.log(`kernel JIT (BPF_PROG_TEST_RUN, XDP, 22 insns with the prolog) ${kNs.toFixed(1)} ns/run`);
else console.log(`kernel JIT: not measured here (${(opened as { unavailable: string }).unavailable})`);
cases.forEach(([name], c) => {
  const wall = median(results[c] as number[]);
  const cpu = median(cpuResults[c] as number[]);
  const ratio = kNs === undefined ? '' : `   ${(wall / kNs).toFixed(2)}x the kernel (cpu ${(cpu / kNs).toFixed(2)}x)`;
  console.log(`${name.padEnd(44)} ${wall.toFixed(1).padStart(7)} ns/run (cpu ${cpu.toFixed(1).padStart(6)})${ratio}`);
});
kernel?.close();
