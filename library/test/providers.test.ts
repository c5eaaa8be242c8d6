// The library's providers (issue 19, item 3) on the corpus kernels: which implementation serves
// each probe on each kernel, and the proof — a fork/exec/io script written against the providers
// runs (compatible or relocated) on every kernel that has the information, where the same script
// written against raw tracepoints is refused on some; and over the same recorded records both read
// the same values.
import { join } from 'node:path';
import { checkCompat, type KernelProfile, profileOfFiles, resolveProviderProbe, providerKernelOf, type ProgramSpec, type VerdictStatus } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { openTraceDatStream } from '@probeyard/formats/node';
import { Dispatcher, encodeMapSnapshot, loadForProfile, ScriptSession } from '@probeyard/runtime';
import { type CompiledScript, checkScriptCompat, compileScript, formatDiagnostics, providerResolver, targetOfProfile } from '@probeyard/script';
import { describe, expect, it } from 'vitest';
import { libraryEvents } from '../src/catalog.js';
import { bundledKernelFiles, libraryKernels } from '../src/kernels.js';
import { recordingsDir } from '../src/paths.js';
import { libraryProviders } from '../src/providers.js';

const providers = libraryProviders();

/** The bundled kernels, plus 4.4.88 with block_rq_complete's `errors` renamed `error` (nothing else changed). */
async function kernels(): Promise<[string, KernelProfile][]> {
  const events = await libraryEvents();
  const out: [string, KernelProfile][] = [];
  for (const k of libraryKernels) out.push([k.id, await profileOfFiles(bundledKernelFiles(k, events), { release: k.release, complete: true })]);
  const k44 = libraryKernels.find((k) => k.id === 'android-4.4.88')!;
  const renamed = bundledKernelFiles(k44, events).map((f) => (f.path === 'block/block_rq_complete/format' ? { ...f, text: f.text.replaceAll('errors', 'error') } : f));
  expect(renamed.some((f) => f.path === 'block/block_rq_complete/format' && /int error;/.test(f.text))).toBe(true);
  out.push(['synth-4.4.88-error', await profileOfFiles(renamed, { release: '4.4.88-error', complete: true })]);
  return out;
}

async function compileFor(text: string, profile: KernelProfile): Promise<CompiledScript> {
  const r = await compileScript(text, { target: targetOfProfile(profile), providers: providerResolver(providers) });
  if (!r.ok) throw new Error(formatDiagnostics(r.source, r.diagnostics));
  return r;
}

describe('the library providers', () => {
  it('parse, and name their probes', () => {
    expect(providers.map((p) => `${p.name}@${p.version}: ${p.probes.map((x) => x.name).join(' ')}`)).toEqual([
      'proc@1.0.0: exec fork exit',
      'sched@1.0.0: switch wakeup',
      'io@1.0.0: start done',
      'syscall@1.0.0: entry',
    ]);
  });

  it('cover the corpus kernels: the implementation of each probe per kernel, or why none', async () => {
    const table: Record<string, Record<string, string>> = {};
    for (const [id, profile] of await kernels()) {
      const row: Record<string, string> = {};
      for (const p of providers) {
        for (const probe of p.probes) {
          const r = resolveProviderProbe(p, probe.name, providerKernelOf(profile));
          row[`${p.name}:::${probe.name}`] = r.ok ? r.implementation : `none (${r.status})`;
        }
      }
      table[id] = row;
    }
    const old = { 'proc:::exec': 'sched_process_exec', 'proc:::fork': 'inline parent_comm', 'proc:::exit': 'inline comm', 'sched:::switch': 'inline comms', 'sched:::wakeup': 'inline comm', 'io:::start': 'block_rq_issue' };
    expect(table).toEqual({
      'android-3.4.0': { ...old, 'io:::done': 'errors (before 4.20)', 'syscall:::entry': 'none (incompatible)' },
      'android-3.10.40': { ...old, 'io:::done': 'errors (before 4.20)', 'syscall:::entry': 'none (incompatible)' },
      'android-3.10.49': { ...old, 'io:::done': 'errors (before 4.20)', 'syscall:::entry': 'raw_syscalls sys_enter' },
      'android-4.4.88': { ...old, 'io:::done': 'errors (before 4.20)', 'syscall:::entry': 'raw_syscalls sys_enter' },
      'android-5.10.43': { ...old, 'io:::done': 'error', 'syscall:::entry': 'raw_syscalls sys_enter' },
      'linux-6.18.44': { ...old, 'proc:::fork': '__data_loc parent_comm', 'io:::done': 'error', 'syscall:::entry': 'raw_syscalls sys_enter' },
      'synth-4.4.88-error': { ...old, 'io:::done': 'error', 'syscall:::entry': 'raw_syscalls sys_enter' },
    });
  });
});

// The fork/exec/io program, against the providers and against the raw tracepoints of 4.4.88.
const viaProviders = `proc:::fork { @forks[args.parent_comm, args.child_comm] = count(); }
proc:::exec { @execs[args.filename] = count(); }
io:::done { @errors[args.error] = count(); @bytes = sum(args.bytes); }`;
const raw44 = `t:sched:sched_process_fork { @forks[args.parent_comm, args.child_comm] = count(); }
t:sched:sched_process_exec { @execs[str(args.filename)] = count(); }
t:block:block_rq_complete { @errors[args.errors] = count(); @bytes = sum(args.nr_sector * 512); }`;
/** The raw script as one writes it for a kernel with `error` and `__data_loc` comms (6.18). */
const raw618 = `t:sched:sched_process_fork { @forks[str(args.parent_comm), str(args.child_comm)] = count(); }
t:sched:sched_process_exec { @execs[str(args.filename)] = count(); }
t:block:block_rq_complete { @errors[args.error] = count(); @bytes = sum(args.nr_sector * 512); }`;

