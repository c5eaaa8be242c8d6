// Verification time and processed instructions of compiled programs (this package's fixtures and
// the library's programs), 24 independent branches, the largest accepted PREVAIL cases and a loop
// that runs into the complexity limit, side by side with what the running kernel reports
// (`verification time N usec`) when it can be used here. Ours is the median of timed batches
// after warming the JIT on every program; the ratio divides our CPU time (process-wide, so GC
// threads count) by the kernel's reported time, and the wall-clock ratio is printed too.
//   pnpm --filter @probeyard/verifier bench
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { readBpfObject } from '@probeyard/formats';
import { encodeInsns, linkObjectProgram, type MapDef, verify, type VerifyOptions } from '../src/index.js';
import { KernelLoader } from '../src/node/index.js';
import { corpus, loadCases, runCase } from '../test/prevail/harness.js';
import { assemblePrevail } from '../test/prevail/parse.js';
import { ACCEPTED } from '../test/programs.js';
import { asm } from '../test/support.js';

const here = import.meta.dirname;
const objectDirs = [
  join(here, '../test/fixtures/objects'),
  join(here, '../../formats/test/fixtures/objects'),
  join(here, '../../../../shared/corpus/bpf-elf'),
];

interface Row {
  name: string;
  insns: number;
  bytes: Uint8Array;
  maps: MapDef[];
  options?: VerifyOptions;
  kernel: boolean;
  /** Runs the case another way (PREVAIL cases need their initial state): returns ms and verdict. */
  custom?: () => { ms: number; ok: boolean; processed: string };
}

const rows: Row[] = [];
for (const dir of objectDirs) {
  if (!existsSync(dir)) continue;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.o') && !f.includes('bpfeb')).sort()) {
    const spec = readBpfObject(new Uint8Array(readFileSync(join(dir, file))));
    for (const p of spec.programs) {
      try {
        const l = linkObjectProgram(spec, p.name);
        rows.push({ name: `${file}:${p.name}`, insns: l.bytes.length / 8, bytes: l.bytes, maps: l.maps, kernel: true });
      } catch {
        // unsupported relocations (callbacks, externs): not benchmarked
      }
    }
  }
}
// r0 = 0; loop: r0 += 1; if r0 < 1000001 goto loop — runs into the 1M-instruction limit
rows.push({
  name: 'loop to the complexity limit',
  insns: 4,
  bytes: encodeInsns([
    { opcode: 0xb7, dst: 0, imm: 0 },
    { opcode: 0x07, dst: 0, imm: 1 },
    { opcode: 0xa5, dst: 0, imm: 1_000_001, off: -2 },
    { opcode: 0x95 },
  ]),
  maps: [],
  kernel: true,
});
// pruning: 24 independent branches on one random value (2^24 paths unless the branches' sides
// meet): `call bpf_get_prandom_u32; r6 = r0; r7 = 0`, `if r6 & 2^i goto +1; r7 += 2^i` for each i
{
  const lines = ['call bpf_get_prandom_u32', 'r6 = r0', 'r7 = 0'];
  for (let i = 0; i < 24; i++) lines.push(`if r6 & ${2 ** i} goto +1`, `r7 += ${2 ** i}`);
  const { bytes, maps } = asm([...lines, 'r0 = 0', 'exit'].join('\n'));
  rows.push({ name: '24 independent branches', insns: bytes.length / 8, bytes, maps, kernel: true });
}
// the library's programs (libbpf-tools style: option branches, log2 histograms)
const libraryDir = join(here, '../../../library/programs');
if (existsSync(libraryDir)) {
  for (const file of readdirSync(libraryDir).filter((f) => f.endsWith('.o')).sort()) {
    const spec = readBpfObject(new Uint8Array(readFileSync(join(libraryDir, file))));
    for (const p of spec.programs) {
      try {
        const l = linkObjectProgram(spec, p.name);
        rows.push({ name: `library ${file}:${p.name}`, insns: l.bytes.length / 8, bytes: l.bytes, maps: l.maps, kernel: true });
      } catch {
        // unsupported relocations: not benchmarked
      }
    }
  }
}
// precision: values that decide nothing (a counter, stored flags) must not split the state space
for (const name of [
  'bpf_loop callback counting in the caller stack',
  'bounded loop counting in the stack',
  'fourteen branches whose only effect is a flag stored in the stack',
]) {
  const c = ACCEPTED.find((x) => x.name === name);
  if (!c) continue;
  const { bytes, maps } = asm(c.source);
  rows.push({ name, insns: bytes.length / 8, bytes, maps, kernel: true });
}
if (existsSync(corpus)) {
  // the largest PREVAIL cases we accept, by processed instructions (their own initial state: ours only)
  const accepted = loadCases()
    .filter((c) => !c.expectReject && runCase(c).verdict === 'accept')
    .map((c) => ({ c, prog: assemblePrevail(c.doc.code as Record<string, unknown>) }))
    .sort((a, b) => b.prog.insns.length - a.prog.insns.length || a.c.key.localeCompare(b.c.key))
    .slice(0, 3);
  for (const { c, prog } of accepted) {
    rows.push({
      name: `prevail ${c.key}`,
      insns: prog.insns.length,
      bytes: encodeInsns(prog.insns),
      maps: [],
      kernel: false,
      custom: () => {
        const r = runCase(c);
        return { ms: r.ms, ok: r.verdict === 'accept', processed: '?' };
      },
    });
  }
}

