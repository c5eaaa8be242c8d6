// The BPF object reader on objects compiled here by clang 14 (sources and build.sh beside them in
// fixtures/objects), checked against what llvm-readelf, llvm-objdump -dr and bpftool recorded
// about the same files, and against facts read off the C sources.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SectionType } from '../src/elf/elf-section.js';
import { SymbolBinding, SymbolType } from '../src/elf/elf-symbol.js';
import { readBpfObject } from '../src/object/read-bpf-object.js';
import { transitiveCallees } from '../src/object/programs.js';
import { formatTracepointFieldAccess, tracepointFieldAccesses } from '../src/object/tracepoint-fields.js';
import { formatBtfType, formatBtfTypeName } from '../src/btf/format-btf-type.js';
import { formatCoreAccess } from '../src/btf/core-access.js';
import type { ObjectSpec } from '../src/object/object-spec.js';
import { bpftoolDump } from './support/bpftool-format.js';
import { parseObjdump, parseReadelf, patchedValue } from './support/llvm-text.js';

const dir = new URL('./fixtures/objects/', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, dir));
const load = (name: string) => readBpfObject(new Uint8Array(read(`${name}.o`)));

const objects = ['sched_trace', 'legacy_probes', 'block_core', 'sched_trace.bpfeb', 'block_core.bpfeb'];

const sectionTypeNames: Record<number, string> = {
  [SectionType.Null]: 'NULL',
  [SectionType.Progbits]: 'PROGBITS',
  [SectionType.Symtab]: 'SYMTAB',
  [SectionType.Strtab]: 'STRTAB',
  [SectionType.Nobits]: 'NOBITS',
  [SectionType.Rel]: 'REL',
  [SectionType.LlvmAddrsig]: 'LLVM_ADDRSIG',
};
const symbolTypeNames: Record<number, string> = { 0: 'NOTYPE', 1: 'OBJECT', 2: 'FUNC', 3: 'SECTION', 4: 'FILE' };
const bindNames: Record<number, string> = { 0: 'LOCAL', 1: 'GLOBAL', 2: 'WEAK' };

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

