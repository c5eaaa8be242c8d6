// Where a syscount event's time goes in the agent's batch path (Dispatcher.dispatch), each part
// measured side by side in one process, rounds interleaved, CPU ns per sys_enter record (medians):
// records of big.dat decoded once into 4 KiB pages held in memory (no zstd, no merge: decode is
// the formats package's figure), then dispatched by programs that do less and less of syscount's
// work, so the differences are the parts; then the kernel JIT's own figure for syscount.o attached
// to sys_enter. (A batch path that queued the runs per VM and ran them in one call into wasm was
// measured with this script and dropped: commit 76fed64, reverted; see packages/vm's README.)
//
//   pnpm --filter @probeyard/runtime bench:split [--rounds N] [--records N] [--passes N] [--case K]
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { profileFormat, readProgramSpec } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { type RecordBatch, TraceRecord } from '@probeyard/formats';
import { openTraceDatFile } from '@probeyard/formats/node';
import { Dispatcher, type LoadedSpec, loadForProfile, loadSpec } from '../src/index.js';
import { findCorpus } from '../../../tooling/scripts/find-corpus.mjs';

const root = join(import.meta.dirname, '..', '..', '..');
const argNum = (name: string, d: number) => (process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : d);
const rounds = argNum('--rounds', 7);
const want = argNum('--records', 200_000);
const passes = argNum('--passes', 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cpuNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};

const big = findCorpus('trace-dat/big/big.dat');
if (!big) {
  console.log('split: the corpus big.dat is absent');
  process.exit(0);
}
const profile = await readProfile(big);
const sysEnter = profileFormat(profile, 'raw_syscalls/sys_enter')!;

// every record of the file's start, packed into 4 KiB pages in time order
const pages: Uint8Array[] = [];
const eventId = new Int32Array(want);
const cpu = new Int32Array(want);
const tsHigh = new Uint32Array(want);
const tsLow = new Uint32Array(want);
const page = new Int32Array(want);
const offset = new Int32Array(want);
const length = new Int32Array(want);
let n = 0;
let sysEnterCount = 0;
{
  const file = openTraceDatFile(big);
  const it = file.reader.records();
  let cur = new Uint8Array(4096);
  let at = 0;
  pages.push(cur);
  for (let r = it.next(); r && n < want; r = it.next()) {
    if (at + r.recordLength > 4096) {
      cur = new Uint8Array(4096);
      pages.push(cur);
      at = 0;
    }
    cur.set(r.bytes.subarray(r.recordOffset, r.recordOffset + r.recordLength), at);
    eventId[n] = r.eventId;
    cpu[n] = r.cpu;
    tsHigh[n] = r.tsHigh;
    tsLow[n] = r.tsLow;
    page[n] = pages.length - 1;
    offset[n] = at;
    length[n] = r.recordLength;
    if (r.eventId === sysEnter.id) sysEnterCount++;
    at += (r.recordLength + 7) & ~7;
    n++;
  }
  file.close();
}

class MemoryBatch implements RecordBatch {
  private i = 0;
  private readonly rec = new TraceRecord();
  reset(): this {
    this.i = 0;
    return this;
  }
  next(): TraceRecord | undefined {
    const i = this.i;
    if (i >= n) return undefined;
    this.i = i + 1;
    const r = this.rec;
    r.bytes = pages[page[i]!]!;
    r.recordOffset = offset[i]!;
    r.recordLength = length[i]!;
    r.eventId = eventId[i]!;
    r.cpu = cpu[i]!;
    r.tsHigh = tsHigh[i]!;
    r.tsLow = tsLow[i]!;
    return r;
  }
}
const batch = new MemoryBatch();
// 64 K records a dispatch, as the trace.dat stream's batches
class Slice implements RecordBatch {
  left = 0;
  next(): TraceRecord | undefined {
    if (this.left-- <= 0) return undefined;
    return batch.next();
  }
}
const slice = new Slice();
const dispatchAll = (d: Dispatcher) => {
  batch.reset();
  for (let done = 0; done < n; done += 65536) {
    slice.left = 65536;
    d.dispatch(slice);
  }
};

const asm = async (text: string, tier: 'compiled' | 'interpreter' = 'compiled'): Promise<LoadedSpec> =>
  loadSpec(await readProgramSpec(new TextEncoder().encode(`.license "GPL"\n${text}`)), {
    eventIds: new Map([['raw_syscalls/sys_enter', sysEnter.id]]),
    tier,
  });