describe('proof: a provider-based fork/exec/io program runs where the raw one is refused', () => {
  it('built on android 4.4.88: verdicts per kernel, each provider program naming its implementation', async () => {
    const all = await kernels();
    const build44 = all.find(([id]) => id === 'android-4.4.88')![1];
    const build = await compileFor(viaProviders, build44);
    const rawBuild = await compileFor(raw44, build44);
    const rows: Record<string, { providers: VerdictStatus; raw: VerdictStatus; via: string[] }> = {};
    for (const [id, profile] of all) {
      const v = await checkScriptCompat(viaProviders, build, profile, { providers });
      rows[id] = { providers: v.status, raw: checkCompat(rawBuild.spec, profile).status, via: v.programs.flatMap((p) => (p.via === undefined ? [] : [p.via.replace(/ via \w+@[\d.]+, implementation for /, ': ')])) };
    }
    const via44 = ['proc:::fork: inline parent_comm', 'proc:::exec: sched_process_exec', 'io:::done: errors (before 4.20)'];
    const viaNew = ['proc:::fork: inline parent_comm', 'proc:::exec: sched_process_exec', 'io:::done: error'];
    expect(rows).toEqual({
      'android-3.4.0': { providers: 'relocated', raw: 'relocated', via: via44 },
      'android-3.10.40': { providers: 'compatible', raw: 'compatible', via: via44 },
      'android-3.10.49': { providers: 'compatible', raw: 'compatible', via: via44 },
      'android-4.4.88': { providers: 'compatible', raw: 'compatible', via: via44 },
      'android-5.10.43': { providers: 'relocated', raw: 'incompatible', via: viaNew },
      'linux-6.18.44': { providers: 'relocated', raw: 'incompatible', via: ['proc:::fork: __data_loc parent_comm', 'proc:::exec: sched_process_exec', 'io:::done: error'] },
      'synth-4.4.88-error': { providers: 'relocated', raw: 'incompatible', via: viaNew },
    });
  });

  it('the raw program says why it is refused on 6.18: the renamed field and the inline comm that became __data_loc', async () => {
    const all = await kernels();
    const rawBuild = await compileFor(raw44, all.find(([id]) => id === 'android-4.4.88')![1]);
    const v = checkCompat(rawBuild.spec, all.find(([id]) => id === 'linux-6.18.44')![1]);
    expect([...new Set(v.reasons.map((r) => `${r.kind} ${r.field}`))].sort()).toEqual(['became-dynamic parent_comm', 'field-missing errors']);
  });
});

/** Runs a spec over a recording and returns its maps, keyed and sorted for comparison. */
async function runOver(spec: ProgramSpec, feed: string, profile: KernelProfile): Promise<Record<string, string[]>> {
  const out = loadForProfile(spec, profile);
  if (!out.ok) throw new Error(`${out.status} on ${feed}`);
  const dispatcher = new Dispatcher();
  dispatcher.attach('t', out.loaded);
  await new ScriptSession(out.loaded, { onText: () => {} }).run(openTraceDatStream(feed), dispatcher);
  const maps: Record<string, string[]> = {};
  for (const m of encodeMapSnapshot(out.loaded, { runId: 't', eventsSeen: 0, eventsLost: 0 }).maps) {
    if (m.name.startsWith('.')) continue;
    maps[m.name] = m.entries.map((e) => JSON.stringify([e.key, e.value])).sort();
  }
  return maps;
}

describe('same records, same values (the library recordings, Linux 6.18)', () => {
  it.each([
    // the README of the recordings: 12 forks and 11 execs; 257 requests completed
    ['procs.dat', { forks: 12, execs: 11 }],
    ['io.dat', { errors: 257 }],
  ] as const)('%s: the provider program built on 4.4.88, resolved for the recording, reads what the raw 6.18 program reads', async (file, counts) => {
    const feed = join(recordingsDir, file);
    const profile = await readProfile(feed);
    const all = await kernels();
    const build = await compileFor(viaProviders, all.find(([id]) => id === 'android-4.4.88')![1]);
    const v = await checkScriptCompat(viaProviders, build, profile, { providers });
    if (v.relocated === undefined) throw new Error(`provider program ${v.status} on ${file}: ${v.reasons.map((r) => r.text).join('; ')}`);
    // the recording holds only some events: the programs of the others are skipped there
    const fromProviders = await runOver(v.relocated, feed, profile);
    const fromRaw = await runOver((await compileFor(raw618, profile)).spec, feed, profile);
    for (const [name, total] of Object.entries(counts)) {
      // at least the workload's (other processes of the machine ran meanwhile)
      expect(fromProviders[name]!.reduce((n, row) => n + Number(JSON.parse(row)[1]), 0)).toBeGreaterThanOrEqual(total);
      expect(fromProviders[name]).toEqual(fromRaw[name]);
    }
    if (file === 'io.dat') expect(fromProviders.bytes).toEqual(fromRaw.bytes);
  });
});
