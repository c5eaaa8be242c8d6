// packages/runtime benchmarks, side by side in one run (the host is shared: ratios and CPU time
// are the figures to read, wall time only for reference):
//
// 1. Replay: syscount (examples/c/syscount.o) over the corpus big.dat (2.76 M events), per stage:
//    decode alone, decode + dispatch (a target attached to an event the file lacks: the table
//    lookup), decode + dispatch + VM + map update (syscount attached), and the VM alone on the
//    file's own sys_enter records. Events per CPU-second (a core's worth), rounds interleaved.
// 2. Live, as root with tracefs, a C compiler and bpftrace: a loop of 1 M getppid calls (built
//    here with cc) alone, with bpftrace counting syscalls by id, and with this package counting
//    (live tracefs feed + Dispatcher + syscount); the workload's CPU time, the tracer's own CPU
//    time over the same window, and the added CPU per event; then 500,000 calls at 1 M calls/s:
//    what each counted, and what the feed lost.
//
//   pnpm --filter @probeyard/runtime bench [--rounds N] [--replay-only] [--live-only]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, freemem, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { type ProgramSpec, profileFormat, readProgramSpec } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { type EventFormat, TraceRecord } from '@probeyard/formats';
import { openTraceDatFile, openTraceDatStream, openTracefsStream, removeStaleInstances } from '@probeyard/formats/node';
import { Dispatcher, loadForProfile, loadSpec } from '../src/index.js';
import { findCorpus } from '../../../tooling/scripts/find-corpus.mjs';

const root = join(import.meta.dirname, '..', '..', '..');
const arg = (name: string) => process.argv.includes(name);
const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const fmt = (n: number, d = 2) => n.toFixed(d);

function machine(): string {
  const c = cpus();
  return [
    `machine: ${c[0]?.model ?? 'unknown CPU'}, ${c.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB (${(freemem() / 2 ** 30).toFixed(1)} free)`,
    `         Linux ${release()}, Node ${process.version}, load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`,
  ].join('\n');
}

const syscountSpec = async (): Promise<ProgramSpec> => readProgramSpec(new Uint8Array(readFileSync(join(root, 'examples/c/syscount.o'))));

// ---- 1. replay ---------------------------------------------------------------------------------