describe.each(objects)('%s.o against llvm-readelf, llvm-objdump and bpftool', (name) => {
  const spec = load(name);
  const readelf = parseReadelf(read(`${name}.readelf.txt`).toString());
  const objdump = parseObjdump(read(`${name}.objdump.txt`).toString());

  it('byte order', () => {
    expect(readelf.dataEncoding).toContain(spec.littleEndian ? 'little endian' : 'big endian');
    expect(spec.littleEndian).toBe(!name.endsWith('bpfeb'));
  });

  it('every section header', () => {
    expect(readelf.sections.length).toBeGreaterThan(10);
    expect(spec.elf.sections.map((s) => [s.index, s.name, sectionTypeNames[s.type] ?? s.type, s.byteOffset, s.size, s.entrySize, s.link, s.info, s.addrAlign])).toEqual(
      readelf.sections.map((s) => [s.index, s.name, s.type, s.byteOffset, s.size, s.entrySize, s.link, s.info, s.align]),
    );
    for (const s of readelf.sections) {
      const mine = spec.elf.sections[s.index];
      expect(s.flags.includes('X'), s.name).toBe(((mine?.flags ?? 0) & 4) !== 0);
      expect(s.flags.includes('W'), s.name).toBe(((mine?.flags ?? 0) & 1) !== 0);
      expect(s.flags.includes('A'), s.name).toBe(((mine?.flags ?? 0) & 2) !== 0);
    }
  });

  it('every symbol', () => {
    expect(readelf.symbols.length).toBeGreaterThan(10);
    expect(
      spec.elf.symbols.map((s) => [s.index, s.value, s.size, symbolTypeNames[s.type], bindNames[s.binding], s.sectionIndex === 0 ? 'UND' : s.sectionIndex === 0xfff1 ? 'ABS' : String(s.sectionIndex), s.name]),
    ).toEqual(readelf.symbols.map((s) => [s.index, s.value, s.size, s.type, s.bind, s.ndx, s.name]));
  });

  it('every relocation, one list tagged by type and target section', () => {
    expect(readelf.relocations.length).toBeGreaterThan(10);
    const relSections = new Map(spec.elf.sections.filter((s) => s.type === SectionType.Rel).map((s) => [s.info, s.name]));
    expect(spec.relocations.map((r) => [relSections.get(r.targetSectionIndex), r.byteOffset, r.typeName, r.symbol.name])).toEqual(
      readelf.relocations.map((r) => [r.section, r.byteOffset, r.type, r.symbol]),
    );
  });

  it('instruction bytes of every function, at the offsets objdump labels', () => {
    const all = [...spec.programs, ...spec.subprograms];
    const funcs = objdump.labels.filter((l) => !l.name.startsWith('LBB'));
    expect(all.map((p) => [p.section, p.name, p.byteOffset]).sort()).toEqual(funcs.map((l) => [l.section, l.name, l.byteOffset]).sort());
    for (const p of all) {
      const insns = objdump.insns.filter((i) => i.section === p.section && i.insnIndex * 8 >= p.byteOffset && i.insnIndex * 8 < p.byteOffset + p.byteLength);
      expect(hex(p.instructions), p.name).toBe(insns.map((i) => i.hex).join(''));
      expect(p.insnCount).toBe(p.byteLength / 8);
    }
  });

  it('each relocation objdump shows in code sits on its instruction with the same symbol', () => {
    const all = [...spec.programs, ...spec.subprograms];
    const codeRelocs = objdump.relocations;
    expect(codeRelocs.length).toBeGreaterThan(0);
    for (const r of codeRelocs) {
      const p = all.find((q) => q.section === r.section && r.byteOffset >= q.byteOffset && r.byteOffset < q.byteOffset + q.byteLength);
      const mine = p?.relocations.find((x) => x.byteOffset === r.byteOffset && x.elfType !== undefined);
      expect(mine, `${r.section}+${r.byteOffset}`).toBeDefined();
      expect(mine?.symbol).toBe(r.symbol);
      expect(mine?.insnIndex).toBe((r.byteOffset - (p?.byteOffset ?? 0)) / 8);
      expect(r.type).toBe(mine?.elfType === 1 ? 'R_BPF_64_64' : 'R_BPF_64_32');
    }
    const elfBacked = all.flatMap((p) => p.relocations.filter((x) => x.elfType !== undefined));
    expect(elfBacked.length).toBe(codeRelocs.length);
  });

  it('every pc-relative call (no ELF relocation) targets the function objdump calls', () => {
    for (const p of [...spec.programs, ...spec.subprograms]) {
      for (const r of p.relocations) {
        if (r.kind !== 'call' || r.elfType !== undefined) continue;
        const insn = objdump.insns.find((i) => i.section === p.section && i.insnIndex * 8 === r.byteOffset);
        const imm = Number(/^call (-?\d+)$/.exec(insn?.text ?? '')?.[1]);
        expect(r.byteOffset + (imm + 1) * 8).toBe(r.targetByteOffset);
      }
    }
  });

  it('the whole BTF type section matches bpftool btf dump', () => {
    expect(spec.btf).toBeDefined();
    expect(bpftoolDump(spec.btf as NonNullable<typeof spec.btf>)).toBe(read(`${name}.btf.txt`).toString());
  });

  it('every CO-RE relocation resolves, and its local value is the immediate clang emitted', () => {
    expect(spec.coreRelocations.length).toBeGreaterThan(0);
    for (const c of spec.coreRelocations) {
      expect(c.error, c.record.accessString).toBeUndefined();
      const insn = objdump.insns.find((i) => i.section === c.section && i.insnIndex * 8 === c.byteOffset);
      const value = patchedValue(insn?.text ?? '');
      expect(value, `${c.section}+${c.byteOffset}: ${insn?.text}`).toBeDefined();
      let want = c.access?.localValue;
      // clang assumes a probe-read into the u64's first bytes on big endian; libbpf a direct load.
      if (c.record.kindName === 'field-lshift-u64' && !spec.littleEndian) want = Number(want) - (8 - (c.access?.byteSize ?? 0)) * 8;
      expect(value, `${c.program} insn ${c.insnIndex} ${c.record.kindName} ${c.record.accessString}`).toBe(Number(want));
    }
  });

  it('line info quotes the source line it names; func info names its function', () => {
    const source = read(`${name.replace('.bpfeb', '')}.c`).toString().split('\n');
    const all = [...spec.programs, ...spec.subprograms];
    for (const p of all) {
      expect(p.lineInfo.length, p.name).toBeGreaterThan(0);
      for (const l of p.lineInfo) {
        expect(l.fileName).toBe(`./${name.replace('.bpfeb', '')}.c`);
        // line 0 is compiler-generated code with no source line
        expect(l.lineNumber === 0 ? '' : source[l.lineNumber - 1], `${p.name} insn ${l.insnIndex}`).toBe(l.line);
        expect(l.insnIndex).toBeLessThan(p.insnCount);
      }
      expect(p.funcTypeId).toBeDefined();
      expect(spec.btf?.type(p.funcTypeId ?? 0)).toMatchObject({ kind: 'func', name: p.name });
    }
  });
});

