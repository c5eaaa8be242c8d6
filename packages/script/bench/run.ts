// Benchmarks of packages/script (pnpm --filter @probeyard/script bench):
//  1. compile time of a 20-line script (target ≤ 20 ms): the first compile of the process (cold:
//     module loading and JIT included) and the median of warm compiles, with and without the
//     verifier;
//  2. instructions per event of compiled scripts beside the clang-built examples of examples/c
//     doing the same (target ≤ 1.5x), run side by side on the same records in packages/vm.
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { type KernelProfile, type ProgramSpec, readProgramSpec } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import type { EventFormat } from '@probeyard/formats';
import { openTraceDatStream } from '@probeyard/formats/node';
import { Dispatcher, loadForProfile } from '@probeyard/runtime';
import { compileScript } from '../src/compile.js';
import { targetOfFormats, targetOfProfile } from '../src/target.js';
import { fixtureFormats, repoRoot } from '../test/support/formats.js';
import { type FieldValues, makeRecord } from '../test/support/harness.js';

const twentyLines = `#!/usr/bin/env bpftrace
BEGIN { printf("Tracing... Hit Ctrl-C to end.\\n"); }
tracepoint:sched:sched_wakeup /args.prio < 140/ {
  @qtime[args.pid] = nsecs;
}
tracepoint:sched:sched_switch {
  if (args.prev_state == 0) { @qtime[args.prev_pid] = nsecs; }
  $ns = @qtime[args.next_pid];
  if ($ns) { @usecs[args.next_comm] = hist((nsecs - $ns) / 1000); }
  delete(@qtime[args.next_pid]);
  @switches[cpu, args.next_comm == "swapper/0" ? "idle" : "busy"] = count();
}
tracepoint:raw_syscalls:sys_enter /pid != 1/ {
  @syscalls[args.id] = count();
  @bytes = lhist(args.args[2], 0, 4096, 256);
}
interval:s:5 {
  print(@syscalls, 10); clear(@syscalls);
}
END { clear(@qtime); printf("%d switches\\n", 0); }
`;

const formats = fixtureFormats('linux-6.18');
const target = targetOfFormats(formats, 'linux 6.18 fixture');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function compileOnce(verify: boolean): Promise<number> {
  const t = performance.now();
  const r = await compileScript(twentyLines, { target, verify });
  const ms = performance.now() - t;
  if (!r.ok) throw new Error('the bench script does not compile');
  return ms;
}

console.log(`script bench on ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cpus, load ${loadavg()[0]!.toFixed(1)}), node ${process.version}`);
const cold = await compileOnce(true);
const warmNoVerify: number[] = [];
const warmVerify: number[] = [];
for (let i = 0; i < 10; i++) await compileOnce(true);
for (let i = 0; i < 50; i++) warmNoVerify.push(await compileOnce(false));
for (let i = 0; i < 50; i++) warmVerify.push(await compileOnce(true));
console.log(`compile a ${twentyLines.trim().split('\n').length}-line script (run-queue latency, syscalls, switches: 6 programs), target ≤ 20 ms:`);
console.log(`  first compile of the process (cold, verified): ${cold.toFixed(1)} ms`);
console.log(`  warm median: ${median(warmNoVerify).toFixed(2)} ms without the verifier, ${median(warmVerify).toFixed(2)} ms verified`);

// ---- instructions per event ---------------------------------------------------------------------

interface Pair {
  name: string;
  object: string;
  script: string;
}

const pairs: Pair[] = [
  { name: 'syscount', object: 'syscount', script: 'tracepoint:raw_syscalls:sys_enter { @[args.id] = count(); }' },
  { name: 'switchcomm', object: 'switchcomm', script: 'tracepoint:sched:sched_switch { @[args.next_comm] = count(); }' },
  { name: 'execsnoop (count by file name)', object: 'execsnoop', script: 'tracepoint:sched:sched_process_exec { @[str(args.filename)] = count(); }' },
  {
    name: 'runqlat',
    object: 'runqlat',
    script: `tracepoint:sched:sched_wakeup { @start[args.pid] = nsecs; }
tracepoint:sched:sched_switch { $t = @start[args.next_pid]; if ($t) { @usecs = hist((nsecs - $t) / 1000); delete(@start[args.next_pid]); } }`,
  },
];

/** Records for a pair: the bundled recording for sched events, synthetic ones from real formats for the others. */
function syntheticRecords(event: string, n: number): { eventId: number; data: Uint8Array; timestamp: number; cpu: number }[] {
  const f = formats.find((x) => `${x.system}/${x.name}` === event) as EventFormat;
  const out = [];
  for (let i = 0; i < n; i++) {
    const values: FieldValues = event === 'raw_syscalls/sys_enter' ? { id: (i * 7919) % 331 } : { filename: `/usr/bin/tool${i % 97}`, pid: 1000 + i, old_pid: 1000 + i };
    out.push({ eventId: f.id, data: makeRecord(f, values, 100 + (i % 50)), timestamp: 1000 * (i + 1), cpu: i % 2 });
  }
  return out;
}

const small = join(repoRoot, 'examples', 'recordings', 'sched-small.dat');
const smallProfile = await readProfile(small);

async function fixtureProfile(): Promise<KernelProfile> {
  return readProfile(join(repoRoot, 'packages', 'compat', 'test', 'fixtures', 'formats', 'linux-6.18'));
}

async function perEvent(spec: ProgramSpec, events: string[], profile: KernelProfile): Promise<{ insns: number; runs: number }> {
  const out = loadForProfile(spec, profile, { cpuCount: 2 });
  if (!out.ok) throw new Error(`${out.status}`);
  if (events.every((e) => e.startsWith('sched/sched_s') || e.startsWith('sched/sched_w'))) {
    const stream = openTraceDatStream(small);
    const d = new Dispatcher();
    const t = d.attach('b', out.loaded);
    await d.run(stream);
    await stream.close();
    return { insns: t.counters.instructions, runs: t.counters.runs };
  }
  let insns = 0;
  let runs = 0;
  for (const e of events) {
    for (const r of syntheticRecords(e, 20_000)) {
      for (const rt of out.loaded.runtimesOf(r.eventId) ?? []) {
        const before = rt.counters.instructions;
        rt.runEvent(r);
        insns += rt.counters.instructions - before;
        runs++;
      }
    }
  }
  return { insns, runs };
}

console.log('\ninstructions per event, compiled script beside the clang-built example (target ≤ 1.5x):');
console.log(`  ${'program'.padEnd(32)} ${'clang'.padStart(8)} ${'script'.padStart(8)} ${'ratio'.padStart(7)}`);
const fixture = await fixtureProfile();
for (const p of pairs) {
  const object = await readProgramSpec(new Uint8Array(readFileSync(join(repoRoot, 'examples', 'c', `${p.object}.o`))));
  const events = object.programs.flatMap((x) => (x.attach.kind === 'tracepoint' ? [`${x.attach.system}/${x.attach.event}`] : []));
  const profile = events.every((e) => e.startsWith('sched/sched_s') || e.startsWith('sched/sched_w')) ? smallProfile : fixture;
  const compiled = await compileScript(p.script, { target: targetOfProfile(profile) });
  if (!compiled.ok) throw new Error(`${p.name} does not compile`);
  const c = await perEvent(object, events, profile);
  const s = await perEvent(compiled.spec, events, profile);
  const ci = c.insns / c.runs;
  const si = s.insns / s.runs;
  console.log(`  ${p.name.padEnd(32)} ${ci.toFixed(1).padStart(8)} ${si.toFixed(1).padStart(8)} ${(si / ci).toFixed(2).padStart(6)}x`);
}
