// One-liners of the shapes of bpftrace's one-liner tutorial and of tools that use only
// tracepoints, compiled for a recording's own formats, verified and run over it as `probeyard run`
// does; every expectation is computed here from the recording's records, read independently with
// packages/formats. The bundled recording (examples/recordings) always runs; the shared corpus's
// (trace.dat with sched and irq events, big.dat with 1.37 million syscalls) when present.
import { existsSync, readFileSync } from 'node:fs';
import { parseProvider } from '@probeyard/compat';
import { join } from 'node:path';
import type { JsonValue } from '@probeyard/runtime';
import { describe, expect, it } from 'vitest';
import { providerResolver } from '../src/providers.js';
import { repoRoot } from './support/formats.js';
import { countRows, log2Slot, type PlainRecord, readRecording, runOnRecording } from './support/recording.js';

const small = join(repoRoot, 'examples', 'recordings', 'sched-small.dat');
const corpusDir = join(repoRoot, '..', 'shared', 'corpus', 'trace-dat');
const traceDat = join(corpusDir, 'trace.dat');
const big = join(corpusDir, 'big', 'big.dat');

const n = (v: bigint) => (v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString());
const of = (recs: PlainRecord[], event: string) => recs.filter((r) => r.event === event);
/** The largest (sign 1) or smallest (-1) of some bigints. */
function extreme(xs: bigint[], sign: 1 | -1): bigint {
  let m = xs[0]!;
  for (const x of xs) if ((sign > 0 && x > m) || (sign < 0 && x < m)) m = x;
  return m;
}

type Case = {
  name: string;
  script: string;
  /** Expected maps (name → rows) and printf text, from the records. */
  expect: (recs: PlainRecord[]) => { maps?: Record<string, [JsonValue | undefined, JsonValue][]>; text?: string };
};

