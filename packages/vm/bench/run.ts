// VM benchmark: ns per executed instruction and per run on the perf-workloads corpus through the
// interpreter, the compiled (WebAssembly) tier and the kernel's JIT (BPF_PROG_TEST_RUN with
// repeat) when bpf() is usable here, else the corpus README's stored kernel figures, labelled as
// stored. Engines are interleaved round by round and medians reported, because the host is
// shared; the ratios are the figures to read. Also reports the compiled tier's compile time per
// 1,000 instructions.
//
//   pnpm --filter @probeyard/vm bench [--rounds N]
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg, release } from 'node:os';
import { join } from 'node:path';
import type { EventFormat } from '@probeyard/formats';
import { openTraceDatFile } from '@probeyard/formats/node';
import {
  createMap,
  EventRuntime,
  type EventRecord,
  type LoadedProgram,
  loadAssembly,
  loadProgramOrThrow,
  MapType,
  RunStatus,
  Vm,
  type VmTier,
} from '../src/index.js';
import { KernelProgType, KernelRunner } from '../src/node/index.js';
import { FAST_LOOPS_ADDR } from '../src/memory/layout.js';
import { assembleForKernel } from '../test/kernel-program.js';
import { countByTypeSource, syscountSource } from '../test/runtime.test-program.js';
import { slot } from '../test/slot.js';

/** A tracepoint's id from the mounted tracefs, or undefined. */
function readTracepointId(system: string, event: string): number | undefined {
  for (const root of ['/sys/kernel/tracing', '/sys/kernel/debug/tracing']) {
    const f = join(root, 'events', system, event, 'id');
    if (existsSync(f)) return Number(readFileSync(f, 'utf8').trim());
  }
  return undefined;
}
import { readTracePipeRaw } from '../test/trace-pipe-raw.js';
import { findCorpus } from '../../../tooling/scripts/find-corpus.mjs';

const corpus = findCorpus();
if (!corpus) {
  console.log('bench: the shared corpus (perf-workloads) is absent; nothing to measure');
  process.exit(0);
}
const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 7;
const hexFile = (name: string) =>
  new Uint8Array(Buffer.from(readFileSync(join(corpus, 'perf-workloads', `${name}.hex`), 'utf8').trim(), 'hex'));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};
const insn = slot;
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

const memBuffer = Uint8Array.from({ length: 65536 }, (_, i) => Math.imul(i, 2654435761) >>> 24);
const ctx64 = Uint8Array.from({ length: 64 }, (_, i) => i);

/** XDP prolog: r1 = packet data after a bounds check of `len` bytes, r2 = len; `exitAt` = slots after the prolog to the appended `r0 = 0; exit`. */
function packetProlog(len: number, programSlots: number): Uint8Array {
  return concat(
    insn(0x61, 2, 1, 0, 0), // r2 = *(u32 *)(r1 + 0)   data
    insn(0x61, 3, 1, 4, 0), // r3 = *(u32 *)(r1 + 4)   data_end
    insn(0xbf, 4, 2, 0, 0), // r4 = r2
    insn(0x07, 4, 0, 0, len), // r4 += len
    insn(0x2d, 4, 3, 2 + programSlots, 0), // if r4 > r3 goto out
    insn(0xbf, 1, 2, 0, 0), // r1 = r2
    insn(0xb7, 2, 0, 0, len), // r2 = len
  );
}
const outEpilog = concat(insn(0xb7, 0, 0, 0, 0), insn(0x95, 0, 0, 0, 0));

interface Workload {
  name: string;
  program: Uint8Array;
  context: Uint8Array;
  /** Kernel variant (same bytes behind a prolog), or undefined when the kernel cannot run it. */
  kernel?: { insns: Uint8Array; data: Uint8Array; maps?: Parameters<KernelRunner['runProgram']>[0]['maps']; extraInsns: number };
  expectedR0: bigint;
}

