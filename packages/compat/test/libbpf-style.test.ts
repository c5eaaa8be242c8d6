// libbpf-tools' ways through compat, on the corpus objects (examples/libbpf, built with this
// kernel's vmlinux.h and libbpf's headers) and the kernel profile of the recording made for them:
// syscall tracepoint structs relocated by argument position, optional programs, the
// kernel-memory reason, .rodata options set by name.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildManifest, checkCompat, formatVerdict, parseRodataAssignment, readProgramSpec, setRodata } from '../src/index.js';
import { readProfile } from '../src/node/index.js';

const corpus = join(import.meta.dirname, '../../../examples/libbpf');
const dat = join(corpus, 'recordings/libbpf-tools.dat');
const spec = async (name: string) => readProgramSpec(new Uint8Array(readFileSync(join(corpus, `${name}.bpf.o`))));

describe.skipIf(!existsSync(dat))('libbpf-style objects (examples/libbpf)', () => {
  it('syscall_trace_enter.args[i] is the i-th field after __syscall_nr, syscall_trace_exit.ret is ret', async () => {
    const s = await spec('opensnoop');
    const fields = buildManifest(s).fields.map((f) => `${f.event}.${f.field}`);
    expect(fields).toEqual([
      'syscalls/sys_enter_open.args[0]',
      'syscalls/sys_enter_open.args[1]',
      'syscalls/sys_enter_open.args[2]',
      'syscalls/sys_enter_openat.args[1]',
      'syscalls/sys_enter_openat.args[2]',
      'syscalls/sys_enter_openat.args[3]',
      'syscalls/sys_exit_open.ret',
      'syscalls/sys_exit_openat.ret',
    ]);
    const profile = await readProfile(dat);
    const v = checkCompat(s, profile);
    expect(v.status).toBe('compatible');
    // sys_enter_openat: dfd 16, filename 24, flags 32, mode 40 in this kernel's format
    const openat = v.plan.programs.find((p) => p.program === 'tracepoint__syscalls__sys_enter_openat')!;
    expect(openat.fixups.map((f) => [f.access.field, f.target?.name, f.target?.byteOffset])).toEqual([
      ['args[1]', 'filename', 24],
      ['args[2]', 'flags', 32],
      ['args[3]', 'mode', 40],
    ]);
  });

  it('a 32-bit kernel (4-byte arguments): args[i] moves and loads 4 bytes', async () => {
    const s = await spec('opensnoop');
    const profile = await readProfile(dat);
    const key = 'syscalls/sys_enter_openat';
    const f = profile.formats.get(profile.events.get(key)!)!;
    // the same event as a 32-bit kernel lays it out: __syscall_nr 8, then 4-byte arguments from 12
    let at = 12;
    const fields = f.fields.map((x) => (x.isCommon || x.name === '__syscall_nr' ? x : { ...x, byteOffset: (at += 4) - 4, size: 4 }));
    profile.formats.set('arm32', { ...f, fields, longSize: 4 });
    profile.events.set(key, 'arm32');
    const v = checkCompat(s, profile);
    const p = v.programs.find((x) => x.program === 'tracepoint__syscalls__sys_enter_openat')!;
    expect(p.status).toBe('relocated');
    expect(p.changes).toEqual(['args[1]: offset 24 → 16, load size 8 → 4', 'args[2]: offset 32 → 20, load size 8 → 4', 'args[3]: offset 40 → 24, load size 8 → 4']);
  });

  it('optional programs: a missing event skips its program when the others run; all missing is unknown', async () => {
    const s = await spec('opensnoop');
    const profile = await readProfile(dat);
    profile.events.delete('syscalls/sys_enter_open');
    profile.events.delete('syscalls/sys_exit_open');
    const v = checkCompat(s, profile);
    expect(v.status).toBe('compatible');
    expect(v.skipped).toEqual(['tracepoint__syscalls__sys_enter_open', 'tracepoint__syscalls__sys_exit_open']);
    expect(v.relocated!.programs.map((p) => p.name)).toEqual(['tracepoint__syscalls__sys_enter_openat', 'tracepoint__syscalls__sys_exit_openat']);
    expect(formatVerdict(v).split('\n')[0]).toBe('compatible; skipped: tracepoint__syscalls__sys_enter_open, tracepoint__syscalls__sys_exit_open (event not on this kernel)');
    profile.events.delete('syscalls/sys_enter_openat');
    profile.events.delete('syscalls/sys_exit_openat');
    const none = checkCompat(s, profile);
    expect(none.status).toBe('unknown');
    expect(none.skipped).toEqual([]);
    expect(none.relocated).toBeUndefined();
  });

  it('kernel memory: said up front, the verdict is not plain compatible, the program still runs', async () => {
    const profile = await readProfile(dat);
    const v = checkCompat(await spec('bootstrap'), profile);
    expect(v.status).toBe('compatible');
    expect(v.kernelMemory).toEqual(['handle_exec', 'handle_exit']);
    expect(v.relocated).toBeDefined();
    expect(v.reasons.map((r) => r.text)).toEqual([
      'handle_exec: reads kernel memory (bpf_probe_read_kernel) that a userspace runtime cannot see: those reads fail with -EFAULT and give zeros (counted as kernelReadsFailed)',
      'handle_exit: reads kernel memory (bpf_probe_read_kernel) that a userspace runtime cannot see: those reads fail with -EFAULT and give zeros (counted as kernelReadsFailed)',
    ]);
    expect(formatVerdict(v).split('\n')[0]).toBe('compatible, reads kernel memory (handle_exec, handle_exit)');
    // a record's __data_loc string read with bpf_probe_read_str is not kernel memory
    expect(checkCompat(await spec('execsnoop'), profile).kernelMemory).toEqual([]);
  });

  it('.rodata options by name: bytes at the variable, bools and negatives, refusals that name the variables', async () => {
    const s = await spec('syscount');
    const set = setRodata(s, Object.fromEntries(['filter_pid=4242', 'count_by_process=true', 'filter_errno=-2'].map(parseRodataAssignment)));
    const g = set.globals.find((x) => x.kind === 'rodata')!;
    const at = (name: string) => {
      const v = g.vars.find((x) => x.name === name)!;
      return [...g.bytes!.subarray(v.byteOffset, v.byteOffset + v.size)];
    };
    expect(at('filter_pid')).toEqual([0x92, 0x10, 0, 0]);
    expect(at('count_by_process')).toEqual([1]);
    expect(at('filter_errno')).toEqual([0xfe, 0xff, 0xff, 0xff]);
    // the original is unchanged
    expect(s.globals.find((x) => x.kind === 'rodata')!.bytes!.every((b) => b === 0)).toBe(true);
    expect(() => setRodata(s, { filter_pid: 1n << 40n })).toThrow('rodata: filter_pid has 4 bytes, 1099511627776 does not fit');
    expect(() => setRodata(s, { nope: 1 })).toThrow('rodata: no read-only variable nope');
    expect(() => parseRodataAssignment('filter_pid')).toThrow('is not NAME=VALUE');
    expect(() => parseRodataAssignment('filter_pid=abc')).toThrow('is not an integer or true/false');
  });
});