const opened = await KernelLoader.open();
const kernel = 'unavailable' in opened ? null : opened;
if (!kernel) console.log(`kernel column empty: ${(opened as { unavailable: string }).unavailable}`);

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const lines: string[][] = [
  ['program', 'insns', 'ours: verdict', 'processed', 'cpu ms', 'wall ms', 'kernel: verdict', 'processed', 'ms', 'ours/kernel', 'processed ours/kernel'],
];
/** ours / kernel processed instructions of every row both accept. */
const processedRatios: number[] = [];
/** ours / kernel time of every row with both: our CPU time, and our wall-clock time. */
const ratios: number[] = [];
const wallRatios: number[] = [];
console.log(`load average at start: ${loadavg().map((x) => x.toFixed(2)).join(' ')} (2 cores shared: only the ratios are comparable)`);

// Steady state: the verifier's code is shared by every program, so the JIT is warmed on all of
// them together (a few runs of one program before measuring it left most of the code in the
// interpreter or baseline tiers, which measured V8's compiler, not the verifier).
const isLoop = (row: Row) => row.name.startsWith('loop');
for (let round = 0; round < 40; round++) {
  for (const row of rows) if (!isLoop(row) && !row.custom) verify(row.bytes, { maps: row.maps, ...row.options });
}

/**
 * Our time for one verification: the median of `samples` timed batches, each repeating the
 * verification often enough to last about a millisecond (a single microsecond-scale run is
 * below the timer's useful resolution), in process CPU time (what the ratio uses: preemption by
 * other jobs on the shared cores does not count) and wall-clock time of the same batches.
 */
function timeOurs(row: Row, samples: number): { ms: number; cpuMs: number; result: ReturnType<typeof verify> } {
  const run = () => verify(row.bytes, { maps: row.maps, ...row.options });
  let result = run();
  const t0 = performance.now();
  result = run();
  const once = performance.now() - t0;
  const batch = Math.max(1, Math.min(200, Math.ceil(1 / Math.max(once, 0.001))));
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let k = 0; k < samples; k++) {
    const c0 = process.cpuUsage();
    const t = performance.now();
    for (let j = 0; j < batch; j++) result = run();
    wall.push((performance.now() - t) / batch);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000 / batch);
  }
  return { ms: median(wall), cpuMs: median(cpu), result };
}

for (const row of rows) {
  const loop = isLoop(row);
  if (row.custom) {
    const custom = row.custom;
    const rs = Array.from({ length: 15 }, () => custom());
    lines.push([row.name, `${row.insns}`, rs[0]!.ok ? 'accept' : 'reject', rs[0]!.processed, '-', median(rs.map((r) => r.ms)).toFixed(3), '-', '-', '-', '-', '-']);
    continue;
  }
  const { ms, cpuMs, result } = timeOurs(row, loop ? 3 : 15);
  const ours = [row.name, `${row.insns}`, result.ok ? 'accept' : 'reject', `${result.stats.insnsProcessed}`, cpuMs.toFixed(3), ms.toFixed(3)];
  let kcols = ['-', '-', '-', '-', '-'];
  if (kernel && row.kernel) {
    const ks = [];
    for (let k = 0; k < (loop ? 3 : 15); k++) ks.push(await kernel.load(row.bytes, row.maps));
    const kv = ks[0]!;
    if (kv.errno !== 0 && kv.insnsProcessed === null) {
      lines.push([...ours, `error: ${kv.message}`, '-', '-', '-', '-']);
      continue;
    }
    const kms = median(ks.map((x) => (x.verificationUsec ?? 0) / 1000));
    const ratio = kms > 0 ? cpuMs / kms : Number.NaN;
    if (Number.isFinite(ratio)) {
      ratios.push(ratio);
      wallRatios.push(ms / kms);
    }
    let processedRatio = '-';
    if (kv.ok && result.ok && kv.insnsProcessed) {
      const pr = result.stats.insnsProcessed / kv.insnsProcessed;
      processedRatios.push(pr);
      processedRatio = pr.toFixed(2);
    }
    kcols = [kv.ok ? 'accept' : 'reject', `${kv.insnsProcessed ?? '?'}`, kms.toFixed(3), Number.isFinite(ratio) ? ratio.toFixed(2) : '-', processedRatio];
  }
  lines.push([...ours, ...kcols]);
}
kernel?.close();
const widths = lines[0]!.map((_, c) => Math.max(...lines.map((l) => l[c]!.length)));
for (const l of lines) console.log(l.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '));
if (ratios.length) {
  const summary = (rs: number[]) => {
    const geo = Math.exp(rs.reduce((a, r) => a + Math.log(r), 0) / rs.length);
    return `geometric mean ${geo.toFixed(2)}, max ${Math.max(...rs).toFixed(2)}, no slower than the kernel on ${rs.filter((r) => r <= 1).length}`;
  };
  console.log(`ours (CPU time) / kernel over ${ratios.length} programs: ${summary(ratios)}`);
  console.log(`ours (wall-clock) / kernel: ${summary(wallRatios)}`);
  if (processedRatios.length) {
    const geo = Math.exp(processedRatios.reduce((a, r) => a + Math.log(r), 0) / processedRatios.length);
    console.log(
      `processed instructions ours / kernel over ${processedRatios.length} programs both accept: geometric mean ${geo.toFixed(2)}, min ${Math.min(...processedRatios).toFixed(2)}, max ${Math.max(...processedRatios).toFixed(2)}, within 2x on ${processedRatios.filter((r) => r <= 2).length}`,
    );
  }
  console.log(`load average at end: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
}