const aluLoop = hexFile('alu_loop');
const aluLoop100k = hexFile('alu_loop_100k');
const memSum = hexFile('mem_sum');
const ctxHash = hexFile('ctx_hash');
const workloads: Workload[] = [
  { name: 'alu_loop (1M iterations)', program: aluLoop, context: new Uint8Array(0), expectedR0: 0xa116c0f2n },
  {
    name: 'alu_loop_100k',
    program: aluLoop100k,
    context: new Uint8Array(0),
    expectedR0: 0xdc9e8debn,
    kernel: { insns: aluLoop100k, data: new Uint8Array(64), extraInsns: 0 },
  },
  {
    name: 'mem_sum (64 KiB)',
    program: memSum,
    context: memBuffer,
    expectedR0: 0x017e7f67n,
    kernel: {
      // r1 = &map[0].value (BPF_PSEUDO_MAP_VALUE), r2 = 65536
      insns: concat(insn(0x18, 1, 2, 0, 0), insn(0, 0, 0, 0, 0), insn(0xb7, 2, 0, 0, 65536), memSum),
      data: new Uint8Array(64),
      maps: [{ type: MapType.array, keySize: 4, valueSize: 65536, maxEntries: 1, initialValue: memBuffer }],
      extraInsns: 2,
    },
  },
  {
    name: 'ctx_hash (64-byte context)',
    program: ctxHash,
    context: ctx64,
    expectedR0: 0xc56d329an,
    kernel: { insns: concat(packetProlog(64, ctxHash.length / 8), ctxHash, outEpilog), data: ctx64, extraInsns: 7 },
  },
];

const opened = KernelRunner.open();
const kernel = opened instanceof KernelRunner ? opened : undefined;
const stored: Record<string, { nsPerInsn?: number; nsPerRun?: number }> = {
  'alu_loop (1M iterations)': { nsPerInsn: 0.261 },
  alu_loop_100k: { nsPerInsn: 0.261 },
  'mem_sum (64 KiB)': { nsPerInsn: 0.062 },
  'ctx_hash (64-byte context)': { nsPerRun: 6 },
};
console.log(
  kernel
    ? `kernel: measured here, BPF_PROG_TEST_RUN (XDP) with repeat, JIT ${readFileSync('/proc/sys/net/core/bpf_jit_enable', 'utf8').trim() === '1' ? 'on' : 'off'}`
    : `kernel: not usable here (${(opened as { unavailable: string }).unavailable}); kernel columns are the corpus README's STORED figures`,
);
const cpu = cpus();
console.log(
  `machine: ${cpu.length} x ${cpu[0]?.model ?? '?'}, Linux ${release()}, Node ${process.version}, ` +
    `load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} (shared host: read the ratios)`,
);
console.log(`rounds: ${rounds} (interleaved interpreter / compiled / kernel), medians\n`);