describe('sched_trace.o facts', () => {
  const spec = load('sched_trace');
  it('programs, types, attach points, sizes (objdump)', () => {
    expect(spec.programs.map((p) => [p.name, p.section, p.type, p.attach, p.byteOffset, p.insnCount, p.isGlobal])).toEqual([
      ['on_switch', 'tracepoint/sched/sched_switch', 'tracepoint', { kind: 'tracepoint', system: 'sched', event: 'sched_switch' }, 0, 91, true],
      ['on_wakeup', 'tp/sched/sched_wakeup', 'tracepoint', { kind: 'tracepoint', system: 'sched', event: 'sched_wakeup' }, 0, 21, true],
      ['on_wakeup_prio', 'tp/sched/sched_wakeup', 'tracepoint', { kind: 'tracepoint', system: 'sched', event: 'sched_wakeup' }, 168, 12, true],
      ['on_exec', 'tp/sched/sched_process_exec', 'tracepoint', { kind: 'tracepoint', system: 'sched', event: 'sched_process_exec' }, 0, 18, true],
    ]);
    expect(spec.subprograms.map((p) => [p.name, p.byteOffset, p.insnCount, p.isGlobal])).toEqual([
      ['count_slot', 0, 12, false],
      ['count_slash', 96, 22, false],
      ['log2_slot', 272, 16, false],
    ]);
    expect(spec.license).toBe('Dual BSD/GPL');
    expect(spec.kernelVersion).toBeUndefined();
  });
  it('relocations by kind: maps, global data, calls, a callback address', () => {
    const on = (n: string) => spec.program(n)?.relocations.map((r) => [r.insnIndex, r.kind, 'map' in r ? r.map : 'target' in r ? r.target : 'section' in r ? `${r.section}+${r.dataByteOffset}` : '']);
    expect(on('on_switch')).toEqual([
      [7, 'global-data', '.rodata+0'],
      [15, 'global-data', '.data+0'],
      [24, 'map', 'start_ts'],
      [30, 'map', 'start_ts'],
      [37, 'call', 'count_slot'],
      [39, 'map', 'events'],
      [46, 'global-data', '.bss+0'],
      [81, 'map', 'last_switch'],
    ]);
    expect(on('count_slot')).toEqual([
      [0, 'call', 'log2_slot'],
      [4, 'map', 'hist'],
    ]);
    expect(on('log2_slot')).toEqual([[4, 'global-data', '.rodata+4']]);
    expect(on('on_exec')).toEqual([[12, 'func-address', 'count_slash']]);
    expect(spec.program('on_switch')?.callees).toEqual(['count_slot']);
    expect(spec.program('count_slot')?.callees).toEqual(['log2_slot']);
    expect(transitiveCallees(spec, 'on_switch')).toEqual(['count_slot', 'log2_slot']);
    expect(transitiveCallees(spec, 'on_wakeup_prio')).toEqual(['count_slot', 'log2_slot']);
    expect(transitiveCallees(spec, 'log2_slot')).toEqual([]);
    expect(spec.program('on_exec')?.callees).toEqual(['count_slash']);
    expect(spec.program('on_wakeup')?.callees).toEqual([]);
  });
  it('BTF-defined maps', () => {
    expect(spec.maps.map((m) => [m.name, m.typeName, m.keySize, m.valueSize, m.maxEntries, m.flags, m.pinning, m.byteOffset])).toEqual([
      ['start_ts', 'hash', 4, 8, 10240, 1, 0, 0],
      ['events', 'ringbuf', 0, 0, 262144, 0, 0, 40],
      ['last_switch', 'lru_hash', 4, 48, 128, 0, 1, 56],
      ['hist', 'percpu_array', 4, 8, 4, 0, 0, 96],
    ]);
    const btf = spec.btf as NonNullable<ObjectSpec['btf']>;
    const ls = spec.map('last_switch');
    expect(formatBtfTypeName(btf, ls?.keyTypeId ?? 0)).toBe('__u32');
    expect(formatBtfType(btf, ls?.valueTypeId ?? 0)).toBe(
      'struct switch_event {\n\t__u64 ts;\n\t__u32 prev_pid;\n\t__u32 next_pid;\n\tlong prev_state;\n\tchar next_comm[16];\n\t__u32 cpu;\n\t__u32 state_size;\n};',
    );
    expect(spec.map('hist')?.keyTypeId).toBeUndefined();
  });
  it('global data with BTF variables placed by their symbols', () => {
    expect(spec.globals.map((g) => [g.section, g.kind, g.readonly, g.size, g.bytes === undefined ? 'nobits' : hex(g.bytes), g.vars.map((v) => `${v.name}@${v.byteOffset}/${v.size}`)])).toEqual([
      ['.rodata', 'rodata', true, 8, '0000000003000000', ['target_pid@0/4', 'slot_shift@4/4']],
      ['.data', 'data', false, 8, '0100000000000000', ['switches@0/8']],
      ['.bss', 'bss', false, 16, 'nobits', ['dropped@0/4', 'wakeups@8/8']],
    ]);
  });
  it('tracepoint field accesses (the manifest)', () => {
    expect(tracepointFieldAccesses(spec).map((a) => [a.event, a.field, a.kind, a.insnIndex, a.section, a.byteOffset, a.byteSize, a.signed])).toEqual([
      ['sched_switch', 'prev_pid', 'byte-offset', 1, 'tracepoint/sched/sched_switch', 24, 4, true],
      ['sched_switch', 'next_pid', 'byte-offset', 3, 'tracepoint/sched/sched_switch', 56, 4, true],
      ['sched_switch', 'prev_state', 'exists', 59, 'tracepoint/sched/sched_switch', 32, 8, true],
      ['sched_switch', 'prev_state', 'byte-offset', 63, 'tracepoint/sched/sched_switch', 32, 8, true],
      ['sched_switch', 'prev_state', 'byte-size', 66, 'tracepoint/sched/sched_switch', 32, 8, true],
      ['sched_switch', 'prev_state', 'byte-size', 68, 'tracepoint/sched/sched_switch', 32, 8, true],
      ['sched_switch', 'next_comm', 'byte-offset', 70, 'tracepoint/sched/sched_switch', 40, 16, false],
      ['sched_wakeup_template', 'pid', 'byte-offset', 0, 'tp/sched/sched_wakeup', 24, 4, true],
      ['sched_wakeup_template', 'common_pid', 'byte-offset', 2, 'tp/sched/sched_wakeup', 4, 4, true],
      ['sched_wakeup_template', 'prio', 'signed', 0, 'tp/sched/sched_wakeup', 28, 4, true],
      ['sched_wakeup_template', 'prio', 'byte-offset', 2, 'tp/sched/sched_wakeup', 28, 4, true],
      ['sched_wakeup_template', 'target_cpu', 'byte-offset', 6, 'tp/sched/sched_wakeup', 32, 4, true],
      ['sched_process_exec', 'filename', 'byte-offset', 0, 'tp/sched/sched_process_exec', 8, 4, false],
    ]);
    const exec = tracepointFieldAccesses(spec).find((a) => a.field === 'filename');
    expect(exec).toMatchObject({ dataLoc: true, memberPath: '__data_loc_filename', attach: { system: 'sched', event: 'sched_process_exec' }, program: 'on_exec' });
    const common = tracepointFieldAccesses(spec).find((a) => a.field === 'common_pid');
    expect(common).toMatchObject({ memberPath: 'ent.pid', program: 'on_wakeup', attach: { system: 'sched', event: 'sched_wakeup' } });
  });
  it('the big-endian build reads to the same spec', () => {
    const be = load('sched_trace.bpfeb');
    const summary = (s: ObjectSpec) => ({
      programs: [...s.programs, ...s.subprograms].map((p) => [p.name, p.byteOffset, p.insnCount, p.relocations, p.callees, p.lineInfo]),
      maps: s.maps,
      globals: s.globals.map((g) => [g.section, g.size, g.vars]),
      tp: tracepointFieldAccesses(s).map(({ relocation: _r, ...rest }) => rest),
      license: s.license,
    });
    expect(summary(be)).toEqual(summary(spec));
    // …while the bytes of .rodata are big endian
    expect(hex(be.globals[0]?.bytes ?? new Uint8Array())).toBe('0000000000000003');
  });
});