async function replay(): Promise<void> {
  const big = findCorpus('trace-dat/big/big.dat');
  if (!big) {
    console.log('replay: skipped: the corpus big.dat is absent');
    return;
  }
  const spec = await syscountSpec();
  const profile = await readProfile(big);
  const sysEnter = profileFormat(profile, 'raw_syscalls/sys_enter')!;
  // a target the file has no records for: dispatch looks each record up and runs nothing
  const idle = loadSpec(await readProgramSpec(new TextEncoder().encode('.license "GPL"\n.section tracepoint/nosuch/event\nmain:\n  r0 = 0\n  exit\n')), { eventIds: new Map([['nosuch/event', 65535]]) });
  // the VM alone: the file's first 65,536 sys_enter records, copied out
  const samples: Uint8Array[] = [];
  {
    const file = openTraceDatFile(big);
    const it = file.reader.records();
    for (let r = it.next(); r && samples.length < 65536; r = it.next()) if (r.eventId === sysEnter.id) samples.push(r.data().slice());
    file.close();
  }
  const stages = { decode: [] as number[], dispatch: [] as number[], full: [] as number[], vm: [] as number[], fullWall: [] as number[] };
  let records = 0;
  let runs = 0;
  let counted = '';
  for (let round = 0; round < rounds; round++) {
    {
      const s = openTraceDatStream(big);
      const c0 = cpuNow();
      let n = 0;
      for await (const b of s) for (let r = b.next(); r; r = b.next()) n++;
      await s.close();
      stages.decode.push((cpuNow() - c0) / n);
      records = n;
    }
    {
      const s = openTraceDatStream(big);
      const d = new Dispatcher();
      d.attach('idle', idle);
      const c0 = cpuNow();
      await d.run(s);
      await s.close();
      stages.dispatch.push((cpuNow() - c0) / d.records);
    }
    {
      const s = openTraceDatStream(big);
      const out = loadForProfile(spec, profile, { cpuCount: s.info.cpuCount });
      if (!out.ok) throw new Error(`syscount: ${out.status}`);
      const d = new Dispatcher();
      const t = d.attach('syscount', out.loaded);
      const c0 = cpuNow();
      const w0 = performance.now();
      await d.run(s);
      await s.close();
      stages.full.push((cpuNow() - c0) / d.records);
      stages.fullWall.push((performance.now() - w0) / 1000 / d.records);
      runs = t.counters.runs;
      const m = out.loaded.snapshot()[0]!;
      counted = `${m.entries.length} syscall ids, ${m.entries.reduce((s, e) => s + (e.typedValues![0] as bigint), 0n)} calls`;
    }
    {
      const out = loadForProfile(spec, profile, { cpuCount: 4 });
      if (!out.ok) throw new Error(out.status);
      const rt = out.loaded.programs[0]!.runtime;
      const rec = new TraceRecord<EventFormat>();
      const n = 1_000_000;
      const c0 = cpuNow();
      for (let i = 0; i < n; i++) {
        const b = samples[i % samples.length]!;
        rec.bytes = b;
        rec.recordOffset = 0;
        rec.recordLength = b.length;
        rt.runTraceRecord(rec);
      }
      stages.vm.push((cpuNow() - c0) / n);
    }
  }
  const ns = (s: number) => s * 1e9;
  const decode = median(stages.decode);
  const dispatch = median(stages.dispatch);
  const full = median(stages.full);
  const vm = median(stages.vm);
  console.log(`\nreplay: syscount over big.dat: ${records} records, ${runs} runs (sys_enter), ${counted}; median of ${rounds} rounds, CPU time`);
  console.log('| stage | ns per record (CPU) | records per CPU-second |');
  console.log('|---|---|---|');
  console.log(`| decode (trace.dat: zstd, pages, merge) | ${fmt(ns(decode), 0)} | ${fmt(1 / decode / 1e6)} M |`);
  console.log(`| + dispatch (table by event id, no run) | ${fmt(ns(dispatch - decode), 0)} | ${fmt(1 / dispatch / 1e6)} M |`);
  console.log(`| + VM runs and map updates (syscount) | ${fmt(ns(full - dispatch), 0)} (${fmt(ns((full - dispatch) * (records / runs)), 0)} per run) | ${fmt(1 / full / 1e6)} M (target 3 M) |`);
  console.log(`| VM alone, per run (runtime.runTraceRecord on the file's sys_enter records) | ${fmt(ns(vm), 0)} | ${fmt(1 / vm / 1e6)} M runs |`);
  console.log(`wall: ${fmt(1 / median(stages.fullWall) / 1e6)} M records/s end to end (the host is shared: CPU time is the figure)`);
}

// ---- 2. live -----------------------------------------------------------------------------------

function liveMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root';
  if (!existsSync('/sys/kernel/tracing/events/raw_syscalls')) return 'no tracefs with raw_syscalls';
  const cc = ['cc', 'gcc', 'clang'].find((c) => spawnSync(c, ['--version']).status === 0);
  if (!cc) return 'no C compiler (cc, gcc, clang) for the workload';
  if (spawnSync('bpftrace', ['--version']).status !== 0) return 'bpftrace is not installed';
  return undefined;
}

/** CPU seconds of a process so far (utime + stime of /proc/<pid>/stat). */
function procCpu(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const hz = 100;
  return (Number(f[11]) + Number(f[12])) / hz;
}

interface Workload {
  calls: number;
  wall: number;
  cpu: number;
  pid: number;
}

