import { profileFormat, profileOfFormatSet, readProgramSpec } from '@probeyard/compat';
import { buildEventFormatSet, parseEventFormat } from '@probeyard/formats';
import { describe, expect, it } from 'vitest';
import { asmSpec, exampleSpec, fixtureProfile, recordOf } from '../test/fixtures.js';
import { DEFAULT_STACK_TRACE_ENTRIES, loadedMaxEntries, loadForProfile, loadSpec, mapMemoryBytes } from './load-spec.js';

describe('loadForProfile', () => {
  it('relocates runqlat for 3.10.49, loads it on the compiled tier and says what moved', async () => {
    const out = loadForProfile(await exampleSpec('runqlat'), await fixtureProfile('android-3.10.49'));
    if (!out.ok) throw new Error(`not loaded: ${out.status}`);
    expect(out.status).toBe('relocated');
    expect(out.changes).toEqual(['on_switch: next_pid: offset 56 → 52']);
    expect(out.loaded.programs.map((p) => [p.name, p.event, p.runtime.counters.tier])).toEqual([
      ['on_wakeup', 'sched/sched_wakeup', 'compiled'],
      ['on_switch', 'sched/sched_switch', 'compiled'],
    ]);
    expect(out.loaded.events).toEqual(['sched/sched_wakeup', 'sched/sched_switch']);
    expect(out.loaded.displays).toEqual([
      { kind: 'counts', source: 'convention' },
      { kind: 'log2-histogram', bucket: 'libbpf-tools', unit: 'us', source: 'convention' },
    ]);
  });

  it('runs the relocated program on records laid out for that kernel', async () => {
    const profile = await fixtureProfile('android-3.10.49');
    const out = loadForProfile(await exampleSpec('syscount'), profile);
    if (!out.ok) throw new Error(out.status);
    const f = profileFormat(profile, 'raw_syscalls/sys_enter')!;
    for (const id of [3, 3, 64]) expect(out.loaded.runRecord(f.id, { cpu: 0, timestamp: 1, data: recordOf(f, { id }) })).toBe(1);
    expect(out.loaded.runRecord(f.id + 1, { cpu: 0, timestamp: 1, data: recordOf(f, { id: 9 }) })).toBe(0);
    const counts = out.loaded.snapshot()[0]!.entries.map((e) => [e.typedKey, e.typedValues![0]]);
    expect(new Map(counts as [number, bigint][])).toEqual(new Map([[3, 2n], [64, 1n]]));
  });

  it('refuses forkcomm on 6.18 naming the field and why, and loads nothing', async () => {
    const out = loadForProfile(await exampleSpec('forkcomm'), await fixtureProfile('linux-6.18'));
    expect(out.ok).toBe(false);
    if (out.ok || out.status !== 'refused') throw new Error(out.status);
    expect(out.reasons).toHaveLength(1);
    expect(out.reasons[0]).toMatchObject({ kind: 'became-dynamic', program: 'count_forks', event: 'sched/sched_process_fork', field: 'parent_comm' });
    expect(out.reasons[0]!.text).toContain('parent_comm');
  });

  it("refuses a plain char read whose signedness changed only with strictCharSign (a tenant's compat setting)", async () => {
    const header = `\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n`;
    const kernelText = `name: ev\nID: 500\nformat:\n${header}\n\tfield:char flag;\toffset:8;\tsize:1;\tsigned:0;\n\nprint fmt: "%d", REC->flag\n`;
    const builtText = kernelText.replace('size:1;\tsigned:0;\n\nprint', 'size:1;\tsigned:1;\n\nprint');
    expect(builtText).not.toBe(kernelText);
    const spec = await readProgramSpec(new TextEncoder().encode('.license "GPL"\n.section tracepoint/test/ev\nmain:\n  r0 = *(u8 *)(r1 + ev.flag)\n  exit\n'), { buildFormats: [parseEventFormat(builtText, { system: 'test' })] });
    const profile = profileOfFormatSet(await buildEventFormatSet([{ path: 'events/test/ev/format', text: kernelText }]), 'events-tree', { complete: true });
    const lenient = loadForProfile(spec, profile);
    expect(lenient.ok, JSON.stringify(lenient.ok ? lenient.status : lenient.status === "refused" ? lenient.reasons : lenient.fault)).toBe(true);
    const strict = loadForProfile(spec, profile, { strictCharSign: true });
    if (strict.ok || strict.status !== 'refused') throw new Error(strict.status);
    expect(strict.reasons.map((r) => [r.kind, r.field])).toEqual([['signedness-changed', 'flag']]);
  });

  it('refuses a program whose event the kernel lacks (event-missing)', async () => {
    const spec = await asmSpec(`.license "GPL"
.section tracepoint/nosuch/event
main:
  r0 = 0
  exit
`);
    const out = loadForProfile(spec, await fixtureProfile('android-3.4.0'));
    if (out.ok || out.status !== 'refused') throw new Error(out.status);
    expect(out.reasons).toEqual([{ kind: 'event-missing', program: 'main', event: 'nosuch/event', text: 'main: event nosuch/event is not in this partial profile (the kernel may have it)' }]);
  });

  it('a spec that verifies but cannot be created is failed, naming the map', async () => {
    const spec = await asmSpec(`.license "GPL"
.map rb ringbuf entries=1000
.section tracepoint/raw_syscalls/sys_enter
main:
  r0 = 0
  exit
`);
    const out = loadForProfile(spec, await fixtureProfile('linux-6.18'));
    if (out.ok || out.status !== 'failed') throw new Error(out.status);
    expect(out.fault.map).toBe('rb');
    expect(out.fault.message).toBe('load maps: create map rb: ring buffer size 1000 is not a power of 2 multiple of 4096');
  });
});

