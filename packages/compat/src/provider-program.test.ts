// Compiled programs of provider probes (examples/c/forkprov.c, built with
// library/include/probeyard/provider.h): the arguments record's layout, binding per kernel, the
// verdict naming the implementation, provider-unresolved, and reads that follow a field by name
// when a provider version moves it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exampleSpec, fixtureProfile } from '../test/fixtures.js';
import { profileOfFiles } from './kernel-profile.js';
import { type ProviderDefinition, parseProvider } from './provider.js';
import { providerArgsFormat, providerArgsLayout, providerProbeOf } from './provider-program.js';
import { checkCompat, formatVerdict } from './verdict.js';

const libraryProvider = (name: string): ProviderDefinition => parseProvider(readFileSync(join(import.meta.dirname, '..', '..', '..', 'library', 'providers', `${name}.json`), 'utf8'));
const proc = libraryProvider('proc');

describe('providerProbeOf', () => {
  it.each([
    ['provider/proc/fork', { provider: 'proc', probe: 'fork' }],
    ['provider/io/done', { provider: 'io', probe: 'done' }],
    ['provider/proc', undefined],
    ['provider/Proc/fork', undefined],
    ['provider/proc/fork/x', undefined],
    ['BEGIN', undefined],
  ])('%s', (section, want) => {
    expect(providerProbeOf({ kind: 'other', section })).toEqual(want);
  });

  it('a tracepoint program is not one', () => {
    expect(providerProbeOf({ kind: 'tracepoint', system: 'provider', event: 'fork' })).toBeUndefined();
  });
});

describe('the arguments record', () => {
  it.each([
    ['proc', 'fork', [['parent_pid', 8, 8], ['parent_comm', 16, 4], ['child_pid', 24, 8], ['child_comm', 32, 4]], 36],
    ['proc', 'exec', [['pid', 8, 8], ['old_pid', 16, 8], ['filename', 24, 4]], 28],
    ['proc', 'exit', [['pid', 8, 8], ['comm', 16, 4], ['prio', 24, 8]], 32],
  ] as const)('%s:::%s is laid out as C lays out the struct of provider.h', (provider, probe, fields, fixedSize) => {
    const def = libraryProvider(provider).probes.find((p) => p.name === probe)!;
    const layout = providerArgsLayout(def.args);
    expect(layout.fields.map((f) => [f.name, f.byteOffset, f.size])).toEqual(fields);
    expect(layout.fixedSize).toBe(fixedSize);
  });

  it('its format reads as a tracefs format: ints signed 8 bytes, strings __data_loc, the common header first', () => {
    const f = providerArgsFormat('proc', 'fork', proc.probes.find((p) => p.name === 'fork')!.args, 311);
    expect(f.system).toBe('provider.proc');
    expect(f.name).toBe('fork');
    expect(f.id).toBe(311);
    expect(f.commonFields.map((c) => [c.name, c.byteOffset, c.size])).toEqual([
      ['common_type', 0, 2],
      ['common_flags', 2, 1],
      ['common_preempt_count', 3, 1],
      ['common_pid', 4, 4],
    ]);
    expect(f.fields.map((x) => [x.name, x.byteOffset, x.size, x.signed, x.dynamic])).toEqual([
      ['parent_pid', 8, 8, true, undefined],
      ['parent_comm', 16, 4, false, 'data_loc'],
      ['child_pid', 24, 8, true, undefined],
      ['child_comm', 32, 4, false, 'data_loc'],
    ]);
  });
});