/** bpftrace's one-liner tutorial and its tracepoint tools, on sched events. */
const schedCases: Case[] = [
  {
    name: 'context switches by the task leaving (tutorial: @[comm] = count())',
    script: 'tracepoint:sched:sched_switch { @[args.prev_comm] = count(); }',
    expect: (recs) => ({ maps: { '': countRows(of(recs, 'sched/sched_switch').map((r) => r.str('prev_comm'))) } }),
  },
  {
    name: 'wakeups by the woken task and CPU, filtered by a predicate',
    script: 'tracepoint:sched:sched_wakeup /args.target_cpu == 1/ { @[args.comm, args.pid] = count(); }',
    expect: (recs) => ({
      maps: { '': countRows(of(recs, 'sched/sched_wakeup').filter((r) => r.int('target_cpu') === 1n).map((r) => ({ k0: r.str('comm'), k1: n(r.int('pid')) }))) },
    }),
  },
  {
    name: 'switches per CPU and per current task (cpu, comm builtins)',
    script: 'tracepoint:sched:sched_switch { @cpu[cpu] = count(); @comm[comm] = count(); }',
    expect: (recs) => ({
      maps: { cpu: countRows(of(recs, 'sched/sched_switch').map((r) => r.cpu)), comm: countRows(of(recs, 'sched/sched_switch').map((r) => r.comm)) },
    }),
  },
  {
    name: 'runqlat.bt: run-queue latency as a log2 histogram of microseconds',
    script: `tracepoint:sched:sched_wakeup { @qtime[args.pid] = nsecs; }
tracepoint:sched:sched_switch {
  $ns = @qtime[args.next_pid];
  if ($ns) { @usecs = hist((nsecs - $ns) / 1000); }
  delete(@qtime[args.next_pid]);
}
END { clear(@qtime); }`,
    expect: (recs) => {
      const q = new Map<bigint, bigint>();
      const slots: number[] = [];
      for (const r of recs) {
        if (r.event === 'sched/sched_wakeup') q.set(r.int('pid'), r.timeNs);
        if (r.event === 'sched/sched_switch') {
          const t = q.get(r.int('next_pid'));
          if (t !== undefined && t !== 0n) slots.push(log2Slot((r.timeNs - t) / 1000n));
          q.delete(r.int('next_pid'));
        }
      }
      return { maps: { usecs: countRows(slots), qtime: [] } };
    },
  },
  {
    name: 'priorities: lhist, stats, avg, min, max',
    script: 'tracepoint:sched:sched_switch { @prio = lhist(args.next_prio, 0, 140, 20); @s = stats(args.next_prio); @a[cpu] = avg(args.prev_prio); @mx = max(args.next_pid); @mn = min(args.prev_state); }',
    expect: (recs) => {
      const sw = of(recs, 'sched/sched_switch');
      const slot = (v: bigint) => (v < 0n ? 0 : v > 140n ? 8 : 1 + Number(v / 20n));
      const sum = (xs: bigint[]) => xs.reduce((s, x) => s + x, 0n);
      const byCpu = [0, 1].filter((c) => sw.some((r) => r.cpu === c)).map((c) => {
        const xs = sw.filter((r) => r.cpu === c).map((r) => r.int('prev_prio'));
        return [c, { count: xs.length, total: n(sum(xs)) }] as [JsonValue, JsonValue];
      });
      const next = sw.map((r) => r.int('next_prio'));
      return {
        maps: {
          prio: countRows(sw.map((r) => slot(r.int('next_prio')))),
          s: [[undefined, { count: next.length, total: n(sum(next)) }]],
          a: byCpu,
          mx: [[undefined, n(extreme(sw.map((r) => r.int('next_pid')), 1))]],
          mn: [[undefined, n(extreme(sw.map((r) => r.int('prev_state')), -1))]],
        },
      };
    },
  },
  {
    name: 'printf per event (tutorial: printf with a predicate)',
    script: 'tracepoint:sched:sched_wakeup /args.prio < 100/ { printf("%-16s %6d %d\\n", args.comm, args.pid, args.prio); }',
    expect: (recs) => ({
      text: of(recs, 'sched/sched_wakeup')
        .filter((r) => r.int('prio') < 100n)
        .map((r) => `${r.str('comm').padEnd(16)} ${String(r.int('pid')).padStart(6)} ${r.int('prio')}\n`)
        .join(''),
    }),
  },
  {
    name: 'intervals by trace time: switches per 100 ms, printed and cleared',
    script: 'tracepoint:sched:sched_switch { @n = count(); } interval:ms:100 { printf("%d\\n", @n); clear(@n); } END { clear(@n); }',
    expect: (recs) => {
      const t0 = recs[0]!.timeNs;
      const sw = of(recs, 'sched/sched_switch');
      const last = recs[recs.length - 1]!.timeNs;
      const lines: string[] = [];
      for (let due = t0 + 100_000_000n; due <= last; due += 100_000_000n) {
        // an interval due at `due` fires before the first record at or after it
        const firstAfter = recs.find((r) => r.timeNs >= due);
        if (firstAfter === undefined) break;
        const since = due - 100_000_000n;
        lines.push(String(sw.filter((r) => r.timeNs >= since && r.timeNs < due).length));
      }
      return { text: lines.map((l) => `${l}\n`).join(''), maps: { n: [] } };
    },
  },
  {
    name: 'states of the task leaving, by a ternary and string comparisons',
    script: 'tracepoint:sched:sched_switch { @[args.prev_state == 0 ? "running" : "blocked", args.next_comm == "swapper/0" || args.next_comm == "swapper/1"] = count(); }',
    expect: (recs) => ({
      maps: {
        '': countRows(
          of(recs, 'sched/sched_switch').map((r) => ({ k0: r.int('prev_state') === 0n ? 'running' : 'blocked', k1: r.str('next_comm') === 'swapper/0' || r.str('next_comm') === 'swapper/1' ? 1 : 0 })),
        ),
      },
    }),
  },
];

/** syscount.bt and friends, on raw syscalls. */
const syscallCases: Case[] = [
  {
    name: 'syscount.bt: syscalls by id',
    script: 'tracepoint:raw_syscalls:sys_enter { @[args.id] = count(); }',
    expect: (recs) => ({ maps: { '': countRows(of(recs, 'raw_syscalls/sys_enter').map((r) => n(r.int('id')))) } }),
  },
  {
    name: 'failed syscalls by errno and process',
    script: 'tracepoint:raw_syscalls:sys_exit /args.ret < 0/ { @[comm, -args.ret] = count(); }',
    expect: (recs) => ({ maps: { '': countRows(of(recs, 'raw_syscalls/sys_exit').filter((r) => r.int('ret') < 0n).map((r) => ({ k0: r.comm, k1: n(-r.int('ret')) }))) } }),
  },
];