const tiers: VmTier[] = ['interpreter', 'compiled'];
const vms = tiers.map((tier) => new Vm({ budget: 100_000_000, standardHelpers: false, tier }));
const ratios: string[] = [];
const rows: string[][] = [];
const cpuNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};
/** The kernel's ctx_hash figure per run, for the in-place row below. */
let ctxHashKernel: { ns: number; source: string } | undefined;
for (const w of workloads) {
  const programs = vms.map((vm) => loadProgramOrThrow(w.program, vm.loadOptions(w.name)));
  let insns = 0;
  // entries into versioned loops' fast copies (compile-wasm.ts) during one compiled run
  let fastLoops = 0;
  vms.forEach((vm, t) => {
    if (vm.tierOf(programs[t] as LoadedProgram) !== tiers[t]) throw new Error(`${w.name}: not on the ${tiers[t]} tier: ${vm.tierCounters.lastFallbackReason}`);
    const fastCounter = () => (tiers[t] === 'compiled' ? (new Int32Array(vm.regLo.buffer, FAST_LOOPS_ADDR, 1)[0] as number) : 0);
    const before = fastCounter();
    vm.run(programs[t] as LoadedProgram, w.context);
    fastLoops += fastCounter() - before;
    if (vm.r0 !== w.expectedR0) throw new Error(`${w.name} (${tiers[t]}): r0 0x${vm.r0.toString(16)}, expected 0x${w.expectedR0.toString(16)}`);
    insns = vm.insnCount;
  });
  // ~5 M instructions per sample
  const runsPerSample = Math.max(1, Math.round(5e6 / insns));
  vms.forEach((vm, t) => {
    for (let i = 0; i < Math.min(2000, runsPerSample * 3); i++) vm.run(programs[t] as LoadedProgram, w.context); // warm up
  });
  const vmNsPerRun: number[][] = tiers.map(() => []);
  const vmCpuPerRun: number[][] = tiers.map(() => []);
  const kNsPerRun: number[] = [];
  let kernelInsns = insns;
  for (let r = 0; r < rounds; r++) {
    vms.forEach((vm, t) => {
      const program = programs[t] as LoadedProgram;
      const c0 = cpuNs();
      const t0 = performance.now();
      for (let i = 0; i < runsPerSample; i++) vm.run(program, w.context);
      (vmNsPerRun[t] as number[]).push(((performance.now() - t0) * 1e6) / runsPerSample);
      (vmCpuPerRun[t] as number[]).push((cpuNs() - c0) / runsPerSample);
    });
    if (kernel && w.kernel) {
      const repeat = Math.max(1, Math.round(2e7 / insns));
      const res = await kernel.runProgram({
        progType: KernelProgType.xdp,
        insns: w.kernel.insns,
        data: w.kernel.data,
        maps: w.kernel.maps,
        repeat,
      });
      if (!res.ok) throw new Error(`${w.name}: kernel refused: errno ${res.errno} ${res.log}`);
      if (BigInt(res.retval) !== (w.expectedR0 & 0xffffffffn)) {
        throw new Error(`${w.name}: kernel r0 0x${res.retval.toString(16)}, expected 0x${w.expectedR0.toString(16)}`);
      }
      kNsPerRun.push(res.durationNs);
      kernelInsns = insns + w.kernel.extraInsns;
    }
  }
  let kRun: number | undefined;
  let kInsn: number | undefined;
  let source = 'measured';
  if (kNsPerRun.length > 0) {
    kRun = median(kNsPerRun);
    kInsn = kRun / kernelInsns;
  } else {
    const s = stored[w.name];
    source = 'STORED';
    kInsn = s?.nsPerInsn;
    kRun = s?.nsPerRun ?? (s?.nsPerInsn !== undefined ? s.nsPerInsn * insns : undefined);
    if (kInsn === undefined && kRun !== undefined) kInsn = kRun / insns;
  }
  if (w.program === ctxHash) ctxHashKernel = kRun === undefined ? undefined : { ns: kRun, source };
  const runOf = (t: number) => median(vmNsPerRun[t] as number[]);
  const cpuOf = (t: number) => median(vmCpuPerRun[t] as number[]);
  ratios.push(
    `${w.name.padEnd(28)} interpreter/compiled ${(runOf(0) / runOf(1)).toFixed(1)}x (cpu ${(cpuOf(0) / cpuOf(1)).toFixed(1)}x)` +
      (kRun === undefined
        ? ''
        : `   compiled/kernel JIT ${(runOf(1) / kRun).toFixed(2)}x (cpu ${(cpuOf(1) / kRun).toFixed(2)}x)   interpreter/kernel JIT ${(runOf(0) / kRun).toFixed(1)}x${source === 'STORED' ? ' (kernel STORED)' : ''}`) +
      `   fast loop copies entered per compiled run: ${fastLoops}`,
  );
  tiers.forEach((tier, t) => {
    const vmRun = median(vmNsPerRun[t] as number[]);
    const vmCpu = median(vmCpuPerRun[t] as number[]);
    rows.push([
      `${w.name} [${tier}]`,
      insns.toLocaleString('en'),
      `${(vmRun / insns).toFixed(3)} (cpu ${(vmCpu / insns).toFixed(3)})`,
      vmRun >= 1e5 ? `${(vmRun / 1e6).toFixed(2)} ms` : `${vmRun.toFixed(0)} ns`,
      kInsn === undefined ? 'n/a' : `${kInsn.toFixed(3)} (${source})`,
      kRun === undefined ? 'n/a' : kRun >= 1e5 ? `${(kRun / 1e6).toFixed(3)} ms` : `${kRun.toFixed(0)} ns`,
      kRun === undefined ? 'n/a' : `${(vmRun / kRun).toFixed(1)}x (cpu ${(vmCpu / kRun).toFixed(1)}x)`,
    ]);
  });
}