describe('loadSpec', () => {
  it('refuses a program the verifier rejects with a load fault naming the instruction', async () => {
    const spec = await asmSpec(`.license "GPL"
.section tracepoint/raw_syscalls/sys_enter
main:
  r0 = 0
  r0 += r2
  exit
`);
    expect(() => loadSpec(spec)).toThrow(expect.objectContaining({ code: 'load-fault', program: 'main', insnIndex: 1, insnText: 'r0 += r2' }));
  });

  it('initialises global data and shares maps between the programs of a spec', async () => {
    const loaded = loadSpec(await exampleSpec('runqlat'));
    expect(loaded.maps.map((m) => m.name)).toEqual(['start', 'runq_usecs']);
    expect(loaded.programs.every((p) => p.runtime.vm === loaded.vm)).toBe(true);
  });
});

describe('mapMemoryBytes', () => {
  it('counts keys, 8-aligned values, per-CPU copies and ring buffers', async () => {
    // runqlat: start 10240 × (4 + 8), runq_usecs 64 × (4 + 8)
    expect(mapMemoryBytes(await exampleSpec('runqlat'))).toBe(10240 * 12 + 64 * 12);
    const spec = await asmSpec(`.license "GPL"
.map pc percpu_array key=4 value=12 entries=10
.map rb ringbuf entries=4096
.section tracepoint/raw_syscalls/sys_enter
main:
  r0 = 0
  exit
`);
    expect(mapMemoryBytes(spec, 4)).toBe(10 * (4 + 16 * 4) + 4096);
  });
});

describe('maps sized at load (max_entries 0, as libbpf-tools leave them)', () => {
  it.each<[string, number, number, number]>([
    ['a perf event array: one slot per CPU of the feed', 4, 6, 6],
    ['a perf event array on a one-CPU feed', 4, 1, 1],
    ['a stack-trace map: libbpf-tools\' default storage size', 7, 4, DEFAULT_STACK_TRACE_ENTRIES],
    ['a hash map: nothing libbpf would give it', 1, 4, 0],
  ])('%s', (_what, type, cpus, entries) => {
    expect(loadedMaxEntries({ type, maxEntries: 0 }, cpus)).toBe(entries);
    expect(loadedMaxEntries({ type, maxEntries: 12 }, cpus)).toBe(12);
  });

  it('loads a perf event array and a stack-trace map of 0 entries; refuses a hash map of 0 entries by name', async () => {
    const sized = await asmSpec(`.license "GPL"
.map events perf_event_array key=4 value=4 entries=0
.map stacks stack_trace key=4 value=1016 entries=0
.section tracepoint/raw_syscalls/sys_enter
main:
  r0 = 0
  exit
`);
    const out = loadForProfile(sized, await fixtureProfile('linux-6.18'), { cpuCount: 3 });
    if (!out.ok) throw new Error(out.status === 'failed' ? out.fault.message : out.status);
    expect(out.loaded.maps.map((m) => m.spec.maxEntries)).toEqual([3, DEFAULT_STACK_TRACE_ENTRIES]);
    expect(mapMemoryBytes(sized, 3)).toBe(3 * (4 + 8) + DEFAULT_STACK_TRACE_ENTRIES * (4 + 1016));
    const unsized = await asmSpec(`.license "GPL"
.map counts hash key=4 value=8 entries=0
.section tracepoint/raw_syscalls/sys_enter
main:
  r0 = 0
  exit
`);
    const refused = loadForProfile(unsized, await fixtureProfile('linux-6.18'));
    if (refused.ok || refused.status !== 'failed') throw new Error(refused.status);
    expect(refused.fault.map).toBe('counts');
    expect(refused.fault.message).toBe(
      'load maps: map counts has max_entries 0: its tool sizes it in user space before load (bpf_map__set_max_entries), and a hash has no size libbpf would give it; build it with a size',
    );
  });
});