describe('verdicts of examples/c/forkprov.o (proc:::fork)', () => {
  it('names the implementation each kernel needs: inline comms on 3.4.0 and 3.10.49, __data_loc on 6.18', async () => {
    const spec = await exampleSpec('forkprov');
    const got: [string, string, string | undefined][] = [];
    for (const k of ['android-3.4.0', 'android-3.10.49', 'linux-6.18'] as const) {
      const v = checkCompat(spec, await fixtureProfile(k), { providers: [proc] });
      got.push([k, v.status, v.programs[0]!.via]);
      expect(v.programs[0]!.event).toBe('sched/sched_process_fork');
      expect(v.providers?.map((b) => [b.program, b.system, b.event])).toEqual([['count_forks', 'sched', 'sched_process_fork']]);
      // what runs keeps its own attach point; the runtime binds it through verdict.providers
      expect(v.relocated?.programs[0]?.attach).toEqual({ kind: 'other', section: 'provider/proc/fork' });
    }
    expect(got).toEqual([
      ['android-3.4.0', 'compatible', 'proc:::fork via proc@1.0.0, implementation for inline parent_comm'],
      ['android-3.10.49', 'compatible', 'proc:::fork via proc@1.0.0, implementation for inline parent_comm'],
      ['linux-6.18', 'compatible', 'proc:::fork via proc@1.0.0, implementation for __data_loc parent_comm'],
    ]);
  });

  it('is provider-unresolved without the provider, and where no implementation applies', async () => {
    const spec = await exampleSpec('forkprov');
    const none = checkCompat(spec, await fixtureProfile('linux-6.18'));
    expect(none.status).toBe('incompatible');
    expect(none.reasons.map((r) => r.kind)).toEqual(['provider-unresolved']);
    expect(none.reasons[0]!.text).toContain("proc:::fork: no provider 'proc' is given");
    expect(none.relocated).toBeUndefined();
    // proc@0.9.0 knows the inline comms only: 6.18's __data_loc ones fail its condition
    const old: ProviderDefinition = { ...proc, version: '0.9.0', probes: proc.probes.map((p) => (p.name === 'fork' ? { ...p, implementations: p.implementations.slice(0, 1) } : p)) };
    const v = checkCompat(spec, await fixtureProfile('linux-6.18'), { providers: [old] });
    expect(v.status).toBe('incompatible');
    expect(v.reasons[0]).toMatchObject({ kind: 'provider-unresolved', program: 'count_forks' });
    expect(v.reasons[0]!.text).toBe('count_forks: proc:::fork: proc@0.9.0 cannot implement proc:::fork here: implementation for inline parent_comm: sched/sched_process_fork.parent_comm is __data_loc, not char[]');
    expect(formatVerdict(v)).toContain('provider-unresolved: count_forks: proc:::fork: proc@0.9.0 cannot implement');
    // the same provider serves 3.10.49
    expect(checkCompat(spec, await fixtureProfile('android-3.10.49'), { providers: [old] }).status).toBe('compatible');
  });

  it('is unknown where a partial profile lacks the event, incompatible where a complete one does', async () => {
    const spec = await exampleSpec('forkprov');
    const text = 'name: sched_switch\nID: 1\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\tfield:int next_pid;\toffset:8;\tsize:4;\tsigned:1;\n\nprint fmt: "%d", REC->next_pid\n';
    const files = [{ path: 'sched/sched_switch/format', text }];
    expect(checkCompat(spec, await profileOfFiles(files, { complete: false }), { providers: [proc] }).status).toBe('unknown');
    const complete = checkCompat(spec, await profileOfFiles(files, { complete: true }), { providers: [proc] });
    expect(complete.status).toBe('incompatible');
    expect(complete.reasons[0]!.text).toContain('no event sched/sched_process_fork');
  });

  it('follows a field by name when a provider version moves it (relocated, not refused)', async () => {
    const spec = await exampleSpec('forkprov');
    // proc@2.0.0 declares child_pid first: every field of the arguments record moves
    const moved: ProviderDefinition = {
      ...proc,
      version: '2.0.0',
      probes: proc.probes.map((p) => (p.name === 'fork' ? { ...p, args: [p.args[2]!, p.args[0]!, p.args[1]!, p.args[3]!] } : p)),
    };
    const v = checkCompat(spec, await fixtureProfile('linux-6.18'), { providers: [moved] });
    expect(v.status).toBe('relocated');
    expect(v.programs[0]!.changes).toEqual(['parent_comm: offset 16 → 24', 'child_pid: offset 24 → 8']);
    expect(v.programs[0]!.via).toBe('proc:::fork via proc@2.0.0, implementation for __data_loc parent_comm');
    expect(v.programs[0]!.provider).toEqual({ probe: 'proc:::fork', provider: 'proc', version: '2.0.0', implementation: '__data_loc parent_comm' });
  });

  it('a program that reads an argument as unsigned is refused: ints are signed 64-bit (signedness-changed)', async () => {
    const spec = await exampleSpec('forkprov');
    const unsigned = { ...spec, programs: spec.programs.map((p) => ({ ...p, fieldRelocations: p.fieldRelocations.map((r) => (r.field === 'child_pid' && r.built ? { ...r, built: { ...r.built, signed: false } } : r)) })) };
    const v = checkCompat(unsigned, await fixtureProfile('linux-6.18'), { providers: [proc] });
    expect(v.reasons.map((r) => [r.kind, r.field])).toEqual([['signedness-changed', 'child_pid']]);
  });
});