// ctx_hash with its record read in place (Vm.stageRecords: the page staged once, the record
// copied into the context inside the compiled code), the agent's path. The kernel's test run
// above copies its packet once per BPF_PROG_TEST_RUN call, not once per repeat, so its figure
// contains no copy of the context either: this row is the like-for-like one; the row above also
// copies the 64-byte array into the VM in JavaScript on every run.
{
  const vm = new Vm({ budget: 100_000_000, standardHelpers: false });
  const program = loadProgramOrThrow(ctxHash, vm.loadOptions('ctx_hash'));
  const page = new Uint8Array(4096);
  page.set(ctx64, 128);
  vm.stageRecords(true);
  vm.run(program, page, 128, 64);
  if (vm.r0 !== 0xc56d329an) throw new Error('ctx_hash staged: wrong r0');
  const runs = 1_000_000;
  for (let i = 0; i < runs; i++) vm.run(program, page, 128, 64);
  const wall: number[] = [];
  const cpuPer: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const c0 = cpuNs();
    const t0 = performance.now();
    for (let i = 0; i < runs; i++) vm.run(program, page, 128, 64);
    wall.push(((performance.now() - t0) * 1e6) / runs);
    cpuPer.push((cpuNs() - c0) / runs);
  }
  const ns = median(wall);
  const cpu = median(cpuPer);
  const k = ctxHashKernel;
  rows.push([
    'ctx_hash, record read in place [compiled]',
    '15',
    `${(ns / 15).toFixed(3)} (cpu ${(cpu / 15).toFixed(3)})`,
    `${ns.toFixed(0)} ns`,
    k === undefined ? 'n/a' : `${(k.ns / 22).toFixed(3)} (${k.source})`,
    k === undefined ? 'n/a' : `${k.ns.toFixed(0)} ns`,
    k === undefined ? 'n/a' : `${(ns / k.ns).toFixed(1)}x (cpu ${(cpu / k.ns).toFixed(1)}x)`,
  ]);
  if (k !== undefined) {
    ratios.push(
      `ctx_hash, record read in place (staged; the kernel's test run copies no context per repeat either): compiled/kernel JIT ${(ns / k.ns).toFixed(2)}x (cpu ${(cpu / k.ns).toFixed(2)}x)`,
    );
  }
}

