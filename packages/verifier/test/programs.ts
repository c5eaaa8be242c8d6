// Tracepoint programs with the verdict and message both our verifier and the kernel give.
// Shared by programs.test.ts (our verifier) and kernel.test.ts (the running kernel).

export interface ProgramCase {
  name: string;
  source: string;
  /** undefined: accepted. Otherwise our exact diagnostic message. */
  reject?: string;
  /** A line of the kernel's log when it words the reason differently (default: `reject`). */
  kernelMessage?: string;
  /** Event whose format gives the context layout (sched/<event>). */
  event?: string;
  /** Our verdict only: the kernel is not comparable (option the kernel does not have). */
  notKernel?: string;
  options?: { privileged?: boolean; insnLimit?: number; allowUninitStack?: boolean };
}

export const ACCEPTED: ProgramCase[] = [
  { name: 'return 0', source: 'r0 = 0\nexit' },
  {
    name: 'read next_pid by field name',
    event: 'sched_switch',
    source: `
      r2 = *(u32 *)(r1 + sched_switch.next_pid)
      r3 = *(u64 *)(r1 + sched_switch.prev_state)
      r0 = 0
      exit`,
  },
  {
    name: 'hash map lookup with null check, update',
    source: `
      .map counts hash key=4 value=8 entries=1024
      r6 = *(u32 *)(r1 + 24)
      *(u32 *)(r10 - 4) = r6
      r2 = r10
      r2 += -4
      r1 = counts ll
      call bpf_map_lookup_elem
      if r0 == 0 goto missing
      r1 = *(u64 *)(r0 + 0)
      r1 += 1
      *(u64 *)(r0 + 0) = r1
      r0 = 0
      exit
    missing:
      *(u64 *)(r10 - 16) = 1
      r1 = counts ll
      r2 = r10
      r2 += -4
      r3 = r10
      r3 += -16
      r4 = 0
      call bpf_map_update_elem
      r0 = 0
      exit`,
  },
  {
    name: 'ring buffer reserve, fill, submit',
    source: `
      .map events ringbuf key=0 value=0 entries=4096
      r6 = r1
      r1 = events ll
      r2 = 16
      r3 = 0
      call bpf_ringbuf_reserve
      if r0 == 0 goto out
      r7 = r0
      call bpf_ktime_get_ns
      *(u64 *)(r7 + 0) = r0
      r1 = *(u32 *)(r6 + 8)
      *(u32 *)(r7 + 8) = r1
      *(u32 *)(r7 + 12) = 0
      r1 = r7
      r2 = 0
      call bpf_ringbuf_submit
    out:
      r0 = 0
      exit`,
  },
  {
    name: 'ring buffer reserve then discard on one path, submit on the other',
    source: `
      .map events ringbuf key=0 value=0 entries=4096
      r6 = *(u32 *)(r1 + 8)
      r1 = events ll
      r2 = 8
      r3 = 0
      call bpf_ringbuf_reserve
      if r0 == 0 goto out
      r1 = r0
      r2 = 0
      if r6 > 100 goto drop
      *(u64 *)(r1 + 0) = r6
      call bpf_ringbuf_submit
      goto out
    drop:
      call bpf_ringbuf_discard
    out:
      r0 = 0
      exit`,
  },
  {
    name: 'bounded loop summing 0..99',
    source: `
      r0 = 0
      r1 = 0
    loop:
      r0 += r1
      r1 += 1
      if r1 < 100 goto loop
      r0 = 0
      exit`,
  },
  {
    name: 'bounded loop over a map value array',
    source: `
      .map table array key=4 value=64 entries=1
      *(u32 *)(r10 - 4) = 0
      r2 = r10
      r2 += -4
      r1 = table ll
      call bpf_map_lookup_elem
      if r0 == 0 goto out
      r6 = 0
      r7 = 0
    loop:
      r1 = r0
      r1 += r6
      r2 = *(u8 *)(r1 + 0)
      r7 += r2
      r6 += 1
      if r6 < 64 goto loop
    out:
      r0 = 0
      exit`,
  },
  {
    name: 'string from a __data_loc field with probe_read_kernel_str',
    event: 'sched_process_exec',
    source: `
      r6 = *(u32 *)(r1 + sched_process_exec.filename)
      r6 &= 0xffff
      r3 = r1
      r3 += r6
      r1 = r10
      r1 += -64
      r2 = 64
      call bpf_probe_read_kernel_str
      r0 = 0
      exit`,
  },
  {
    name: 'variable index checked against the value size',
    source: `
      .map table array key=4 value=64 entries=1
      r6 = *(u32 *)(r1 + 8)
      *(u32 *)(r10 - 4) = 0
      r2 = r10
      r2 += -4
      r1 = table ll
      call bpf_map_lookup_elem
      if r0 == 0 goto out
      r6 &= 7
      r6 <<= 3
      r0 += r6
      r1 = *(u64 *)(r0 + 0)
    out:
      r0 = 0
      exit`,
  },
  {
    name: 'pointer spilled to the stack and filled back',
    source: `
      *(u64 *)(r10 - 8) = r1
      r1 = 0
      r1 = *(u64 *)(r10 - 8)
      r0 = *(u32 *)(r1 + 8)
      r0 = 0
      exit`,
  },
  {
    name: 'bpf-to-bpf call with a stack buffer',
    source: `
      r1 = r10
      r1 += -8
      call pc+3
      r0 = *(u64 *)(r10 - 8)
      r0 = 0
      exit
      *(u64 *)(r1 + 0) = 7
      r0 = 0
      exit`,
  },
  {
    name: 'bpf_loop callback writing its context',
    // ld_pseudo r2, 4, 8: the address of the callback 8 instructions after the next one
    source: `
      r1 = 10
      ld_pseudo r2, 4, 8
      r3 = r10
      r3 += -8
      *(u64 *)(r10 - 8) = 0
      r4 = 0
      call bpf_loop
      r0 = 0
      exit
      *(u64 *)(r2 + 0) = r1
      r0 = 0
      exit`,
    notKernel: 'callbacks need BTF func_info, which the loader does not pass',
  },
  {
    name: 'uninitialized stack read (allowed for root)',
    source: `
      r0 = *(u64 *)(r10 - 8)
      r0 = 0
      exit`,
  },
];

