// Provider probes end to end without the corpus: a script written against `proc:::fork` and
// `io:::done` compiles through the implementation each kernel needs, gets a verdict that names it,
// and reads the same values from the same records as the raw-tracepoint script compiled for that
// kernel; the raw script built on an old kernel is refused where the provider one runs.
import { join } from 'node:path';
import { checkCompat, type KernelProfile, parseProvider, profileOfFiles } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import type { EventFormat } from '@probeyard/formats';
import { describe, expect, it } from 'vitest';
import { type CompiledScript, compileScript } from '../src/compile.js';
import { checkScriptCompat, providerResolver } from '../src/providers.js';
import { formatDiagnostics } from '../src/source-text.js';
import { targetOfProfile } from '../src/target.js';
import { fixtureFormatsDir, makeRecord, ScriptRun } from './support/harness.js';

const proc = parseProvider(
  JSON.stringify({
    provider: 'proc',
    version: '1.0.0',
    probes: {
      fork: {
        args: { parent_pid: 'int', parent_comm: 'string', child_pid: 'int', child_comm: 'string' },
        implementations: [
          {
            for: 'inline parent_comm',
            tracepoint: 'sched/sched_process_fork',
            when: [{ field: 'parent_comm', kind: 'char[]' }],
            args: { parent_pid: 'args.parent_pid', parent_comm: 'args.parent_comm', child_pid: 'args.child_pid', child_comm: 'args.child_comm' },
          },
          {
            for: '__data_loc parent_comm',
            tracepoint: 'sched/sched_process_fork',
            when: [{ field: 'parent_comm', kind: '__data_loc' }],
            args: { parent_pid: 'args.parent_pid', parent_comm: 'str(args.parent_comm)', child_pid: 'args.child_pid', child_comm: 'str(args.child_comm)' },
          },
        ],
      },
    },
  }),
);

const ioJson = (withRename: boolean) => ({
  provider: 'io',
  version: withRename ? '1.1.0' : '1.0.0',
  probes: {
    done: {
      args: { dev: 'int', sector: 'int', bytes: 'int', error: 'int' },
      implementations: [
        { for: 'errors', tracepoint: 'block/block_rq_complete', args: { dev: 'args.dev', sector: 'args.sector', bytes: 'args.nr_sector * 512', error: 'args.errors' } },
        ...(withRename ? [{ for: 'error (renamed in 4.20)', tracepoint: 'block/block_rq_complete', args: { dev: 'args.dev', sector: 'args.sector', bytes: 'args.nr_sector * 512', error: 'args.error' } }] : []),
      ],
    },
  },
});

const fixtureProfile = (kernel: string): Promise<KernelProfile> => readProfile(join(fixtureFormatsDir, kernel), { release: kernel, complete: false });

const header = `\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
`;
/** block_rq_complete as 4.4.88 has it, or with `errors` renamed `error` (and nothing else moved). */
const completeText = (errorField: string) => `name: block_rq_complete\nID: 392\nformat:\n${header}
\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:int ${errorField};\toffset:28;\tsize:4;\tsigned:1;
\tfield:char rwbs[8];\toffset:32;\tsize:8;\tsigned:0;

print fmt: "%d", REC->${errorField}
`;
const blockProfile = (errorField: string) => profileOfFiles([{ path: 'block/block_rq_complete/format', text: completeText(errorField) }], { release: `block-${errorField}` });

async function compileFor(text: string, profile: KernelProfile, providers = [proc]): Promise<CompiledScript> {
  const r = await compileScript(text, { target: targetOfProfile(profile), providers: providerResolver(providers) });
  if (!r.ok) throw new Error(formatDiagnostics(r.source, r.diagnostics));
  return r;
}

const forkScript = 'proc:::fork { @[args.parent_comm, args.parent_pid, args.child_comm, args.child_pid] = count(); }';
const rawForkScript = 't:sched:sched_process_fork { @[args.parent_comm, args.parent_pid, args.child_comm, args.child_pid] = count(); }';
const forks = [
  { parent_comm: 'bash', parent_pid: 100, child_comm: 'bash', child_pid: 101 },
  { parent_comm: 'make', parent_pid: 200, child_comm: 'make', child_pid: 201 },
  { parent_comm: 'bash', parent_pid: 100, child_comm: 'bash', child_pid: 101 },
];

function formatOf(profile: KernelProfile, event: string): EventFormat {
  const f = targetOfProfile(profile).format(...(event.split('/') as [string, string]));
  if (f === undefined) throw new Error(`no ${event}`);
  return f;
}

function runOn(spec: CompiledScript['spec'], profile: KernelProfile, event: string, rows: Record<string, number | string>[]) {
  const format = { ...formatOf(profile, event), id: 7 };
  return new ScriptRun(spec, { formats: [format] }).run(rows.map((values, i) => ({ event, data: makeRecord(format, values), timestamp: i + 1 }))).entries('');
}