/** Runs the workload; resolves with what it printed (calls, wall s, CPU s). */
function runWorkload(bin: string, calls: number, rate: number): Promise<Workload> {
  return new Promise((resolve, reject) => {
    const p = spawn(bin, [String(calls), String(rate)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('error', reject);
    p.on('exit', (code) => {
      const [n, wall, cpu] = out.trim().split(' ').map(Number);
      if (code !== 0 || n === undefined) reject(new Error(`workload exited ${code}: ${out}`));
      else resolve({ calls: n, wall: wall!, cpu: cpu!, pid: p.pid! });
    });
  });
}

interface TracedRun {
  workload: Workload;
  tracerCpu: number;
  counted: number;
  lost: number;
}

/** bpftrace counting sys_enter by id while the workload runs. */
async function withBpftrace(bin: string, calls: number, rate: number): Promise<TracedRun> {
  const bt = spawn('bpftrace', ['-e', 'tracepoint:raw_syscalls:sys_enter { @[args->id] = count(); }'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  bt.stderr.on('data', (d) => (err += d));
  await new Promise<void>((resolve, reject) => {
    bt.stdout.on('data', (d) => {
      out += d;
      if (out.includes('Attaching')) resolve();
    });
    bt.on('exit', () => reject(new Error(`bpftrace exited: ${err}`)));
  });
  await new Promise((r) => setTimeout(r, 300));
  const c0 = procCpu(bt.pid!);
  const workload = await runWorkload(bin, calls, rate);
  const tracerCpu = procCpu(bt.pid!) - c0;
  const exited = new Promise<void>((resolve) => bt.on('exit', () => resolve()));
  bt.kill('SIGINT');
  await exited;
  const m = /@\[110\]: (\d+)/.exec(out);
  const lost = /Lost (\d+) events/.exec(out);
  return { workload, tracerCpu, counted: m ? Number(m[1]) : 0, lost: lost ? Number(lost[1]) : 0 };
}

/**
 * This package counting: the live feed, a Dispatcher, syscount. With `paused`, nothing is read
 * while the workload runs (the instance's buffer holds it all), then the reader drains it: the
 * drain's wall and CPU time are the reader's sustained rate, whatever the workload could reach.
 */
async function withRuntime(bin: string, calls: number, rate: number, spec: ProgramSpec, paused = false): Promise<TracedRun & { drainWall?: number; drainCpu?: number }> {
  const profile = await readProfile('live');
  const stream = openTracefsStream({ events: ['raw_syscalls/sys_enter'] });
  const out = loadForProfile(spec, profile, { cpuCount: stream.info.cpuCount });
  if (!out.ok) throw new Error(`syscount: ${out.status}`);
  const d = new Dispatcher();
  const t = d.attach('syscount', out.loaded);
  const count = () => {
    const m = out.loaded.snapshot()[0]!;
    const e = m.entries.find((x) => x.typedKey === 110);
    return e ? Number(e.typedValues![0]) : 0;
  };
  const iter = stream[Symbol.asyncIterator]();
  let stop = false;
  let go: () => void = () => {};
  const started = paused ? new Promise<void>((resolve) => (go = resolve)) : Promise.resolve();
  let lastBatchAt = 0;
  let lastBatchCpu = 0;
  const reading = (async () => {
    await started;
    while (!stop) {
      const { value, done } = await iter.next();
      if (done) break;
      if (d.dispatch(value) > 0) {
        lastBatchAt = performance.now();
        lastBatchCpu = cpuNow();
      }
      d.syncLost(stream.stats);
    }
  })();
  await new Promise((r) => setTimeout(r, 300));
  const c0 = cpuNow();
  const workload = await runWorkload(bin, calls, rate);
  const w1 = performance.now();
  const c1 = cpuNow();
  go();
  // read until the workload's records are in (or a second without progress)
  let last = -1;
  let still = 0;
  for (;;) {
    const n = count();
    if (n >= calls || still >= 20) break;
    still = n === last ? still + 1 : 0;
    last = n;
    await new Promise((r) => setTimeout(r, 50));
  }
  const tracerCpu = cpuNow() - c0;
  // the drain: from the workload's end to the last batch that held records
  const drainWall = (lastBatchAt - w1) / 1000;
  const drainCpu = lastBatchCpu - c1;
  stop = true;
  await stream.close();
  await reading.catch(() => {});
  d.syncLost(stream.stats);
  return { workload, tracerCpu, counted: count(), lost: t.lostEvents, drainWall, drainCpu };
}

async function live(): Promise<void> {
  const missing = liveMissing();
  if (missing) {
    console.log(`\nlive: skipped: ${missing}`);
    return;
  }
  removeStaleInstances();
  const dir = mkdtempSync(join(tmpdir(), 'probeyard-bench-'));
  try {
    const bin = join(dir, 'getppid-load');
    const cc = ['cc', 'gcc', 'clang'].find((c) => spawnSync(c, ['--version']).status === 0)!;
    execFileSync(cc, ['-O2', '-o', bin, join(import.meta.dirname, 'getppid-load.c')]);
    const spec = await syscountSpec();
    const calls = 1_000_000;
    const alone: number[] = [];
    const bt: TracedRun[] = [];
    const ours: TracedRun[] = [];
    for (let round = 0; round < rounds; round++) {
      alone.push((await runWorkload(bin, calls, 0)).cpu);
      bt.push(await withBpftrace(bin, calls, 0));
      ours.push(await withRuntime(bin, calls, 0, spec));
    }
    const base = median(alone);
    const added = (r: TracedRun[]) => median(r.map((x) => x.workload.cpu - base + x.tracerCpu)) / calls;
    const row = (name: string, r: TracedRun[]) =>
      `| ${name} | ${fmt(median(r.map((x) => x.workload.cpu)), 3)} s | ${fmt(median(r.map((x) => x.tracerCpu)), 3)} s | ${fmt(added(r) * 1e9, 0)} ns | ${median(r.map((x) => x.counted))} | ${median(r.map((x) => x.lost))} |`;
    console.log(`\nlive: a loop of ${calls} getppid calls (as fast as it goes), median of ${rounds} rounds, rounds interleaved`);
    console.log('| run | workload CPU | tracer CPU (same window) | added CPU per event | getppid counted | lost |');
    console.log('|---|---|---|---|---|---|');
    console.log(`| workload alone | ${fmt(base, 3)} s | — | — | — | — |`);
    console.log(row('bpftrace (in-kernel count)', bt));
    console.log(row('probeyard (tracefs feed + VM)', ours));
    console.log(`ratio of added CPU per event, probeyard / bpftrace: ${fmt(added(ours) / added(bt))}x (target within 3x)`);

    const burst = 500_000;
    console.log(`\nlive: ${burst} getppid calls at 1 M calls/s`);
    console.log('| run | calls made | in (s) | getppid counted | lost (counted by the feed) |');
    console.log('|---|---|---|---|---|');
    for (let round = 0; round < rounds; round++) {
      const b = await withBpftrace(bin, burst, 1_000_000);
      console.log(`| bpftrace | ${b.workload.calls} | ${fmt(b.workload.wall, 3)} | ${b.counted} | ${b.lost} |`);
      const o = await withRuntime(bin, burst, 1_000_000, spec);
      console.log(`| probeyard | ${o.workload.calls} | ${fmt(o.workload.wall, 3)} | ${o.counted} | ${o.lost} |`);
    }
    // the reader's own rate: the workload buffered while nothing reads, then drained (the
    // buffer of the CPU the workload ran on must hold it: 400,000 sys_enter records are 27 MB)
    const drained = 400_000;
    console.log(`\nlive: the reader's sustained rate: ${drained} getppid calls buffered while nothing reads, then drained (tracefs feed + Dispatcher + syscount)`);
    console.log('| round | counted | lost | drain wall | drain CPU | records per second (wall) | records per CPU-second |');
    console.log('|---|---|---|---|---|---|---|');
    for (let round = 0; round < rounds; round++) {
      const o = await withRuntime(bin, drained, 0, spec, true);
      console.log(`| ${round + 1} | ${o.counted} | ${o.lost} | ${fmt(o.drainWall!, 3)} s | ${fmt(o.drainCpu!, 3)} s | ${fmt(o.counted / o.drainWall! / 1e6)} M | ${fmt(o.counted / o.drainCpu! / 1e6)} M |`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(machine());
if (!arg('--live-only')) await replay();
if (!arg('--replay-only')) await live();
console.log(`\n${machine().split('\n')[1]!.trim()} (at the end)`);
