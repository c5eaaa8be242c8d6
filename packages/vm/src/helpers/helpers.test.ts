import { describe, expect, it } from 'vitest';
import { Errno } from '../maps/errno.js';
import { loadAssembly } from '../load-assembly.js';
import { RunStatus, type VmOutput } from '../vm.js';

function run(source: string, context = new Uint8Array(16), setup?: Parameters<typeof loadAssembly>[1]) {
  const outputs: VmOutput[] = [];
  const { vm, maps, programs } = loadAssembly(source, { output: (o) => outputs.push(o), ...setup });
  vm.cpu = 1;
  vm.timeLo = 0x89abcdef;
  vm.timeHi = 0x1234;
  vm.pid = 4242;
  const status = vm.run([...programs.values()][0]!, context);
  return { vm, maps, outputs, status };
}

describe('helpers answer from the event', () => {
  it.each([
    ['bpf_ktime_get_ns = the event timestamp', 'call bpf_ktime_get_ns\nexit', 0x1234_89abcdefn],
    ['bpf_ktime_get_boot_ns = the event timestamp', 'call bpf_ktime_get_boot_ns\nexit', 0x1234_89abcdefn],
    ['bpf_get_smp_processor_id = the record CPU', 'call bpf_get_smp_processor_id\nexit', 1n],
    ['bpf_get_current_pid_tgid = tgid << 32 | pid', 'call bpf_get_current_pid_tgid\nexit', (4200n << 32n) | 4242n],
    ['bpf_get_current_uid_gid (unknown) = -EINVAL', 'call bpf_get_current_uid_gid\nexit', BigInt.asUintN(64, BigInt(-Errno.EINVAL))],
  ])('%s', (_what, source, expected) => {
    const r = run(source as string, undefined, { environment: { tgidOf: (pid) => (pid === 4242 ? 4200 : undefined) } });
    expect(r.status).toBe(RunStatus.ok);
    expect(r.vm.r0).toBe(expected);
  });

  it('bpf_get_current_comm copies saved_cmdlines, NUL-terminated and zero-padded', () => {
    const r = run(
      `*(u64 *)(r10 - 16) = -1
       *(u64 *)(r10 - 8) = -1
       r1 = r10
       r1 += -16
       r2 = 16
       call bpf_get_current_comm
       r0 = *(u64 *)(r10 - 16)
       exit`,
      undefined,
      { environment: { commOf: (pid) => (pid === 4242 ? 'sshd' : undefined) } },
    );
    expect(r.vm.r0).toBe(0x64687373n); // "sshd" little-endian, then zeros
  });

  it('probe_read copies from the record; other addresses give -EFAULT and a zeroed destination', () => {
    const ctx = Uint8Array.from({ length: 16 }, (_, i) => i + 1);
    const ok = run(
      `r3 = r1
       r3 += 4
       r1 = r10
       r1 += -8
       r2 = 8
       call bpf_probe_read_kernel
       r0 = *(u64 *)(r10 - 8)
       exit`,
      ctx,
    );
    expect(ok.vm.r0).toBe(0x0c0b0a0908070605n);
    const bad = run(
      `*(u64 *)(r10 - 8) = -1
       r1 = r10
       r1 += -8
       r2 = 8
       r3 = 0xffff888000000000 ll
       call bpf_probe_read_user
       r6 = r0
       r0 = *(u64 *)(r10 - 8)
       r0 += r6
       exit`,
      ctx,
    );
    expect(bad.status).toBe(RunStatus.ok);
    expect(bad.vm.r0).toBe(BigInt.asUintN(64, BigInt(-Errno.EFAULT)));
  });

  it('probe_read_str stops at the NUL and returns the length with it', () => {
    const ctx = new Uint8Array(16);
    ctx.set(new TextEncoder().encode('bash'), 8);
    const r = run(
      `r3 = r1
       r3 += 8
       r1 = r10
       r1 += -16
       r2 = 16
       call bpf_probe_read_kernel_str
       exit`,
      ctx,
    );
    expect(r.vm.r0).toBe(5n);
  });

  it('bpf_trace_printk formats into a printk output', () => {
    // "%x %d %s" at r10-16, "hi" at r10-24
    const r = run(`
       r6 = 0x7325206425207825 ll
       *(u64 *)(r10 - 16) = r6
       *(u64 *)(r10 - 8) = 0
       *(u64 *)(r10 - 24) = 0x6968
       r1 = r10
       r1 += -16
       r2 = 16
       r3 = 255
       r4 = -3
       r5 = r10
       r5 += -24
       call bpf_trace_printk
       exit`);
    expect(r.status).toBe(RunStatus.ok);
    expect(r.outputs).toEqual([{ kind: 'printk', cpu: 1, timestamp: 0x1234_89abcdefn, pid: 4242, text: 'ff -3 hi' }]);
    expect(r.vm.r0).toBe(9n);
  });

  it('bpf_perf_event_output emits a perf record for the current CPU', () => {
    const r = run(
      `.map perf perf_event_array key=4 value=4 entries=4
       r4 = r1
       r1 = r1
       r2 = perf ll
       r3 = 0xffffffff ll
       r5 = 4
       call bpf_perf_event_output
       exit`,
      Uint8Array.from([9, 8, 7, 6, 5]),
    );
    expect(r.vm.r0).toBe(0n);
    expect(r.outputs).toEqual([{ kind: 'perf', map: 'perf', cpu: 1, timestamp: 0x1234_89abcdefn, data: Uint8Array.from([9, 8, 7, 6]) }]);
  });

  it('ringbuf reserve/submit and query', () => {
    const r = run(`
       .map rb ringbuf key=0 value=0 entries=4096
       r1 = rb ll
       r2 = 8
       r3 = 0
       call bpf_ringbuf_reserve
       if r0 == 0 goto out
       *(u64 *)(r0 + 0) = 77
       r1 = r0
       r2 = 0
       call bpf_ringbuf_submit
       r1 = rb ll
       r2 = 0
       call bpf_ringbuf_query
     out:
       exit`);
    expect(r.status).toBe(RunStatus.ok);
    expect(r.vm.r0).toBe(16n);
    expect(r.outputs).toEqual([{ kind: 'ringbuf', map: 'rb', cpu: 1, timestamp: 0x1234_89abcdefn, data: Uint8Array.from([77, 0, 0, 0, 0, 0, 0, 0]) }]);
  });

  it('submitting something that is not a reservation faults', () => {
    const r = run('r1 = r10\nr1 += -8\nr2 = 0\ncall bpf_ringbuf_submit\nexit');
    expect(r.status).toBe(RunStatus.fault);
    expect(r.vm.fault?.message).toMatch(/^helper fault: bpf_ringbuf_submit: r1 is not an outstanding ring buffer reservation at pc 3/);
    expect(r.vm.fault?.region).toBe('stack');
  });

  it('get_prandom_u32 is deterministic for a seed', () => {
    const a = run('call bpf_get_prandom_u32\nexit', undefined, { randomSeed: 7 });
    const b = run('call bpf_get_prandom_u32\nexit', undefined, { randomSeed: 7 });
    expect(a.vm.r0).toBe(b.vm.r0);
    expect(a.vm.r0 >> 32n).toBe(0n);
  });
});
