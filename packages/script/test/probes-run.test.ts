// Wildcard probes, provider probes, the script artifact, and BEGIN-only scripts, run through
// packages/runtime on records made from the 6.18 fixture formats.
import { specToJson } from '@probeyard/compat';
import { describe, expect, it } from 'vitest';
import { compileScript, compileScriptArtifact, decodeScriptArtifact, isScriptArtifact } from '../src/compile.js';
import type { ProviderResolver } from '../src/probes.js';
import { formatDiagnostics } from '../src/source-text.js';
import { fixtureFormats, makeRecord, ScriptRun, type TestRecord, target618 } from './support/harness.js';

const formats = fixtureFormats('linux-6.18');
const formatOf = (event: string) => formats.find((f) => `${f.system}/${f.name}` === event)!;
const rec = (event: string, values: Record<string, number | string>, timestamp: number, pid = 100): TestRecord => ({ event, data: makeRecord(formatOf(event), values, pid), timestamp });

async function compiled(text: string, providers?: ProviderResolver) {
  const r = await compileScript(text, { target: target618(), name: 'test.bt', ...(providers ? { providers } : {}) });
  if (!r.ok) throw new Error(formatDiagnostics(r.source, r.diagnostics));
  return r;
}

describe('probes', () => {
  it('a wildcard compiles one program per event; probe names each', async () => {
    const r = await compiled('t:sched:sched_w*, t:sched:sched_s* { @[probe] = count(); }');
    expect(r.spec.programs.map((p) => [p.name, p.section])).toEqual([
      ['sched_wakeup_0', 'tracepoint/sched/sched_wakeup'],
      ['sched_switch_0', 'tracepoint/sched/sched_switch'],
    ]);
    const run = new ScriptRun(r.spec, { formats }).run([rec('sched/sched_switch', {}, 1), rec('sched/sched_wakeup', {}, 2), rec('sched/sched_switch', {}, 3)]);
    expect(run.entries('')).toEqual([
      ['tracepoint:sched:sched_switch', 2],
      ['tracepoint:sched:sched_wakeup', 1],
    ]);
    expect(run.draw()).toBe('@[tracepoint:sched:sched_wakeup]: 1\n@[tracepoint:sched:sched_switch]: 2\n');
  });

  it('a provider probe reads its arguments through the implementation the resolver chose', async () => {
    const providers: ProviderResolver = (p) =>
      p.provider === 'proc' && p.name === 'exec' ? { system: 'sched', event: 'sched_process_exec', args: { filename: 'str(args.filename)', pid: 'args.pid', twice: 'args.pid * 2' }, via: 'proc@1.0.0' } : { error: `no probe ${p.name}` };
    const r = await compiled('proc:::exec /args.pid > 1/ { @[args.filename, args.twice, probe] = count(); }', providers);
    expect(r.spec.programs[0]!.attach).toEqual({ kind: 'tracepoint', system: 'sched', event: 'sched_process_exec' });
    expect(r.spec.programs[0]!.fieldRelocations.map((x) => x.field).sort()).toEqual(['filename', 'pid', 'pid']);
    const run = new ScriptRun(r.spec, { formats }).run([rec('sched/sched_process_exec', { filename: '/bin/ls', pid: 7 }, 1), rec('sched/sched_process_exec', { filename: '/bin/sh', pid: 1 }, 2)]);
    expect(run.entries('')).toEqual([[{ k0: '/bin/ls', k1: 14, k2: 'proc:::exec' }, 1]]);
    const bad = await compileScript('proc:::exec { @[args.nope] = count(); }', { target: target618(), providers });
    expect(bad.ok ? undefined : bad.diagnostics[0]!.message).toBe("args: probe proc:::exec has no argument 'nope'");
  });

  it('BEGIN alone runs once, exits, and END follows', async () => {
    const r = await compiled('BEGIN { printf("hello %s\\n", "world"); @x = 1; exit(); printf("never\\n"); } END { printf("bye\\n"); }');
    const run = new ScriptRun(r.spec, { formats }).run([]);
    expect(run.text).toBe('hello world\nbye\n');
    expect(run.entries('x')).toEqual([[undefined, 1]]);
  });

  it('uid and gid come from the runtime\'s view of the node', async () => {
    const r = await compiled('t:raw_syscalls:sys_enter { @[uid, gid] = count(); }');
    const run = new ScriptRun(r.spec, { formats, environment: { uidGidOf: (pid) => (pid === 100 ? [1000, 50] : undefined) } }).run([rec('raw_syscalls/sys_enter', {}, 1)]);
    expect(run.entries('')).toEqual([[{ k0: 1000, k1: 50 }, 1]]);
  });
});

describe('the script artifact', () => {
  it('carries the source and the layouts it was compiled against; compiling it again gives the same spec', async () => {
    const text = 't:sched:sched_switch /args.prev_state == 0/ { @[args.next_comm] = count(); } t:raw_syscalls:sys_enter { @n = count(); } BEGIN { printf("hi\\n"); }';
    const r = await compiled(text);
    expect(isScriptArtifact(r.artifact)).toBe(true);
    const a = decodeScriptArtifact(r.artifact);
    expect(a.source).toBe(text);
    expect(a.events).toEqual(['raw_syscalls/sys_enter', 'sched/sched_switch']);
    expect(a.layouts.map((l) => `${l.system}/${l.event}`)).toEqual(['sched/sched_switch']);
    const again = await compileScriptArtifact(r.artifact);
    if (!again.ok) throw new Error('artifact does not compile');
    expect(again.spec.digest).toBe(r.spec.digest);
    expect(specToJson(again.spec)).toEqual(specToJson(r.spec));
  });

  it.each([
    ['not json', 'nope', 'script artifact: not JSON'],
    ['another kind', '{"kind":"x"}', "script artifact: kind is not 'probeyard-script'"],
    ['bad layouts', '{"kind":"probeyard-script","version":1,"source":"","events":[],"layouts":[{"system":"a","event":"b","fields":[{"name":"x"}]}]}', 'script artifact: layouts[0]: not an event layout'],
  ])('refuses %s', (_name, text, message) => {
    expect(() => decodeScriptArtifact(new TextEncoder().encode(text))).toThrow(message);
  });
});
