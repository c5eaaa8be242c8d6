// What libbpf-tools' objects need of the verifier: frozen .rodata as known constants (disabled
// options prune), bpf_current_task_under_cgroup on a cgroup array (and nowhere else), weak __ksym
// externs linked as libbpf links absent ones. The corpus objects are examples/libbpf (built with
// this kernel's vmlinux.h and libbpf's headers); the kernel's verdicts on them are compared in
// apps/cli/test/libbpf-tools.test.ts.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readBpfObject } from '@probeyard/formats';
import { describe, expect, it } from 'vitest';
import { linkObjectProgram, type MapDef, POISON_CALL_KFUNC_BASE, verify } from '../src/index.js';
import { asm } from './support.js';

// r1 = .rodata value: if (*(u32 *)(value + 4)) call an unknown helper (rejected where reachable)
const option = `
.map rodata array key=4 value=8 entries=1
  r1 = rodata ll
  r2 = r10
  r2 += -4
  *(u32 *)(r10 - 4) = 0
  call bpf_map_lookup_elem
  if r0 == 0 goto out
  r1 = *(u32 *)(r0 + 4)
  if r1 == 0 goto out
  call 999
out:
  r0 = 0
  exit
`;

describe('frozen read-only maps (.rodata)', () => {
  const { bytes, maps } = asm(option);
  const frozen = (value: number[]) => [{ ...maps[0]!, readonly: true, frozen: Uint8Array.from(value) }];
  it.each<[string, MapDef[], boolean]>([
    ['not frozen: both branches explored, the bad call found', maps, false],
    ['frozen with the option off: the branch is dead', frozen([0, 0, 0, 0, 0, 0, 0, 0]), true],
    ['frozen with the option on: the bad call is reached', frozen([0, 0, 0, 0, 1, 0, 0, 0]), false],
  ])('%s', (_what, defs, ok) => {
    const r = verify(bytes, { maps: defs });
    expect(r.ok).toBe(ok);
    if (!ok) expect(r.diagnostics[0]!.message).toBe('invalid func unknown#999');
  });

  it('a load at an unknown offset is an unknown scalar', () => {
    const r = verify(
      asm(`
.map rodata array key=4 value=8 entries=1
  r1 = rodata ll
  r2 = r10
  r2 += -4
  *(u32 *)(r10 - 4) = 0
  call bpf_map_lookup_elem
  if r0 == 0 goto out
  r6 = r0
  call bpf_get_prandom_u32
  r0 &= 4
  r6 += r0
  r1 = *(u32 *)(r6 + 0)
  if r1 == 0 goto out
  call 999
out:
  r0 = 0
  exit
`).bytes,
      { maps: frozen([0, 0, 0, 0, 0, 0, 0, 0]) },
    );
    expect(r.ok).toBe(false);
  });
});

describe('cgroup array and bpf_current_task_under_cgroup', () => {
  const source = (type: string) => `
.map cg ${type} key=4 value=4 entries=1
  r1 = cg ll
  r2 = 0
  call bpf_current_task_under_cgroup
  r0 = 0
  exit
`;
  it('accepted on a cgroup array (map type 8)', () => {
    const { bytes, maps } = asm(source('cgroup_array'));
    expect(verify(bytes, { maps }).ok).toBe(true);
  });
  it('refused on another map type, and a cgroup array refused to map_lookup_elem', () => {
    const hash = asm(source('hash'));
    expect(verify(hash.bytes, { maps: hash.maps }).diagnostics[0]!.message).toBe('cannot pass map_type 1 into func bpf_current_task_under_cgroup#37');
    const lookup = asm(`
.map cg cgroup_array key=4 value=4 entries=1
  r1 = cg ll
  r2 = r10
  r2 += -4
  *(u32 *)(r10 - 4) = 0
  call bpf_map_lookup_elem
  r0 = 0
  exit
`);
    expect(verify(lookup.bytes, { maps: lookup.maps }).ok).toBe(false);
  });
});

const corpus = join(import.meta.dirname, '../../../examples/libbpf');
describe.skipIf(!existsSync(corpus))('libbpf-style objects (examples/libbpf)', () => {
  it('a weak kfunc: its address is 0, its call the poison id, dead once bpf_ksym_exists is false', () => {
    const object = readBpfObject(new Uint8Array(readFileSync(join(corpus, 'ksym.bpf.o'))));
    const externs = object.program('count_exec')!.relocations.filter((r) => r.kind === 'extern');
    expect(externs.map((r) => r.kind === 'extern' && [r.symbol, r.weak, r.call])).toEqual([
      ['bpf_probeyard_cgroup_of_task', true, false],
      ['bpf_probeyard_cgroup_of_task', true, true],
    ]);
    const linked = linkObjectProgram(object, 'count_exec');
    const view = new DataView(linked.bytes.buffer, linked.bytes.byteOffset);
    const [address, call] = externs.map((r) => r.insnIndex);
    expect([linked.bytes[address! * 8 + 1]! >> 4, view.getInt32(address! * 8 + 4, true), view.getInt32(address! * 8 + 12, true)]).toEqual([0, 0, 0]);
    expect([linked.bytes[call! * 8]!, linked.bytes[call! * 8 + 1]! >> 4, view.getInt32(call! * 8 + 4, true)]).toEqual([0x85, 0, POISON_CALL_KFUNC_BASE]);
    expect(verify(linked.bytes, { maps: linked.maps }).ok).toBe(true);
  });

  it('syscount: .rodata is frozen at link, so the disabled options cost nothing (the kernel: 20 and 60 insns processed)', () => {
    const object = readBpfObject(new Uint8Array(readFileSync(join(corpus, 'syscount.bpf.o'))));
    const processed = ['sys_enter', 'sys_exit'].map((name) => {
      const linked = linkObjectProgram(object, name);
      expect(linked.maps.find((m) => m.name === '.rodata')?.frozen).toBeDefined();
      const r = verify(linked.bytes, { maps: linked.maps });
      expect(r.ok).toBe(true);
      const thawed = verify(linked.bytes, { maps: linked.maps.map(({ frozen: _f, ...m }) => m) });
      expect(thawed.ok).toBe(true);
      return [r.stats.insnsProcessed, thawed.stats.insnsProcessed] as const;
    });
    // frozen: what the kernel walks (20, 60 in Linux 6.18); not frozen: every option explored
    const [enter, exit] = processed as [readonly [number, number], readonly [number, number]];
    expect(enter[0]).toBeLessThan(enter[1]);
    expect(exit[0]).toBeLessThan(exit[1]);
    expect(exit[0]).toBeLessThanOrEqual(60);
  });

  it('outsideReads: probe reads from a plain number (a task_struct), not those of the record', () => {
    const boot = readBpfObject(new Uint8Array(readFileSync(join(corpus, 'bootstrap.bpf.o'))));
    const exec = linkObjectProgram(boot, 'handle_exec');
    const reads = verify(exec.bytes, { maps: exec.maps }).outsideReads ?? [];
    // BPF_CORE_READ(task, real_parent, tgid): two bpf_probe_read_kernel; the file name is read from ctx
    expect(reads.map((r) => r.helper)).toEqual([113, 113]);
    const snoop = linkObjectProgram(readBpfObject(new Uint8Array(readFileSync(join(corpus, 'execsnoop.bpf.o')))), 'handle_exec');
    expect(verify(snoop.bytes, { maps: snoop.maps }).outsideReads).toEqual([]);
  });
});