describe('legacy_probes.o facts', () => {
  const spec = load('legacy_probes');
  it('one program per libbpf section family', () => {
    expect(spec.programs.map((p) => [p.name, p.type, p.attach])).toEqual([
      ['count_syscall', 'tracepoint', { kind: 'tracepoint', system: 'raw_syscalls', event: 'sys_enter' }],
      ['on_exit_raw', 'raw_tracepoint', { kind: 'raw-tracepoint', name: 'sched_process_exit' }],
      ['on_switch_btf', 'tracing', { kind: 'btf', target: 'sched_switch' }],
      ['on_open', 'kprobe', { kind: 'kprobe', function: 'do_sys_openat2', offset: 0, retprobe: false }],
      ['on_open_ret', 'kprobe', { kind: 'kprobe', function: 'do_sys_openat2', offset: 0, retprobe: true }],
      ['on_malloc', 'kprobe', { kind: 'uprobe', binary: '/usr/lib/libc.so.6', function: 'malloc', offset: 0, retprobe: false }],
      ['on_malloc_ret', 'kprobe', { kind: 'uprobe', binary: '/usr/lib/libc.so.6', function: 'malloc', offset: 0, retprobe: true }],
      ['on_unlink', 'tracing', { kind: 'btf', target: 'do_unlinkat' }],
      ['on_unlink_exit', 'tracing', { kind: 'btf', target: 'do_unlinkat' }],
      ['pass_all', 'xdp', { kind: 'none' }],
      ['sock_filter', 'socket_filter', { kind: 'none' }],
      ['on_sample', 'perf_event', { kind: 'none' }],
    ]);
    expect(spec.subprograms).toEqual([]);
    expect(spec.license).toBe('GPL');
    expect(spec.kernelVersion).toBe(0x050a00);
  });
  it('legacy maps (struct bpf_map_def per symbol)', () => {
    expect(spec.maps.map((m) => [m.name, m.legacy, m.section, m.byteOffset, m.type, m.keySize, m.valueSize, m.maxEntries, m.flags])).toEqual([
      ['syscall_counts', true, 'maps', 0, 1, 4, 8, 512, 0],
      ['cpu_events', true, 'maps', 20, 4, 4, 4, 64, 0],
      ['per_cpu_hits', true, 'maps', 40, 5, 8, 8, 1024, 1],
    ]);
  });
  it('static data through section symbols with the offset in the instruction', () => {
    const r = spec.program('on_malloc')?.relocations;
    expect(r?.[0]).toMatchObject({ kind: 'global-data', symbol: '.rodata.str1.1', section: '.rodata.str1.1', addend: 12, dataByteOffset: 12 });
    const banner = spec.globals.find((g) => g.section === '.rodata.str1.1');
    expect(banner?.vars).toMatchObject([{ name: 'banner', byteOffset: 12, size: 10, btfVarId: undefined }]);
    expect(new TextDecoder().decode(banner?.bytes?.subarray(12, 21))).toBe('probeyard');
    expect(spec.globals.map((g) => [g.section, g.kind, g.vars.map((v) => `${v.name}:${v.linkage}`)])).toEqual([
      ['.data.tagged', 'data', ['tagged:global']],
      ['.bss', 'bss', ['hits:static']],
      ['.data', 'data', ['seed:static']],
      ['.rodata.str1.1', 'rodata', ['banner:undefined']],
    ]);
  });
});