function check(run: Awaited<ReturnType<typeof runOnRecording>>, want: ReturnType<Case['expect']>) {
  if (want.text !== undefined) expect(run.text).toBe(want.text);
  for (const [name, rows] of Object.entries(want.maps ?? {})) expect(run.maps.get(name), `@${name}`).toEqual(rows);
}

describe('one-liners over the bundled recording (examples/recordings/sched-small.dat)', async () => {
  const recs = await readRecording(small);
  it.each(schedCases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const run = await runOnRecording(c.script, small);
    expect(run.status).toBe('compatible');
    check(run, c.expect(recs));
  });
});

const haveCorpus = existsSync(traceDat);
if (!haveCorpus) console.log(`script corpus one-liners skipped: ${traceDat} is absent (the shared corpus is not beside this checkout)`);
describe.skipIf(!haveCorpus)('one-liners over the corpus recording (trace.dat)', async () => {
  const recs = haveCorpus ? await readRecording(traceDat) : [];
  it.each(schedCases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    check(await runOnRecording(c.script, traceDat), c.expect(recs));
  });
});

const haveBig = existsSync(big);
if (!haveBig) console.log(`script syscall one-liners skipped: ${big} is absent (the shared corpus is not beside this checkout)`);
describe.skipIf(!haveBig)('syscall one-liners over 1.37 million syscalls (big.dat)', async () => {
  const recs = haveBig ? (await readRecording(big)).filter((r) => r.event.startsWith('raw_syscalls/')) : [];
  it.each(syscallCases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    check(await runOnRecording(c.script, big), c.expect(recs));
  }, 300_000);
});

// Provider probes (issue 19) over the same recordings: the library's providers (read as files:
// library/providers/*.json), resolved for the recording's formats, read the same values as the
// raw-tracepoint scripts, which are checked against the records themselves.
const libraryProvider = (name: string) => parseProvider(readFileSync(join(repoRoot, 'library', 'providers', `${name}.json`), 'utf8'));
const providerCases: { name: string; viaProvider: string; raw: string; file: () => string; maps: string[] }[] = [
  {
    name: 'sched:::switch and sched:::wakeup on trace.dat',
    viaProvider: 'sched:::switch { @[args.prev_comm, args.next_pid] = count(); @state[args.prev_state] = count(); } sched:::wakeup /args.target_cpu == 1/ { @woken[args.comm, args.pid] = count(); }',
    raw: 't:sched:sched_switch { @[args.prev_comm, args.next_pid] = count(); @state[args.prev_state] = count(); } t:sched:sched_wakeup /args.target_cpu == 1/ { @woken[args.comm, args.pid] = count(); }',
    file: () => traceDat,
    maps: ['', 'state', 'woken'],
  },
  {
    name: 'syscall:::entry on big.dat (1.37 million syscalls)',
    viaProvider: 'syscall:::entry { @[args.id] = count(); @fd[args.id, args.arg0 & 0xff] = count(); }',
    raw: 't:raw_syscalls:sys_enter { @[args.id] = count(); @fd[args.id, args.args[0] & 0xff] = count(); }',
    file: () => big,
    maps: ['', 'fd'],
  },
];
describe.skipIf(!haveCorpus)('provider probes over the corpus recordings read what the raw tracepoints read', () => {
  it.each(providerCases.filter((c) => existsSync(c.file())).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const providers = providerResolver(['sched', 'syscall'].map(libraryProvider));
    const viaProvider = await runOnRecording(c.viaProvider, c.file(), { providers });
    const raw = await runOnRecording(c.raw, c.file());
    for (const name of c.maps) {
      expect(viaProvider.maps.get(name)!.length, `@${name}`).toBeGreaterThan(0);
      expect(viaProvider.maps.get(name), `@${name}`).toEqual(raw.maps.get(name));
    }
    expect(viaProvider.drawn).toBe(raw.drawn);
  }, 600_000);
});