// (c) a tracing program over a recorded feed: count events per common_type into a hash map,
// run per event by the runtime over the trace_pipe_raw pages of the corpus.
const tracefs = join(corpus, 'tracefs/linux-6.18');
if (existsSync(join(tracefs, 'cpu0.raw'))) {
  const records: EventRecord[] = [];
  for (const cpu of [0, 1]) records.push(...readTracePipeRaw(new Uint8Array(readFileSync(join(tracefs, `cpu${cpu}.raw`))), cpu));
  for (const tier of tiers) {
    let runtime: EventRuntime | undefined;
    const { vm: feedVm, programs } = loadAssembly(countByTypeSource, { output: (o) => runtime?.collect(o), tier });
    runtime = new EventRuntime(feedVm, [...programs.values()][0] as NonNullable<ReturnType<typeof programs.get>>);
    const passes = 200;
    const perEvent: number[] = [];
    for (let r = 0; r < rounds + 2; r++) {
      const before = runtime.counters.instructions;
      const t0 = performance.now();
      for (let p = 0; p < passes; p++) {
        for (const rec of records) {
          if (runtime.runEvent(rec) !== RunStatus.ok) throw new Error('feed program faulted');
        }
        runtime.takeBatch();
      }
      const ns = (performance.now() - t0) * 1e6;
      if (r >= 2) perEvent.push(ns / (passes * records.length));
      void before;
    }
    const c = runtime.counters;
    const insnPerEvent = c.instructions / c.runs;
    const ev = median(perEvent);
    rows.push([
      `count_by_type feed, ${records.length} records [${tier}]`,
      `${insnPerEvent.toFixed(1)}/event`,
      (ev / insnPerEvent).toFixed(3),
      `${ev.toFixed(0)} ns/event`,
      'n/a (tracepoint programs: no test-run repeat)',
      'n/a',
      'n/a',
    ]);
  }
}

// (c) the issue's tracing workload: syscall counting into a hash map, per sys_enter event. The VM
// runs it over the sys_enter records of the corpus's big trace.dat (recorded by trace-cmd); the
// kernel runs the same bytes attached to raw_syscalls/sys_enter (tracepoint programs have no test
// run) on getppid() calls, and reports its own run count and run time (BPF_ENABLE_STATS, which
// adds its two clock reads to every run).
const bigDat = join(corpus, 'trace-dat/big/big.dat');
if (existsSync(bigDat)) {
  const file = openTraceDatFile(bigDat);
  const records: Uint8Array[] = [];
  let enter: EventFormat | undefined;
  const it = file.reader.records();
  for (let r = it.next(); r && records.length < 100_000; r = it.next()) {
    if (r.format?.name !== 'sys_enter') continue;
    enter = r.format;
    records.push(new Uint8Array(r.view.buffer, r.view.byteOffset + r.recordOffset, r.recordLength).slice());
  }
  const idField = enter?.fields.find((f) => f.name === 'id');
  if (!enter || idField?.byteOffset !== 8 || idField.size !== 8) {
    console.log(`syscount: skipped: big.dat's sys_enter has no 8-byte id at offset 8 (${idField ? `offset ${idField.byteOffset}` : 'no id field'})`);
  } else {
    const { insns: syscount, maps: syscountMaps } = assembleForKernel(syscountSource);
    const perEvent: number[][] = tiers.map(() => []);
    const sys = tiers.map((tier) => {
      const vm = new Vm({ tier, maps: syscountMaps.map((m, i) => createMap({ name: `m${i}`, ...m, type: m.type as MapType, flags: 0 })) });
      return { vm, program: loadProgramOrThrow(syscount, vm.loadOptions('syscount')) };
    });
    const kernelRuns: number[] = [];
    const tpId = kernel ? readTracepointId('raw_syscalls', 'sys_enter') : undefined;
    let insnPerEvent = 0;
    for (let r = 0; r < rounds + 1; r++) {
      sys.forEach(({ vm, program }, t) => {
        const c0 = cpuNs();
        let n = 0;
        for (const rec of records) {
          if (vm.run(program, rec) !== RunStatus.ok) throw new Error(`syscount faulted: ${vm.fault?.message}`);
          n += vm.insnCount;
        }
        insnPerEvent = n / records.length;
        if (r > 0) perEvent[t]?.push((cpuNs() - c0) / records.length);
      });
      if (kernel && tpId !== undefined) {
        const k = await kernel.attachTracepoint({ tracepointId: tpId, syscalls: 200_000, insns: syscount, maps: syscountMaps });
        if (!k.ok) throw new Error(`the kernel refused syscount: ${k.errno} ${k.log}`);
        if (r > 0) kernelRuns.push(k.runTimeNs / k.runs);
      }
    }
    const kEvent = kernelRuns.length ? median(kernelRuns) : undefined;
    tiers.forEach((tier, t) => {
      const ev = median(perEvent[t] as number[]);
      rows.push([
        `syscount, ${records.length.toLocaleString('en')} sys_enter records of big.dat [${tier}]`,
        `${insnPerEvent.toFixed(1)}/event`,
        `(cpu ${(ev / insnPerEvent).toFixed(3)})`,
        `${ev.toFixed(0)} ns/event (cpu)`,
        kEvent === undefined ? 'n/a' : 'attached to sys_enter',
        kEvent === undefined ? 'n/a' : `${kEvent.toFixed(1)} ns/run (run_time_ns/run_cnt)`,
        kEvent === undefined ? 'n/a' : `${(ev / kEvent).toFixed(1)}x`,
      ]);
      if (kEvent !== undefined) ratios.push(`syscount per event [${tier}]: ${(ev / kEvent).toFixed(1)}x the kernel JIT's run time`);
    });
  }
}

