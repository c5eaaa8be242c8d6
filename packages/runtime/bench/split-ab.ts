// Two copies of this package's src (with their own packages/vm src) side by side in one process:
// the agent's batch path (Dispatcher.dispatch) over the same records of big.dat as split.ts, for
// a few of split.ts's rows, on each copy, rounds interleaved with the order alternating; CPU ns
// per sys_enter record (medians), after/before with the range of the per-round ratios; then
// checks that both copies counted the same runs, instructions, faults and events. (The kernel's
// figure is split.ts's.) `--no-check` skips the check, for an experiment that drops counters.
//
//   pnpm --filter @probeyard/runtime exec tsx --conditions=@probeyard/source bench/split-ab.ts \
//     <before>/packages/runtime/src/index.ts <after>/packages/runtime/src/index.ts [--rounds 9] [--passes 3]
//
// The before copy needs its own node_modules/@probeyard/vm pointing at its own packages/vm (e.g.
// `git archive main packages/vm packages/runtime | tar -x -C /tmp/before`, then symlinks for
// @probeyard/{vm,formats,isa,compat,verifier} as this package's node_modules has them).
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { profileFormat, readProgramSpec } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { type RecordBatch, TraceRecord } from '@probeyard/formats';
import { openTraceDatFile } from '@probeyard/formats/node';
import { findCorpus } from '../../../tooling/scripts/find-corpus.mjs';

type Package = typeof import('../src/index.js');
type LoadedSpec = import('../src/index.js').LoadedSpec;

const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const [beforePath, afterPath] = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
if (!beforePath || !afterPath) {
  console.log('usage: bench/split-ab.ts <before src/index.ts> <after src/index.ts> [--rounds N] [--passes N]');
  process.exit(2);
}
const rounds = Number(option('--rounds')) || 9;
const passes = Number(option('--passes')) || 3;
const want = Number(option('--records')) || 200_000;
const versions = [(await import(resolve(beforePath))) as Package, (await import(resolve(afterPath))) as Package];
const root = join(import.meta.dirname, '..', '..', '..');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cpuNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};
const big = findCorpus('trace-dat/big/big.dat');
if (!big) {
  console.log('split-ab: the corpus big.dat is absent');
  process.exit(0);
}
const profile = await readProfile(big);
const sysEnter = profileFormat(profile, 'raw_syscalls/sys_enter')!;

// the records packed into 4 KiB pages, as split.ts does
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
  left = 0;
  reset(): this {
    this.i = 0;
    return this;
  }
  next(): TraceRecord | undefined {
    const i = this.i;
    if (i >= n || this.left-- <= 0) return undefined;
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

const section = '.section tracepoint/raw_syscalls/sys_enter\nmain:\n';
const mapDecl = '.map counts hash key=4 value=8 entries=1024\n';
const asmSpec = async (text: string) => readProgramSpec(new TextEncoder().encode(`.license "GPL"\n${text}`));
const syscountSpec = await readProgramSpec(new Uint8Array(readFileSync(join(root, 'examples/c/syscount.o'))));
interface Case {
  name: string;
  make: (pkg: Package) => Promise<LoadedSpec>;
}
const asmCase = (name: string, text: string): Case => {
  const spec = asmSpec(text);
  return { name, make: async (pkg) => pkg.loadSpec(await spec, { eventIds: new Map([['raw_syscalls/sys_enter', sysEnter.id]]), tier: 'compiled' }) };
};
const cases: Case[] = [
  asmCase('`r0 = 0; exit` on sys_enter (per-run machinery)', `${section}  r0 = 0\n  exit\n`),
  asmCase(
    'read id, stack store, bpf_get_smp_processor_id',
    `${section}  r2 = *(u64 *)(r1 + 8)\n  *(u32 *)(r10 - 4) = r2\n  call bpf_get_smp_processor_id\n  r0 = 0\n  exit\n`,
  ),
  asmCase(
    'read id, bpf_map_lookup_elem (hit)',
    `${mapDecl}${section}  r2 = *(u64 *)(r1 + 8)\n  *(u32 *)(r10 - 4) = r2\n  r1 = counts ll\n  r2 = r10\n  r2 += -4\n  call bpf_map_lookup_elem\n  r0 = 0\n  exit\n`,
  ),
  {
    name: 'syscount.o (compiled)',
    make: async (pkg) => {
      const out = pkg.loadForProfile(syscountSpec, profile, { cpuCount: 4, tier: 'compiled' });
      if (!out.ok) throw new Error(out.status);
      return out.loaded;
    },
  },
];
const only = option('--only') ? new RegExp(option('--only') as string) : undefined;
const chosen = only ? cases.filter((c) => only.test(c.name)) : cases;
const loaded: LoadedSpec[][] = [];
for (const c of chosen) loaded.push([await c.make(versions[0]!), await c.make(versions[1]!)]);
const dispatchers = loaded.map((pair) =>
  pair.map((l, v) => {
    const d = new versions[v]!.Dispatcher();
    d.attach('t', l);
    return d;
  }),
);
const results = chosen.map(() => [[] as number[], [] as number[]]);
const ratios = chosen.map(() => [] as number[]);
console.log(`split-ab: ${n} records in ${pages.length} pages, ${sysEnterCount} sys_enter; ${rounds} rounds of ${passes} passes; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
for (let r = 0; r <= rounds; r++) {
  chosen.forEach((_c, k) => {
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    const per = [0, 0];
    for (const v of order) {
      const d = dispatchers[k]![v]!;
      const t0 = cpuNs();
      for (let p = 0; p < passes; p++) {
        batch.reset();
        for (let done = 0; done < n; done += 65536) {
          batch.left = 65536;
          (d as { dispatch(b: RecordBatch): number }).dispatch(batch);
        }
      }
      per[v] = (cpuNs() - t0) / sysEnterCount / passes;
    }
    if (r > 0) {
      results[k]![0]!.push(per[0]!);
      results[k]![1]!.push(per[1]!);
      ratios[k]!.push(per[1]! / per[0]!);
    }
  });
}
// the counters of both copies agree (the same work was done)
for (let k = 0; k < chosen.length; k++) {
  const [a, b] = dispatchers[k]!.map((d) => JSON.stringify((d as { target(id: string): { counters: { runs: number; instructions: number; faults: number; eventsSeen: number } } | undefined }).target('t')!.counters, ['runs', 'instructions', 'faults', 'eventsSeen']));
  if (a !== b && !args.includes('--no-check')) throw new Error(`${chosen[k]!.name}: counters differ: ${a} / ${b}`);
}
console.log('| per sys_enter event, CPU ns (medians) | before | after | after/before (median of per-round ratios, range) |');
console.log('|---|---|---|---|');
chosen.forEach((c, k) => {
  const rs = [...ratios[k]!].sort((a, b) => a - b);
  console.log(`| ${c.name} | ${median(results[k]![0]!).toFixed(1)} | ${median(results[k]![1]!).toFixed(1)} | ${median(rs).toFixed(2)} (${rs[0]!.toFixed(2)}–${rs[rs.length - 1]!.toFixed(2)}) |`);
});
console.log(`load average at the end ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