export const REJECTED: ProgramCase[] = [
  {
    name: 'common fields are not readable',
    source: 'r0 = *(u32 *)(r1 + 0)\nexit',
    reject: 'invalid bpf_context access off=0 size=4',
  },
  {
    name: 'misaligned ctx read',
    source: 'r0 = *(u32 *)(r1 + 10)\nexit',
    reject: 'invalid bpf_context access off=10 size=4',
  },
  {
    name: 'ctx write',
    source: '*(u32 *)(r1 + 8) = 0\nr0 = 0\nexit',
    reject: 'invalid bpf_context access off=8 size=4',
  },
  {
    name: 'ctx read past the record',
    event: 'sched_switch',
    source: 'r0 = *(u32 *)(r1 + 80)\nr0 = 0\nexit',
    reject: 'invalid bpf_context access off=80 size=4: past the 64-byte record of sched/sched_switch',
    notKernel: 'the kernel checks only off < 8192',
  },
  {
    name: 'ctx read across two fields',
    event: 'sched_switch',
    source: 'r0 = *(u64 *)(r1 + 24)\nr0 = 0\nexit',
    reject: 'invalid bpf_context access off=24 size=8: spans fields prev_pid, prev_prio of sched/sched_switch',
    notKernel: 'the kernel does not know the fields',
  },
  {
    name: 'map value read out of bounds',
    source: `
      .map counts hash key=4 value=8 entries=16
      *(u32 *)(r10 - 4) = 0
      r2 = r10
      r2 += -4
      r1 = counts ll
      call bpf_map_lookup_elem
      if r0 == 0 goto out
      r0 = *(u32 *)(r0 + 8)
    out:
      r0 = 0
      exit`,
    reject: 'invalid access to map value, value_size=8 off=8 size=4',
  },
  {
    name: 'missing null check',
    source: `
      .map counts hash key=4 value=8 entries=16
      *(u32 *)(r10 - 4) = 0
      r2 = r10
      r2 += -4
      r1 = counts ll
      call bpf_map_lookup_elem
      r0 = *(u64 *)(r0 + 0)
      r0 = 0
      exit`,
    reject: "R0 invalid mem access 'map_value_or_null'",
  },
  {
    name: 'uninitialized register',
    source: 'r0 = r2\nexit',
    reject: 'R2 !read_ok',
  },
  {
    name: 'no return value',
    source: 'exit',
    reject: 'R0 !read_ok',
  },
  {
    name: 'uninitialized stack read (unprivileged rules)',
    source: 'r0 = *(u64 *)(r10 - 8)\nr0 = 0\nexit',
    reject: 'invalid read from stack off -8+0 size 8',
    options: { allowUninitStack: false },
    notKernel: 'root may read uninitialized stack',
  },
  {
    name: 'leaked ring buffer reservation',
    source: `
      .map events ringbuf key=0 value=0 entries=4096
      r1 = events ll
      r2 = 8
      r3 = 0
      call bpf_ringbuf_reserve
      r0 = 0
      exit`,
    reject: 'Unreleased reference id=2 alloc_insn=4',
  },
  {
    name: 'ring buffer memory written past its size',
    source: `
      .map events ringbuf key=0 value=0 entries=4096
      r1 = events ll
      r2 = 8
      r3 = 0
      call bpf_ringbuf_reserve
      if r0 == 0 goto out
      *(u64 *)(r0 + 4) = 1
      r1 = r0
      r2 = 0
      call bpf_ringbuf_submit
    out:
      r0 = 0
      exit`,
    reject: 'invalid access to memory, mem_size=8 off=4 size=8',
  },
  {
    name: 'infinite loop',
    source: `
      r0 = 0
    loop:
      if r0 == 0 goto loop
      exit`,
    reject: 'infinite loop detected at insn 1',
  },
  {
    name: 'loop whose bound is never reached',
    source: `
      r0 = 0
    loop:
      r0 += 1
      if r0 != 0 goto loop
      exit`,
    reject: 'BPF program is too large. Processed 20001 insn',
    options: { insnLimit: 20_000 },
    notKernel: 'the kernel limit is 1,000,000 instructions',
  },
  {
    name: 'jump past the end',
    source: 'r0 = 0\nif r0 == 0 goto +3\nexit',
    reject: 'jump out of range from insn 1 to 5',
  },
  {
    name: 'back-edge under unprivileged rules',
    source: 'r0 = 0\nif r0 != 0 goto -2\nexit',
    reject: 'back-edge from insn 1 to 0',
    options: { privileged: false },
    notKernel: 'root may loop',
  },
  {
    name: 'unreachable instruction',
    source: 'r0 = 0\nexit\nr0 = 1\nexit',
    reject: 'unreachable insn 2',
  },
  {
    name: 'scalar passed as the map',
    source: `
      r1 = 0
      r2 = r10
      r2 += -8
      *(u64 *)(r10 - 8) = 0
      call bpf_map_lookup_elem
      r0 = 0
      exit`,
    reject: 'R1 type=scalar expected=map_ptr',
  },
  {
    name: 'ring buffer map given to map_lookup_elem',
    source: `
      .map events ringbuf key=0 value=0 entries=4096
      *(u64 *)(r10 - 8) = 0
      r2 = r10
      r2 += -8
      r1 = events ll
      call bpf_map_lookup_elem
      r0 = 0
      exit`,
    reject: 'invalid zero-sized read',
  },
  {
    name: 'perf event array given to map_lookup_elem',
    source: `
      .map out perf_event_array key=4 value=4 entries=4
      *(u64 *)(r10 - 8) = 0
      r2 = r10
      r2 += -8
      r1 = out ll
      call bpf_map_lookup_elem
      r0 = 0
      exit`,
    reject: 'cannot pass map_type 4 into func bpf_map_lookup_elem#1',
  },
  {
    name: 'helper reads past the stack',
    source: `
      r1 = r10
      r1 += -8
      r2 = 16
      call bpf_get_current_comm
      r0 = 0
      exit`,
    reject: 'invalid write to stack R1 off=-8 size=16',
  },
  {
    name: 'pointer arithmetic before the null check',
    source: `
      .map counts hash key=4 value=8 entries=16
      *(u32 *)(r10 - 4) = 0
      r2 = r10
      r2 += -4
      r1 = counts ll
      call bpf_map_lookup_elem
      r0 += 4
      r0 = 0
      exit`,
    reject: 'R0 pointer arithmetic on map_value_or_null prohibited, null-check it first',
  },
  {
    name: 'division by constant zero',
    source: 'r0 = 1\nr0 /= 0\nexit',
    reject: 'div by zero',
  },
  {
    name: 'stack write below the frame',
    source: '*(u64 *)(r10 - 520) = 0\nr0 = 0\nexit',
    reject: 'invalid write to stack R10 off=-520 size=8',
  },
  {
    name: 'frame pointer written',
    source: 'r10 = 0\nr0 = 0\nexit',
    reject: 'frame pointer is read only',
  },
  {
    name: 'nine nested calls',
    source: `${'call pc+2\nr0 = 0\nexit\n'.repeat(9)}r0 = 0\nexit`,
    reject: 'the call stack of 9 frames is too deep',
  },
  {
    name: 'combined stack of a call chain over 512 bytes',
    source: `
      *(u64 *)(r10 - 8) = 0
      call pc+2
      r0 = 0
      exit
      *(u64 *)(r10 - 512) = 0
      r0 = 0
      exit`,
    reject: 'combined stack size of 2 calls is 528. Too large',
    notKernel: 'Linux 6.13+ on x86-64 gives tracing programs a private stack: no combined limit',
  },
  {
    name: 'recursion',
    source: 'call pc+1\nexit\ncall pc-1\nr0 = 0\nexit',
    reject: 'the call stack of 9 frames is too deep',
  },
  {
    name: 'use of a ring buffer record after submit',
    source: `
      .map events ringbuf key=0 value=0 entries=4096
      r1 = events ll
      r2 = 8
      r3 = 0
      call bpf_ringbuf_reserve
      if r0 == 0 goto out
      r6 = r0
      r1 = r0
      r2 = 0
      call bpf_ringbuf_submit
      *(u64 *)(r6 + 0) = 1
    out:
      r0 = 0
      exit`,
    reject: "R6 invalid mem access 'scalar'",
  },
  {
    name: 'bpf_loop callback returning 2',
    source: 'r1 = 10\nld_pseudo r2, 4, 6\nr3 = 0\nr4 = 0\ncall bpf_loop\nr0 = 0\nexit\nr0 = 2\nexit',
    reject: 'At callback return the register R0 has 2 should have been in [0, 1]',
    notKernel: 'callbacks need BTF func_info, which the loader does not pass',
  },
  {
    name: 'bpf_loop callback reading past its context',
    source: `
      r1 = 10
      ld_pseudo r2, 4, 8
      r3 = r10
      r3 += -8
      *(u64 *)(r10 - 8) = 0
      r4 = 0
      call bpf_loop
      r0 = 0
      exit
      r0 = *(u64 *)(r2 + 8)
      r0 = 0
      exit`,
    reject: 'invalid read from stack R2 off=0 size=8',
    notKernel: 'callbacks need BTF func_info, which the loader does not pass',
  },
];