describe('block_core.o facts', () => {
  const spec = load('block_core');
  it('CO-RE relocations of every kind clang 14 emits, with resolved paths', () => {
    expect(spec.coreRelocations.map((c) => [c.program, c.insnIndex, c.record.kindName, c.access?.rootName, c.access?.fieldPath, c.access?.localValue])).toEqual([
      ['on_rq_complete', 0, 'field-byte-offset', 'trace_event_raw_block_rq_complete', 'dev', 8],
      ['on_rq_complete', 2, 'field-byte-offset', 'trace_event_raw_block_rq_complete', 'nr_sector', 24],
      ['on_rq_complete', 8, 'field-exists', 'trace_event_raw_block_rq_complete', 'error', 1],
      ['on_rq_complete', 10, 'field-byte-offset', 'trace_event_raw_block_rq_complete', 'error', 28],
      ['on_rq_complete', 12, 'field-byte-offset', 'trace_event_raw_block_rq_complete___old', 'errors', 28],
      ['on_rq_complete', 41, 'field-byte-size', 'trace_event_raw_block_rq_complete', 'rwbs', 8],
      ['on_rq_complete', 42, 'field-signed', 'trace_event_raw_block_rq_complete', 'error', 1],
      ['on_start', 3, 'field-byte-offset', 'request_flags', 'prio', 0],
      ['on_start', 10, 'field-lshift-u64', 'request_flags', 'prio', 52],
      ['on_start', 11, 'field-rshift-u64', 'request_flags', 'prio', 61],
      ['on_start', 12, 'type-exists', 'request_flags', '', 1],
      ['on_start', 14, 'type-size', 'request_flags', '', 16],
      ['on_start', 16, 'type-id-local', 'request_flags', '', 59],
      ['on_start', 19, 'type-id-target', 'io_stat', '', 12],
      ['on_start', 22, 'enumval-exists', 'req_op', 'REQ_OP_DISCARD', 1],
      ['on_start', 25, 'enumval-value', 'req_op', 'REQ_OP_FLUSH', 2],
      ['on_start', 28, 'field-exists', 'request_flags', 'u.weight', 1],
    ]);
  });
  it('describes each access in one line', () => {
    const btf = spec.btf as NonNullable<ObjectSpec['btf']>;
    expect(spec.coreRelocations.map((c) => formatCoreAccess(btf, c.access as NonNullable<typeof c.access>))).toEqual([
      'field-byte-offset [42] struct trace_event_raw_block_rq_complete.dev (0:1 @ offset 8, size 4)',
      'field-byte-offset [42] struct trace_event_raw_block_rq_complete.nr_sector (0:3 @ offset 24, size 4)',
      'field-exists [42] struct trace_event_raw_block_rq_complete.error (0:4 @ offset 28, size 4)',
      'field-byte-offset [42] struct trace_event_raw_block_rq_complete.error (0:4 @ offset 28, size 4)',
      'field-byte-offset [51] struct trace_event_raw_block_rq_complete___old.errors (0:4 @ offset 28, size 4)',
      'field-byte-size [42] struct trace_event_raw_block_rq_complete.rwbs (0:5 @ offset 32, size 8)',
      'field-signed [42] struct trace_event_raw_block_rq_complete.error (0:4 @ offset 28, size 4)',
      'field-byte-offset [59] struct request_flags.prio (0:2 @ offset 0, size 4, bits 9+3)',
      'field-lshift-u64 [59] struct request_flags.prio (0:2 @ offset 0, size 4, bits 9+3)',
      'field-rshift-u64 [59] struct request_flags.prio (0:2 @ offset 0, size 4, bits 9+3)',
      'type-exists [59] struct request_flags',
      'type-size [59] struct request_flags',
      'type-id-local [59] struct request_flags',
      'type-id-target [12] struct io_stat',
      'enumval-exists [65] enum req_op::REQ_OP_DISCARD = 3',
      'enumval-value [65] enum req_op::REQ_OP_FLUSH = 2',
      'field-exists [59] struct request_flags.u.weight (0:4:1 @ offset 8, size 4)',
    ]);
    expect(tracepointFieldAccesses(spec).map(formatTracepointFieldAccess).slice(0, 3)).toEqual([
      'event block_rq_complete, field dev, kind byte-offset',
      'event block_rq_complete, field nr_sector, kind byte-offset',
      'event block_rq_complete, field error, kind exists',
    ]);
  });
  it('flavored records keep the event and report the flavor', () => {
    const old = tracepointFieldAccesses(spec).filter((a) => a.flavor !== '');
    expect(old.map((a) => [a.event, a.flavor, a.field, a.kind])).toEqual([['block_rq_complete', 'old', 'errors', 'byte-offset']]);
  });
  it('a map whose value type prints with its volatile and float members', () => {
    const m = spec.map('io_stats');
    expect(m).toMatchObject({ typeName: 'hash', keySize: 4, valueSize: 24, maxEntries: 4096 });
    const btf = spec.btf as NonNullable<ObjectSpec['btf']>;
    expect(formatBtfType(btf, m?.valueTypeId ?? 0)).toBe('struct io_stat {\n\t__u64 bytes;\n\t__u32 count;\n\tvolatile __u32 errors;\n\tfloat avg_ms;\n};');
    expect(formatBtfType(btf, btf.typeByName('account', 'func').id)).toBe(
      'static int account(struct io_stat *st, const unsigned int *restrict nr, int err);',
    );
    expect(formatBtfType(btf, btf.typeByName('request_flags', 'struct').id)).toBe(
      [
        'struct request_flags {',
        '\tunsigned int op: 8;',
        '\tunsigned int sync: 1;',
        '\tint prio: 3;',
        '\tunsigned int pad: 20;',
        '\tunion {',
        '\t\t__u64 deadline;',
        '\t\tfloat weight;',
        '\t\tvoid __attribute__((btf_type_tag("user"))) *ubuf;',
        '\t} u;',
        '};',
      ].join('\n'),
    );
  });
  it('map-in-map with its inner definition and initial slot; a bloom filter with map_extra and numa_node', () => {
    expect(spec.maps.map((m) => [m.name, m.typeName, m.keySize, m.valueSize, m.maxEntries, m.numaNode, m.mapExtra, m.byteOffset])).toEqual([
      ['io_stats', 'hash', 4, 24, 4096, 0, 0, 0],
      ['counts_a', 'array', 4, 8, 8, 0, 0, 32],
      ['per_disk', 'array_of_maps', 4, 4, 2, 0, 0, 64],
      ['seen_devs', 'bloom_filter', 0, 4, 1024, 1, 3, 96],
    ]);
    const outer = spec.map('per_disk');
    expect(outer?.innerMap).toMatchObject({ typeName: 'array', keySize: 4, valueSize: 8, maxEntries: 8 });
    expect(outer?.initialSlots).toEqual([{ index: 0, name: 'counts_a' }]);
    // the slot is the one R_BPF_64_ABS64 that llvm-readelf lists for .rel.maps
    expect(spec.relocations.filter((r) => r.targetSection === '.maps').map((r) => [r.byteOffset, r.typeName, r.symbol.name])).toEqual([[0x58, 'R_BPF_64_ABS64', 'counts_a']]);
  });
  it('the symbol table agrees with BTF linkage', () => {
    const account = spec.elf.symbols.find((s) => s.name === 'account');
    expect(account).toMatchObject({ type: SymbolType.Func, binding: SymbolBinding.Local });
  });
});