describe('proc:::fork across the __data_loc change', () => {
  it('built on 3.4.0 (inline comm): the raw script is refused on 6.18, the provider script resolves there and names the implementation', async () => {
    const old = await fixtureProfile('android-3.4.0');
    const k618 = await fixtureProfile('linux-6.18');
    const raw = await compileFor(rawForkScript, old);
    expect(checkCompat(raw.spec, k618).status).toBe('incompatible');

    const build = await compileFor(forkScript, old);
    expect(build.providerPrograms).toEqual([{ program: 'sched_process_fork_0', probe: 'proc:::fork', event: 'sched/sched_process_fork', via: 'proc@1.0.0, implementation for inline parent_comm', implementation: 'inline parent_comm', provider: 'proc', version: '1.0.0' }]);
    const onOld = await checkScriptCompat(forkScript, build, old, { providers: [proc] });
    expect(onOld.status).toBe('compatible');
    expect(onOld.programs[0]!.via).toBe('proc:::fork via proc@1.0.0, implementation for inline parent_comm');

    const on618 = await checkScriptCompat(forkScript, build, k618, { providers: [proc] });
    expect(on618.status).toBe('relocated');
    expect(on618.programs[0]!.via).toBe('proc:::fork via proc@1.0.0, implementation for __data_loc parent_comm');
    expect(on618.programs[0]!.provider).toEqual({ probe: 'proc:::fork', provider: 'proc', version: '1.0.0', implementation: '__data_loc parent_comm' });
    expect(on618.programs[0]!.changes).toEqual([
      'proc:::fork: through proc@1.0.0, implementation for __data_loc parent_comm on sched/sched_process_fork (built through proc@1.0.0, implementation for inline parent_comm on sched/sched_process_fork)',
    ]);
    expect(on618.relocated!.programs[0]!.fieldRelocations.filter((r) => r.dataLoc).map((r) => r.field).sort()).toEqual(['child_comm', 'parent_comm']);
  });

  it.each(['android-3.4.0', 'android-3.10.49', 'linux-6.18'])('on %s the provider spec and the raw script compiled there read the same values from the same records', async (kernel) => {
    const profile = await fixtureProfile(kernel);
    const build = await compileFor(forkScript, await fixtureProfile('android-3.4.0'));
    const v = await checkScriptCompat(forkScript, build, profile, { providers: [proc] });
    if (v.relocated === undefined) throw new Error(`not runnable on ${kernel}: ${v.status}`);
    const viaProvider = runOn(v.relocated, profile, 'sched/sched_process_fork', forks);
    const raw = runOn((await compileFor(rawForkScript, profile)).spec, profile, 'sched/sched_process_fork', forks);
    expect(viaProvider).toEqual(raw);
    expect(viaProvider).toEqual([
      [{ k0: 'bash', k1: 100, k2: 'bash', k3: 101 }, 2],
      [{ k0: 'make', k1: 200, k2: 'make', k3: 201 }, 1],
    ]);
  });
});

describe('io:::done across the errors → error rename: fix the provider', () => {
  const script = 'io:::done /args.error != 0/ { @[args.error] = count(); @bytes = sum(args.bytes); }';
  const rows = [
    { dev: 8, sector: 10, nr_sector: 8, errors: -5, error: -5 },
    { dev: 8, sector: 20, nr_sector: 16, errors: 0, error: 0 },
    { dev: 8, sector: 30, nr_sector: 2, errors: -5, error: -5 },
  ];

  it('io@1.0.0 knows only `errors`: incompatible where it is `error`; io@1.1.0 adds an implementation and the same build runs there', async () => {
    const old = await blockProfile('errors');
    const renamed = await blockProfile('error');
    const v1 = parseProvider(JSON.stringify(ioJson(false)));
    const v11 = parseProvider(JSON.stringify(ioJson(true)));
    const build = await compileFor(script, old, [v1]);

    const before = await checkScriptCompat(script, build, renamed, { providers: [v1] });
    expect(before.status).toBe('incompatible');
    expect(before.reasons.map((r) => [r.kind, r.text])).toEqual([
      ['provider-unresolved', 'io:::done: io@1.0.0 cannot implement io:::done here: implementation for errors: args.error = args.errors: block/block_rq_complete has no field errors'],
    ]);

    const after = await checkScriptCompat(script, build, renamed, { providers: [v11] });
    expect(after.status).toBe('relocated');
    expect(after.programs[0]!.via).toBe('io:::done via io@1.1.0, implementation for error (renamed in 4.20)');
    expect(after.programs[0]!.provider).toEqual({ probe: 'io:::done', provider: 'io', version: '1.1.0', implementation: 'error (renamed in 4.20)' });
    expect((await checkScriptCompat(script, build, old, { providers: [v11] })).status).toBe('compatible');

    const viaProvider = runOn(after.relocated!, renamed, 'block/block_rq_complete', rows);
    expect(viaProvider).toEqual([[-5, 2]]);
    const rawRenamed = await compileFor('t:block:block_rq_complete /args.error != 0/ { @[args.error] = count(); }', renamed, []);
    expect(runOn(rawRenamed.spec, renamed, 'block/block_rq_complete', rows)).toEqual(viaProvider);
    const rawOld = await compileFor('t:block:block_rq_complete /args.errors != 0/ { @[args.errors] = count(); }', old, []);
    expect(checkCompat(rawOld.spec, renamed).status).toBe('incompatible');
  });

  it('a partial profile without the event is unknown, not incompatible', async () => {
    const v11 = parseProvider(JSON.stringify(ioJson(true)));
    const build = await compileFor(script, await blockProfile('errors'), [v11]);
    const partial = await profileOfFiles([{ path: 'sched/sched_switch/format', text: `name: sched_switch\nID: 1\nformat:\n${header}\nprint fmt: ""\n` }], { complete: false });
    expect((await checkScriptCompat(script, build, partial, { providers: [v11] })).status).toBe('unknown');
  });

  it('a provider the script names but is not given is a compile error that lists the ones there are', async () => {
    const r = await compileScript('sched:::switch { @ = count(); }', { target: targetOfProfile(await blockProfile('error')), providers: providerResolver([proc]) });
    expect(r.ok ? [] : r.diagnostics.map((d) => [d.message, d.hint])).toEqual([["probe sched:::switch: no provider 'sched' is known here", 'providers here: proc@1.0.0']]);
  });
});