const syscountSpec = await readProgramSpec(new Uint8Array(readFileSync(join(root, 'examples/c/syscount.o'))));
const syscount = (tier: 'compiled' | 'interpreter') => {
  const out = loadForProfile(syscountSpec, profile, { cpuCount: 4, tier });
  if (!out.ok) throw new Error(out.status);
  return out.loaded;
};
const mapDecl = '.map counts hash key=4 value=8 entries=1024\n';
const section = '.section tracepoint/raw_syscalls/sys_enter\nmain:\n';

// the sys_enter records' indexes (the direct rows loop over these only)
const enters = Int32Array.from({ length: n }, (_, i) => i).filter((i) => eventId[i] === sysEnter.id);
const cursor = new TraceRecord();
/** A row that runs `r0 = 0; exit` on sys_enter record `i` without the Dispatcher, entering one layer lower. */
type Direct = (l: LoadedSpec, i: number) => void;
const directs: { name: string; run: Direct }[] = [];
{
  // biome-ignore lint/suspicious/noExplicitAny: the VM's private stage and entries, for the measurement
  const priv = (l: LoadedSpec) => l.programs[0]!.runtime.vm as any;
  directs.push(
    {
      name: '`r0 = 0; exit`: EventRuntime.runTraceRecord on each sys_enter record, staged (no Dispatcher)',
      run: (l, i) => {
        cursor.bytes = pages[page[i]!]!;
        cursor.recordOffset = offset[i]!;
        cursor.recordLength = length[i]!;
        cursor.cpu = cpu[i]!;
        cursor.tsHigh = tsHigh[i]!;
        cursor.tsLow = tsLow[i]!;
        l.programs[0]!.runtime.runTraceRecord(cursor);
      },
    },
    {
      name: '`r0 = 0; exit`: EventRuntime.runBatchRecord on each (the batch lane the Dispatcher takes, no Dispatcher)',
      run: (l, i) => {
        cursor.bytes = pages[page[i]!]!;
        cursor.recordOffset = offset[i]!;
        cursor.recordLength = length[i]!;
        cursor.cpu = cpu[i]!;
        l.programs[0]!.runtime.runBatchRecord(cursor, tsLow[i]! | 0, tsHigh[i]! | 0);
      },
    },
    { name: '  Vm.run on each, staged (no runtime)', run: (l, i) => l.programs[0]!.runtime.vm.run(l.programs[0]!.program, pages[page[i]!]!, offset[i]!, length[i]!) },
    {
      name: '  the stage lookup and the compiled `start` entry alone (no Vm.run)',
      run: (l, i) => {
        const vm = priv(l);
        const staged = vm.stage.locate(pages[page[i]!]!, offset[i]!, length[i]!);
        vm.hotEntry.start(0, length[i]!, staged, 0);
      },
    },
  );
}

