// The object reader on the shared corpus (../shared/corpus/bpf-elf): tp_core.o and
// tp_core_nolegacy.o built from tp_core.c by clang 14, with its llvm-objdump -dr listing.
// A fresh clone has no corpus: the suite then skips and says why.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readBpfObject } from '../src/object/read-bpf-object.js';
import { tracepointFieldAccesses } from '../src/object/tracepoint-fields.js';
import { parseObjdump, patchedValue } from './support/llvm-text.js';

const corpus = new URL('../../../../shared/corpus/bpf-elf/', import.meta.url);
const present = existsSync(new URL('tp_core.o', corpus));
if (!present) console.warn(`skipping BPF object corpus tests: ${corpus.pathname} is absent (the shared corpus is not part of a fresh clone)`);

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

describe.skipIf(!present)('corpus bpf-elf/tp_core.o', () => {
  const spec = present ? readBpfObject(new Uint8Array(readFileSync(new URL('tp_core.o', corpus)))) : undefined;
  const objdump = present ? parseObjdump(readFileSync(new URL('tp_core.objdump.txt', corpus), 'utf8')) : undefined;
  const s = () => spec as NonNullable<typeof spec>;
  const o = () => objdump as NonNullable<typeof objdump>;

  it('programs by libbpf section names, with the subprogram in .text', () => {
    expect(s().programs.map((p) => [p.name, p.section, p.type, p.attach, p.insnCount])).toEqual([
      ['handle_switch', 'tracepoint/sched/sched_switch', 'tracepoint', { kind: 'tracepoint', system: 'sched', event: 'sched_switch' }, 40],
      ['handle_exec', 'tp/sched/sched_process_exec', 'tracepoint', { kind: 'tracepoint', system: 'sched', event: 'sched_process_exec' }, 17],
      ['handle_fork', 'tracepoint/sched/sched_process_fork', 'tracepoint', { kind: 'tracepoint', system: 'sched', event: 'sched_process_fork' }, 37],
      ['handle_raw', 'raw_tp/sched_switch', 'raw_tracepoint', { kind: 'raw-tracepoint', name: 'sched_switch' }, 2],
      ['handle_kprobe', 'kprobe/do_nanosleep', 'kprobe', { kind: 'kprobe', function: 'do_nanosleep', offset: 0, retprobe: false }, 2],
    ]);
    expect(s().subprograms.map((p) => [p.name, p.insnCount])).toEqual([['bump', 9]]);
    expect(s().license).toBe('GPL');
    expect(s().kernelVersion).toBe(0x061200);
  });

  it('instruction bytes equal the objdump listing', () => {
    for (const p of [...s().programs, ...s().subprograms]) {
      const insns = o().insns.filter((i) => i.section === p.section);
      expect(hex(p.instructions), p.name).toBe(insns.map((i) => i.hex).join(''));
    }
  });

  it('relocations objdump shows, normalized', () => {
    const sw = s().program('handle_switch');
    expect(sw?.relocations.map((r) => [r.insnIndex, r.kind, 'map' in r ? r.map : 'target' in r ? r.target : ''])).toEqual([
      [25, 'map', 'counters'],
      [27, 'call', 'bump'],
      [28, 'map', 'legacy_counts'],
      [30, 'call', 'bump'],
      [33, 'map', 'events'],
    ]);
    const listed = o().relocations.map((r) => [r.section, r.byteOffset, r.type, r.symbol]);
    const mine = [...s().programs, ...s().subprograms].flatMap((p) => p.relocations.map((r) => [p.section, r.byteOffset, r.elfType === 1 ? 'R_BPF_64_64' : 'R_BPF_64_32', r.symbol]));
    expect(mine).toEqual(listed);
  });

  it('maps: BTF-defined and legacy', () => {
    expect(s().maps.map((m) => [m.name, m.legacy, m.typeName, m.keySize, m.valueSize, m.maxEntries])).toEqual([
      ['legacy_counts', true, 'array', 4, 8, 1],
      ['counters', false, 'array', 4, 8, 1],
      ['events', false, 'ringbuf', 0, 0, 256 * 1024],
    ]);
  });

  it('CO-RE relocations as tracepoint field accesses, values equal to the patched immediates', () => {
    const acc = tracepointFieldAccesses(s());
    expect(acc.map((a) => `${a.event}${a.flavor ? `___${a.flavor}` : ''} ${a.field} ${a.kind} @${a.section}#${a.insnIndex}`)).toEqual([
      'sched_switch prev_pid byte-offset @tracepoint/sched/sched_switch#7',
      'sched_switch next_pid byte-offset @tracepoint/sched/sched_switch#9',
      'sched_switch prev_state signed @tracepoint/sched/sched_switch#10',
      'sched_switch prev_state byte-size @tracepoint/sched/sched_switch#12',
      'sched_switch prev_state exists @tracepoint/sched/sched_switch#15',
      'sched_switch prev_state byte-offset @tracepoint/sched/sched_switch#18',
      'sched_process_exec filename byte-offset @tp/sched/sched_process_exec#1',
      'sched_process_fork___new parent_comm exists @tracepoint/sched/sched_process_fork#4',
      'sched_process_fork___new parent_comm byte-offset @tracepoint/sched/sched_process_fork#7',
      'sched_process_fork___old parent_comm byte-offset @tracepoint/sched/sched_process_fork#17',
    ]);
    for (const c of s().coreRelocations) {
      const insn = o().insns.find((i) => i.section === c.section && i.insnIndex * 8 === c.byteOffset);
      expect(patchedValue(insn?.text ?? ''), insn?.text).toBe(Number(c.access?.localValue));
    }
    const typeExists = s().coreRelocations.find((c) => c.record.kindName === 'type-exists');
    expect(typeExists?.access?.rootName).toBe('trace_event_raw_sched_process_fork___new');
  });

  it('tp_core_nolegacy.o has no legacy map and one call fewer', () => {
    const nl = readBpfObject(new Uint8Array(readFileSync(new URL('tp_core_nolegacy.o', corpus))));
    expect(nl.maps.map((m) => m.name)).toEqual(['counters', 'events']);
    expect(nl.elf.section('maps')).toBeUndefined();
    expect(nl.program('handle_switch')?.relocations.filter((r) => r.kind === 'call')).toHaveLength(1);
    expect(tracepointFieldAccesses(nl).length).toBe(tracepointFieldAccesses(s()).length);
  });
});
