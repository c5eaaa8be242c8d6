// Two copies of this package's src side by side in one process (a refactor's before and after):
// the same workloads on each, interleaved round by round (the order alternating), CPU time per
// run; prints the medians and after/before with the spread of the per-round ratios.
//
//   pnpm --filter @probeyard/vm exec tsx --conditions=@probeyard/source bench/ab.ts \
//     <before>/packages/vm/src/index.ts <after>/packages/vm/src/index.ts [--rounds 9] [--only REGEX]
//
// (e.g. the before from `git worktree add ../before main`, with `pnpm install` run there)
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { syscountSource } from '../test/runtime.test-program.js';
import { findCorpus } from '../../../tooling/scripts/find-corpus.mjs';

type Package = typeof import('../src/index.js');
type Vm = InstanceType<Package['Vm']>;
type LoadedProgram = ReturnType<Package['loadProgramOrThrow']>;

const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const [beforePath, afterPath] = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
if (!beforePath || !afterPath) {
  console.log('usage: bench/ab.ts <before src/index.ts> <after src/index.ts> [--rounds N] [--only REGEX]');
  process.exit(2);
}
const rounds = Number(option('--rounds')) || 9;
const only = option('--only') ? new RegExp(option('--only') as string) : undefined;
const corpus = findCorpus();
if (!corpus) {
  console.log('ab: the shared corpus (perf-workloads) is absent; nothing to measure');
  process.exit(0);
}
const versions = [(await import(resolve(beforePath))) as Package, (await import(resolve(afterPath))) as Package];
const hex = (name: string) =>
  new Uint8Array(Buffer.from(readFileSync(join(corpus, `perf-workloads/${name}.hex`), 'utf8').trim(), 'hex'));
const ctxHash = hex('ctx_hash');
const ctx64 = Uint8Array.from({ length: 64 }, (_, i) => i);
const page = Uint8Array.from({ length: 4096 }, (_, i) => (i * 37) & 0xff);
const memory = Uint8Array.from({ length: 65536 }, (_, i) => (i * 7) & 0xff);
// raw_syscalls/sys_enter-like records: 16 bytes, the id (a long) at offset 8, 40 distinct ids
const records = new Uint8Array(300 * 16);
for (let i = 0; i < 300; i++) new DataView(records.buffer).setUint32(i * 16 + 8, (i * 13) % 40, true);

type Tier = 'compiled' | 'interpreter';
interface Case {
  name: string;
  /** Runs per sample. */
  runs: number;
  make: (pkg: Package) => () => void;
}
const cases: Case[] = [];
function vmCase(name: string, runs: number, tier: Tier, bytes: Uint8Array, body: (vm: Vm, p: LoadedProgram) => void, stage = false): void {
  cases.push({
    name: `${name} [${tier}]`,
    runs,
    make: (pkg) => {
      const vm = new pkg.Vm({ budget: 100_000_000, standardHelpers: false, tier });
      const program = pkg.loadProgramOrThrow(bytes, vm.loadOptions(name));
      if (vm.tierOf(program) !== tier) throw new Error(`${name}: not on the ${tier} tier`);
      if (stage) vm.stageRecords(true);
      return () => body(vm, program);
    },
  });
}
for (const tier of ['compiled', 'interpreter'] as const) {
  vmCase('ctx_hash vm.run, a 64-byte array', 400_000, tier, ctxHash, (vm, p) => vm.run(p, ctx64));
  let k = 0;
  vmCase('ctx_hash vm.run, 60 records of a page', 400_000, tier, ctxHash, (vm, p) => vm.run(p, page, 64 + 64 * (k++ % 60), 64));
  let j = 0;
  vmCase('ctx_hash vm.run, the same staged', 400_000, tier, ctxHash, (vm, p) => vm.run(p, page, 64 + 64 * (j++ % 60), 64), true);
}
vmCase('alu_loop_100k', 40, 'compiled', hex('alu_loop_100k'), (vm, p) => vm.run(p));
vmCase('alu_loop_100k', 8, 'interpreter', hex('alu_loop_100k'), (vm, p) => vm.run(p));
vmCase('mem_sum', 150, 'compiled', hex('mem_sum'), (vm, p) => vm.run(p, memory));
vmCase('mem_sum', 8, 'interpreter', hex('mem_sum'), (vm, p) => vm.run(p, memory));
for (const tier of ['compiled', 'interpreter'] as const) {
  cases.push({
    name: `syscount EventRuntime.runBytes, timeEvery 16 [${tier}]`,
    runs: 200_000,
    make: (pkg) => {
      const { vm, programs } = pkg.loadAssembly(syscountSource, { tier });
      const program = programs.get('main') as LoadedProgram;
      if (vm.tierOf(program) !== tier) throw new Error(`syscount: not on the ${tier} tier`);
      const runtime = new pkg.EventRuntime(vm, program, { timeEvery: 16 });
      let i = 0;
      return () => runtime.runBytes(0, i, 0, records, (i++ % 300) * 16, 16);
    },
  });
  cases.push({
    name: `ctx_hash EventRuntime.runBytes, timeEvery 16 [${tier}]`,
    runs: 400_000,
    make: (pkg) => {
      const vm = new pkg.Vm({ budget: 100_000_000, standardHelpers: false, tier });
      const program = pkg.loadProgramOrThrow(ctxHash, vm.loadOptions('ctx_hash'));
      const runtime = new pkg.EventRuntime(vm, program, { timeEvery: 16 });
      let i = 0;
      return () => runtime.runBytes(0, i, 0, page, 64 + 64 * (i++ % 60), 64);
    },
  });
}

const cpuNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1] as number;
const load = () => loadavg().map((x) => x.toFixed(1)).join(' ');
console.log(`load average ${load()}; ${rounds} rounds, CPU ns per run, medians; before ${beforePath}, after ${afterPath}`);
for (const c of cases) {
  if (only && !only.test(c.name)) continue;
  const runs = versions.map((pkg) => c.make(pkg));
  for (const run of runs) for (let i = 0; i < Math.min(c.runs, 20_000); i++) run(); // warm up
  const ns: number[][] = [[], []];
  for (let r = 0; r < rounds; r++) {
    for (const v of r % 2 === 0 ? [0, 1] : [1, 0]) {
      const run = runs[v] as () => void;
      const c0 = cpuNs();
      for (let i = 0; i < c.runs; i++) run();
      (ns[v] as number[]).push((cpuNs() - c0) / c.runs);
    }
  }
  const [before, after] = ns as [number[], number[]];
  const ratios = after.map((a, i) => a / (before[i] as number));
  console.log(
    `${c.name.padEnd(56)} before ${median(before).toFixed(1).padStart(10)}  after ${median(after).toFixed(1).padStart(10)}  after/before ${(median(after) / median(before)).toFixed(3)} (per round: median ${median(ratios).toFixed(3)}, ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
  );
}
console.log(`load average at the end ${load()}`);