// compile time of the compiled tier: the bench programs and the test-suite programs, each
// compiled fresh (a new copy of the bytes with a no-op appended defeats the module cache)
{
  // the first compile of the process pays for warming up the compiler itself: shown apart
  const perK: number[] = [];
  let first = 0;
  const sources = [aluLoop100k, memSum, ctxHash];
  for (let k = 0; k < 40; k++) {
    for (const bytes of sources) {
      const copy = concat(insn(0xb7, 9, 0, 0, k), bytes);
      const vm = new Vm({ standardHelpers: false });
      vm.tierOf(loadProgramOrThrow(copy, vm.loadOptions()));
      if (k === 0 && first === 0) first = vm.tierCounters.compileNs;
      else perK.push((vm.tierCounters.compileNs / vm.tierCounters.compiledInstructions) * 1000);
    }
  }
  // a larger program: 2,000 instructions of straight-line ALU and stack traffic with forward jumps
  const big: Uint8Array[] = [];
  for (let i = 0; i < 2000; i++) {
    const r = i % 5;
    if (i % 7 === 0) big.push(insn(0x7b, 10, r, -8 * ((i % 60) + 1), 0));
    else if (i % 11 === 0) big.push(insn(0x15, r, 0, 1, 3));
    else big.push(insn(0x07 | ((i % 4) * 0x10), r, 0, 0, i));
  }
  big.push(insn(0xb7, 0, 0, 0, 0), insn(0x95, 0, 0, 0, 0));
  let bigNs = 0;
  for (let k = 0; k < 5; k++) {
    const vm = new Vm({ standardHelpers: false });
    vm.tierOf(loadProgramOrThrow(concat(insn(0xb7, 9, 0, 0, k), ...big), vm.loadOptions()));
    if (vm.tierCounters.compiledPrograms !== 1) throw new Error(`big program not compiled: ${vm.tierCounters.lastFallbackReason}`);
    bigNs += vm.tierCounters.compileNs;
  }
  ratios.push(
    `compile time (BPF -> wasm -> WebAssembly.Module): first program of the process ${(first / 1e6).toFixed(1)} ms (cold compiler); ` +
      `then median ${(median(perK) / 1e6).toFixed(2)} ms per 1,000 instructions on the ~14-instruction workloads (fixed cost dominates), ` +
      `${((bigNs / 5 / 2002) * 1000 / 1e6).toFixed(2)} ms per 1,000 instructions on a 2,002-instruction program`,
  );
}

const header = ['workload [tier]', 'insns/run', 'VM ns/insn (wall, cpu)', 'VM per run', 'kernel JIT ns/insn', 'kernel per run', 'VM/kernel per run'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
const fmt = (r: string[]) => r.map((c, i) => c.padEnd(widths[i] as number)).join('  ');
console.log(fmt(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(fmt(r));
console.log('\nratios, per run, medians of interleaved rounds:');
for (const r of ratios) console.log(`  ${r}`);
kernel?.close();