type Case = { name: string; make: () => Promise<LoadedSpec | undefined>; direct?: Direct };
const cases: Case[] = [
  { name: 'the batch iterated, no Dispatcher', make: async () => undefined },
  { name: 'Dispatcher, a target on an event the records lack (decode + table lookup)', make: () => asm('.section tracepoint/nosuch/event\nmain:\n  r0 = 0\n  exit\n') },
  { name: 'Dispatcher, `r0 = 0; exit` on sys_enter (per-run machinery)', make: () => asm(`${section}  r0 = 0\n  exit\n`) },
  { name: 'Dispatcher, read id, stack store, r0 = 0 (no helper)', make: () => asm(`${section}  r2 = *(u64 *)(r1 + 8)\n  *(u32 *)(r10 - 4) = r2\n  r0 = 0\n  exit\n`) },
  {
    name: 'Dispatcher, the same + bpf_get_smp_processor_id (a helper call into JavaScript)',
    make: () => asm(`${section}  r2 = *(u64 *)(r1 + 8)\n  *(u32 *)(r10 - 4) = r2\n  call bpf_get_smp_processor_id\n  r0 = 0\n  exit\n`),
  },
  {
    name: 'Dispatcher, the same with bpf_map_lookup_elem (hit) instead, no add',
    make: () => asm(`${mapDecl}${section}  r2 = *(u64 *)(r1 + 8)\n  *(u32 *)(r10 - 4) = r2\n  r1 = counts ll\n  r2 = r10\n  r2 += -4\n  call bpf_map_lookup_elem\n  r0 = 0\n  exit\n`),
  },
  { name: 'Dispatcher, syscount.o (compiled)', make: async () => syscount('compiled') },
  { name: 'Dispatcher, syscount.o (interpreter)', make: async () => syscount('interpreter') },
  ...directs.map((d) => ({ name: d.name, make: () => asm(`${section}  r0 = 0\n  exit\n`), direct: d.run })),
];
// --case K: only case K (and the batch alone), for a CPU profile of one case
if (process.argv.includes('--case')) {
  const k = argNum('--case', 0);
  cases.splice(0, cases.length, ...cases.filter((_, i) => i === 0 || i === k));
}
const loaded: (LoadedSpec | undefined)[] = [];
for (const c of cases) loaded.push(await c.make());
const results = cases.map(() => [] as number[]);
console.log(`split: ${n} records of big.dat in ${pages.length} pages, ${sysEnterCount} sys_enter; ${rounds} rounds; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
for (let r = 0; r <= rounds; r++) {
  cases.forEach((_c, k) => {
    const l = loaded[k];
    const t0 = cpuNs();
    const direct = cases[k]!.direct;
    if (direct !== undefined && l !== undefined) {
      const vm = l.programs[0]!.runtime.vm;
      vm.stageRecords(true);
      if (vm.run(l.programs[0]!.program, pages[0]!, offset[0]!, length[0]!) !== 0) throw new Error('r0 = 0 did not exit');
      for (let p = 0; p < passes; p++) for (let x = 0; x < enters.length; x++) direct(l, enters[x]!);
      vm.stageRecords(false);
      l.programs[0]!.runtime.flushBatch();
    } else if (l === undefined) {
      for (let p = 0; p < passes; p++) {
        batch.reset();
        let m = 0;
        for (let x = batch.next(); x; x = batch.next()) m += x.recordLength;
        if (m === 0) throw new Error('empty');
      }
    } else {
      const d = new Dispatcher();
      d.attach('t', l);
      for (let p = 0; p < passes; p++) dispatchAll(d);
      d.detach('t');
    }
    if (r > 0) results[k]!.push((cpuNs() - t0) / sysEnterCount / passes);
  });
}
const base = median(results[0]!);
console.log('| case | CPU ns per sys_enter record (median) | range over the rounds | minus the batch alone |');
console.log('|---|---|---|---|');
cases.forEach((c, k) => {
  const m = median(results[k]!);
  const sorted = [...results[k]!].sort((a, b) => a - b);
  console.log(`| ${c.name} | ${m.toFixed(1)} | ${sorted[0]!.toFixed(0)}–${sorted[sorted.length - 1]!.toFixed(0)} | ${c.direct ? '—' : (m - base).toFixed(1)} |`);
});
console.log(`load average at the end ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);

// the kernel JIT on the same bytes attached to sys_enter (run_time_ns / run_cnt under
// BPF_ENABLE_STATS), when bpf() is usable
{
  const { KernelRunner } = await import('@probeyard/vm/node');
  const opened = KernelRunner.open();
  const idFile = ['/sys/kernel/tracing', '/sys/kernel/debug/tracing'].map((t) => join(t, 'events/raw_syscalls/sys_enter/id')).find((f) => existsSync(f));
  if (!(opened instanceof KernelRunner)) console.log(`kernel: skipped: ${opened.unavailable}`);
  else if (idFile === undefined) {
    console.log('kernel: skipped: no tracefs with raw_syscalls/sys_enter');
    opened.close();
  } else {
    const l = syscount('compiled');
    const prog = l.programs[0]!;
    const tp = Number(readFileSync(idFile, 'utf8'));
    const maps = prog.runtime.vm.maps.map((m) => ({ type: m.spec.type, keySize: m.spec.keySize, valueSize: m.spec.valueSize, maxEntries: m.spec.maxEntries }));
    const per: number[] = [];
    for (let r = 0; r < 5; r++) {
      const k = await opened.attachTracepoint({ tracepointId: tp, syscalls: 200_000, insns: prog.program.bytes, maps });
      if (!k.ok) throw new Error(`kernel refused syscount.o: ${k.errno} ${k.log}`);
      per.push(k.runTimeNs / k.runs);
    }
    const k = median(per);
    console.log(`kernel JIT, syscount.o attached to sys_enter: ${per.map((x) => x.toFixed(1)).join(', ')} ns/run (median ${k.toFixed(1)})`);
    const full = cases.findIndex((c) => c.name === 'Dispatcher, syscount.o (compiled)');
    if (full >= 0) {
      const m = median(results[full]!);
      console.log(
        `syscount per sys_enter event / the kernel's run: ${(m / k).toFixed(2)}x with the batch iterated, ${((m - base) / k).toFixed(2)}x without (target 1.5x); load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`,
      );
    }
    opened.close();
  }
}
