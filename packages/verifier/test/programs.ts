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
  /** Loaded as BPF_PROG_TYPE_XDP (`struct xdp_md` context, packet pointers) instead of a tracepoint. */
  xdp?: boolean;
  /** Loaded as BPF_PROG_TYPE_SOCKET_FILTER, for `BPF_LD_[ABS|IND]` (the context itself is not read). */
  socketFilter?: boolean;
  /** Our verdict only: the kernel is not comparable (option the kernel does not have). */
  notKernel?: string;
  options?: { privileged?: boolean; insnLimit?: number; allowUninitStack?: boolean };
}

export const ACCEPTED: ProgramCase[] = [
  {
    // tp_prog_is_valid_access compares `off < sizeof(void *)` unsigned: a negative offset passes
    name: 'ctx read at a negative offset (Linux 6.18 accepts it; VerifyResult.warnings says the VM faults it)',
    source: 'r0 = *(u32 *)(r1 - 16)\nr0 = *(u8 *)(r1 - 1)\nr0 = 0\nexit',
  },
  // pointer comparisons that Linux 6.18 decides (is_branch_taken: reg_not_null pointer vs 0)
  {
    // every branch towards \`bad\` (r1 is not initialized after a call) is decided not taken
    name: 'pointer comparison: a checked map value is never 0 (immediate and register 0, either side)',
    source: `
      .map m hash key=4 value=8 entries=4
      *(u32 *)(r10 - 4) = 0
      r2 = r10
      r2 += -4
      r1 = m ll
      call bpf_map_lookup_elem
      if r0 == 0 goto out
      r3 = 0
      if r0 == r3 goto bad
      if r3 == r0 goto bad
      if r0 != 0 goto out
    bad:
      r0 = *(u64 *)(r1 + 0)
    out:
      r0 = 0
      exit`,
  },
  {
    name: 'pointer comparison: a map pointer and ring-buffer memory are never 0',
    source: `
      .map rb ringbuf key=0 value=0 entries=4096
      r1 = rb ll
      if r1 == 0 goto bad
      r2 = 8
      r3 = 0
      call bpf_ringbuf_reserve
      if r0 == 0 goto out
      r6 = r0
      if r6 == 0 goto bad
      r1 = r6
      r2 = 0
      call bpf_ringbuf_submit
    out:
      r0 = 0
      exit
    bad:
      r0 = *(u64 *)(r9 + 0)
      exit`,
  },
  {
    name: 'pointer comparison: map values compared with each other or with a non-zero constant go both ways',
    source: `
      .map m array key=4 value=8 entries=4
      *(u32 *)(r10 - 4) = 0
      r2 = r10
      r2 += -4
      r1 = m ll
      call bpf_map_lookup_elem
      if r0 == 0 goto +5
      r6 = r0
      r6 += 4
      if r6 > r0 goto +2
      if r0 == 5 goto +1
      r0 = 0
      exit`,
  },
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
  },
  {
    // found by fuzz:kernel: Linux explores a callback only while its depth is below nr_loops
    name: 'bpf_loop with nr_loops 0 never runs its callback (which writes past the stack)',
    source: `
      r1 = 0
      ld_pseudo r2, 4, 8
      r3 = r10
      r3 += 32
      *(u64 *)(r10 - 8) = 0
      r4 = 0
      call bpf_loop
      r0 = 0
      exit
      *(u64 *)(r2 + 0) = r1
      r0 = 0
      exit`,
  },
  {
    // Linux explores a callback while its depth is below nr_loops' maximum: a counter in the
    // caller's stack never passes 1 in one iteration (\`bad\`, r9 not initialized, is never reached)
    name: 'bpf_loop with nr_loops 1: the callback is explored once',
    source: `
      *(u64 *)(r10 - 8) = 0
      r1 = 1
      ld_pseudo r2, 4, 7
      r3 = r10
      r3 += -8
      r4 = 0
      call bpf_loop
      r0 = 0
      exit
      r3 = *(u64 *)(r2 + 0)
      r3 += 1
      *(u64 *)(r2 + 0) = r3
      if r3 > 1 goto +2
      r0 = 0
      exit
      r0 = *(u64 *)(r9 + 0)
      exit`,
  },
  {
    name: 'bpf_loop with nr_loops 5: a counter checked against 5 in the callback',
    source: `
      *(u64 *)(r10 - 8) = 0
      r1 = 5
      ld_pseudo r2, 4, 7
      r3 = r10
      r3 += -8
      r4 = 0
      call bpf_loop
      r0 = 0
      exit
      r3 = *(u64 *)(r2 + 0)
      r3 += 1
      *(u64 *)(r2 + 0) = r3
      if r3 > 5 goto +2
      r0 = 0
      exit
      r0 = *(u64 *)(r9 + 0)
      exit`,
  },
  {
    name: 'bpf_loop with nr_loops at most 7: a counter checked against 8 in the callback',
    source: `
      call bpf_get_prandom_u32
      r1 = r0
      r1 &= 7
      *(u64 *)(r10 - 8) = 0
      ld_pseudo r2, 4, 7
      r3 = r10
      r3 += -8
      r4 = 0
      call bpf_loop
      r0 = 0
      exit
      r3 = *(u64 *)(r2 + 0)
      r3 += 1
      *(u64 *)(r2 + 0) = r3
      if r3 > 8 goto +2
      r0 = 0
      exit
      r0 = *(u64 *)(r9 + 0)
      exit`,
  },
  {
    // Linux spills a narrow constant stored at a slot's start (bpf_capable) and takes it as a
    // constant map key: the array lookup cannot fail, so the value pointer needs no null check
    name: 'array lookup with a narrow constant key (immediate and register) needs no null check',
    source: `
      .map a array key=4 value=8 entries=4
      *(u32 *)(r10 - 8) = 2
      r2 = r10
      r2 += -8
      r1 = a ll
      call bpf_map_lookup_elem
      r6 = *(u64 *)(r0 + 0)
      r7 = 3
      *(u32 *)(r10 - 16) = r7
      r2 = r10
      r2 += -16
      r1 = a ll
      call bpf_map_lookup_elem
      r6 = *(u64 *)(r0 + 0)
      r0 = 0
      exit`,
  },
  {
    name: 'uninitialized stack read (allowed for root)',
    source: `
      r0 = *(u64 *)(r10 - 8)
      r0 = 0
      exit`,
  },
  {
    name: 'bpf_get_stack into the stack (tracepoint flavour, ctx first)',
    source: `
      r2 = r10
      r2 += -64
      r3 = 64
      r4 = 0
      call bpf_get_stack
      r0 = *(u64 *)(r10 - 64)
      r0 = 0
      exit`,
  },
  {
    name: 'task, cgroup and namespace helpers',
    source: `
      r6 = r1
      call bpf_get_current_task
      call bpf_get_current_cgroup_id
      r1 = 0
      r2 = 0
      r3 = r10
      r3 += -8
      r4 = 8
      call bpf_get_ns_current_pid_tgid
      r1 = r6
      call bpf_get_attach_cookie
      r1 = 10
      call bpf_send_signal
      r1 = 10
      call bpf_send_signal_thread
      r0 = 0
      exit`,
  },
  {
    name: 'perf counters read from a perf event array',
    source: `
      .map counters perf_event_array key=4 value=4 entries=4
      r1 = counters ll
      r2 = 0
      call bpf_perf_event_read
      r1 = counters ll
      r2 = 0
      r3 = r10
      r3 += -24
      r4 = 24
      call bpf_perf_event_read_value
      r0 = 0
      exit`,
  },
  {
    name: 'bpf_loop callback counting in the caller stack',
    // precision: the counter decides nothing, so it is widened and the callback entries meet
    // (Linux 6.18: 25 instructions processed; without widening the 1M limit after a minute)
    source: `
      *(u64 *)(r10 - 8) = 0
      r1 = 100
      ld_pseudo r2, 4, 8
      r3 = r10
      r3 += -8
      r4 = 0
      call bpf_loop
      r0 = *(u64 *)(r10 - 8)
      r0 = 0
      exit
      r3 = *(u64 *)(r2 + 0)
      r3 += 1
      *(u64 *)(r2 + 0) = r3
      r0 = 0
      exit`,
  },
  {
    name: 'bounded loop counting in the stack',
    source: `
      r6 = 0
      *(u64 *)(r10 - 8) = 0
    loop:
      r1 = *(u64 *)(r10 - 8)
      r1 += 1
      *(u64 *)(r10 - 8) = r1
      r6 += 1
      if r6 < 100 goto loop
      r0 = 0
      exit`,
  },
  {
    name: 'fourteen branches whose only effect is a flag stored in the stack',
    // precision: the flags decide nothing, so the two sides of each branch meet (2^14 paths otherwise)
    source: `
      call bpf_get_prandom_u32
      r6 = 1
      if r0 > 5 goto +1
      r6 = 2
      *(u64 *)(r10 - 8) = r6
      call bpf_get_prandom_u32
      r6 = 1
      if r0 > 5 goto +1
      r6 = 2
      *(u64 *)(r10 - 16) = r6
      call bpf_get_prandom_u32
      r6 = 1
      if r0 > 5 goto +1
      r6 = 2
      *(u64 *)(r10 - 24) = r6
      call bpf_get_prandom_u32
      r6 = 1
      if r0 > 5 goto +1
      r6 = 2
      *(u64 *)(r10 - 32) = r6
      call bpf_get_prandom_u32
      r6 = 1
      if r0 > 5 goto +1
      r6 = 2
      *(u64 *)(r10 - 40) = r6
      call bpf_get_prandom_u32
      r6 = 1
      if r0 > 5 goto +1
      r6 = 2
      *(u64 *)(r10 - 48) = r6
      call bpf_get_prandom_u32
      r6 = 1
      if r0 > 5 goto +1
      r6 = 2
      *(u64 *)(r10 - 56) = r6
      call bpf_get_prandom_u32
      r6 = 1
      if r0 > 5 goto +1
      r6 = 2
      *(u64 *)(r10 - 64) = r6
      call bpf_get_prandom_u32
      r6 = 1
      if r0 > 5 goto +1
      r6 = 2
      *(u64 *)(r10 - 72) = r6
      call bpf_get_prandom_u32
      r6 = 1
      if r0 > 5 goto +1
      r6 = 2
      *(u64 *)(r10 - 80) = r6
      call bpf_get_prandom_u32
      r6 = 1
      if r0 > 5 goto +1
      r6 = 2
      *(u64 *)(r10 - 88) = r6
      call bpf_get_prandom_u32
      r6 = 1
      if r0 > 5 goto +1
      r6 = 2
      *(u64 *)(r10 - 96) = r6
      call bpf_get_prandom_u32
      r6 = 1
      if r0 > 5 goto +1
      r6 = 2
      *(u64 *)(r10 - 104) = r6
      call bpf_get_prandom_u32
      r6 = 1
      if r0 > 5 goto +1
      r6 = 2
      *(u64 *)(r10 - 112) = r6
      r0 = 0
      exit`,
  },
];

// XDP programs: packet pointers (PTR_TO_PACKET, _END, _META) and the ranges comparisons prove.
const PKT = `
      r2 = *(u32 *)(r1 + 0)
      r3 = *(u32 *)(r1 + 4)`;

export const PACKET_ACCEPTED: ProgramCase[] = [
  {
    name: 'xdp: pkt + 14 > pkt_end checked, header read',
    xdp: true,
    source: `${PKT}
      r5 = *(u32 *)(r1 + 12)
      r5 = *(u32 *)(r1 + 16)
      r4 = r2
      r4 += 14
      if r4 > r3 goto out
      r0 = *(u8 *)(r2 + 13)
      r0 = *(u16 *)(r2 + 12)
    out:
      r0 = 2
      exit`,
  },
  {
    name: 'xdp: pkt_end < pkt + 14 checked (operands swapped)',
    xdp: true,
    source: `${PKT}
      r4 = r2
      r4 += 14
      if r3 < r4 goto out
      r0 = *(u32 *)(r2 + 10)
    out:
      r0 = 2
      exit`,
  },
  {
    name: 'xdp: pkt + 8 <= pkt_end, read on the taken edge through a copy',
    xdp: true,
    source: `${PKT}
      r4 = r2
      r4 += 8
      if r4 <= r3 goto ok
      r0 = 1
      exit
    ok:
      r0 = *(u64 *)(r4 - 8)
      r0 = 2
      exit`,
  },
  {
    name: 'xdp: variable offset checked again before the read',
    xdp: true,
    source: `${PKT}
      r4 = r2
      r4 += 1
      if r4 > r3 goto out
      r5 = *(u8 *)(r2 + 0)
      r5 &= 15
      r2 += r5
      r6 = r2
      r6 += 4
      if r6 > r3 goto out
      r0 = *(u32 *)(r2 + 0)
    out:
      r0 = 2
      exit`,
  },
  {
    name: 'xdp: packet bytes as a map key',
    xdp: true,
    source: `
      .map seen hash key=4 value=8 entries=64
      ${PKT}
      r4 = r2
      r4 += 4
      if r4 > r3 goto out
      r1 = seen ll
      call bpf_map_lookup_elem
    out:
      r0 = 2
      exit`,
  },
  {
    name: 'xdp: data_meta checked against data',
    xdp: true,
    source: `
      r2 = *(u32 *)(r1 + 8)
      r3 = *(u32 *)(r1 + 0)
      r4 = r2
      r4 += 4
      if r4 > r3 goto out
      r0 = *(u32 *)(r2 + 0)
    out:
      r0 = 2
      exit`,
  },
];

PACKET_ACCEPTED.push(
  {
    name: 'xdp: pkt + 14 < pkt_end proves 15 bytes',
    xdp: true,
    source: `${PKT}
      r4 = r2
      r4 += 14
      if r4 < r3 goto ok
      r0 = 2
      exit
    ok:
      r0 = *(u8 *)(r2 + 14)
      r0 = 2
      exit`,
  },
  {
    name: 'xdp: pkt_end <= pkt + 14 not taken proves 15 bytes',
    xdp: true,
    source: `${PKT}
      r4 = r2
      r4 += 14
      if r3 <= r4 goto out
      r0 = *(u8 *)(r2 + 14)
    out:
      r0 = 2
      exit`,
  },
  {
    name: 'xdp: a checked packet pointer spilled and filled',
    xdp: true,
    source: `${PKT}
      r4 = r2
      r4 += 14
      if r4 > r3 goto out
      *(u64 *)(r10 - 8) = r2
      r5 = *(u64 *)(r10 - 8)
      r0 = *(u8 *)(r5 + 13)
    out:
      r0 = 2
      exit`,
  },
);

PACKET_ACCEPTED.push(
  {
    name: 'socket filter: legacy skb loads through r6',
    socketFilter: true,
    source: `
      r6 = r1
      r0 = *(u8 *)skb[23]
      r7 = r0
      r0 = *(u16 *)skb[12]
      r0 = *(u32 *)skb[r7 + 14]
      r0 = 0
      exit`,
  },
);

export const PACKET_REJECTED: ProgramCase[] = [
  {
    // the checked path reaches the join first; the unchecked one must not be pruned by it
    name: 'xdp: a join reached with and without the bounds check',
    xdp: true,
    source: `
      r6 = *(u32 *)(r1 + 0)
      r7 = *(u32 *)(r1 + 4)
      call bpf_get_prandom_u32
      if r0 == 0 goto join
      r4 = r6
      r4 += 14
      if r4 > r7 goto out
    join:
      r0 = *(u8 *)(r6 + 13)
    out:
      r0 = 2
      exit`,
    reject: 'R6 offset is outside of the packet',
  },
  {
    name: 'socket filter: legacy skb load without the skb in r6',
    socketFilter: true,
    source: `
      r6 = 0
      r0 = *(u8 *)skb[23]
      r0 = 0
      exit`,
    reject: 'at the time of BPF_LD_ABS|IND R6 != pointer to skb',
  },
  {
    name: 'socket filter: a legacy skb load clobbers r1-r5',
    socketFilter: true,
    source: `
      r6 = r1
      r2 = 1
      r0 = *(u8 *)skb[23]
      r0 = r2
      exit`,
    reject: 'R2 !read_ok',
  },
  {
    name: 'tracepoint: legacy skb loads are not allowed',
    source: `
      r6 = r1
      r0 = *(u8 *)skb[23]
      r0 = 0
      exit`,
    reject: 'BPF_LD_[ABS|IND] instructions not allowed for this program type',
  },
  {
    name: 'xdp: pkt < pkt_end proves nothing',
    xdp: true,
    source: `${PKT}
      if r2 < r3 goto ok
      r0 = 2
      exit
    ok:
      r0 = *(u8 *)(r2 + 0)
      r0 = 2
      exit`,
    reject: 'R2 offset is outside of the packet',
  },
  {
    name: 'xdp: a 32-bit comparison proves nothing',
    xdp: true,
    source: `${PKT}
      r4 = r2
      r4 += 14
      if w4 > w3 goto out
      r0 = *(u8 *)(r2 + 13)
    out:
      r0 = 2
      exit`,
    reject: 'R2 offset is outside of the packet',
  },
  {
    name: 'xdp: packet read without a bounds check',
    xdp: true,
    source: `${PKT}
      r0 = *(u8 *)(r2 + 0)
      r0 = 2
      exit`,
    reject: 'R2 offset is outside of the packet',
  },
  {
    name: 'xdp: read past the checked range',
    xdp: true,
    source: `${PKT}
      r4 = r2
      r4 += 14
      if r4 > r3 goto out
      r0 = *(u32 *)(r2 + 12)
    out:
      r0 = 2
      exit`,
    reject: 'R2 offset is outside of the packet',
  },
  {
    name: 'xdp: read on the edge where the packet is too short',
    xdp: true,
    source: `${PKT}
      r4 = r2
      r4 += 14
      if r4 > r3 goto short
      r0 = 2
      exit
    short:
      r0 = *(u8 *)(r2 + 0)
      r0 = 2
      exit`,
    reject: 'R2 offset is outside of the packet',
  },
  {
    name: 'xdp: adding a variable drops the checked range',
    xdp: true,
    source: `${PKT}
      r4 = r2
      r4 += 14
      if r4 > r3 goto out
      r5 = *(u8 *)(r2 + 0)
      r5 &= 7
      r2 += r5
      r0 = *(u8 *)(r2 + 0)
    out:
      r0 = 2
      exit`,
    reject: 'R2 offset is outside of the packet',
  },
  {
    name: 'xdp: arithmetic on pkt_end',
    xdp: true,
    source: `${PKT}
      r3 += 1
      r0 = 2
      exit`,
    reject: 'R3 pointer arithmetic on pkt_end prohibited',
  },
  {
    name: 'xdp: reading through pkt_end',
    xdp: true,
    source: `${PKT}
      r0 = *(u8 *)(r3 - 1)
      r0 = 2
      exit`,
    reject: "R3 invalid mem access 'pkt_end'",
  },
  {
    name: 'xdp: the context is read-only',
    xdp: true,
    source: `
      r2 = 0
      *(u32 *)(r1 + 0) = r2
      r0 = 2
      exit`,
    reject: 'invalid bpf_context access off=0 size=4',
  },
  {
    name: 'xdp: egress_ifindex is for devmap programs only',
    xdp: true,
    source: `
      r2 = *(u32 *)(r1 + 20)
      r0 = 2
      exit`,
    reject: 'invalid bpf_context access off=20 size=4',
  },
  {
    name: 'xdp: a packet pointer field read as 8 bytes',
    xdp: true,
    source: `
      r2 = *(u64 *)(r1 + 0)
      r0 = 2
      exit`,
    reject: 'invalid bpf_context access off=0 size=8',
  },
  {
    name: 'xdp: atomic add into the packet',
    xdp: true,
    source: `${PKT}
      r4 = r2
      r4 += 8
      if r4 > r3 goto out
      r5 = 1
      lock *(u64 *)(r2 + 0) += r5
    out:
      r0 = 2
      exit`,
    reject: 'BPF_ATOMIC stores into R2 pkt is not allowed',
  },
];

export const REJECTED: ProgramCase[] = [
  {
    name: 'array lookup with a narrow constant key not at a slot start: maybe null',
    source: `
      .map a array key=4 value=8 entries=4
      *(u32 *)(r10 - 4) = 2
      r2 = r10
      r2 += -4
      r1 = a ll
      call bpf_map_lookup_elem
      r6 = *(u64 *)(r0 + 0)
      r0 = 0
      exit`,
    reject: "R0 invalid mem access 'map_value_or_null'",
  },
  {
    name: 'array lookup with a narrow constant key past max_entries: maybe null',
    source: `
      .map a array key=4 value=8 entries=4
      *(u32 *)(r10 - 8) = 4
      r2 = r10
      r2 += -8
      r1 = a ll
      call bpf_map_lookup_elem
      r6 = *(u64 *)(r0 + 0)
      r0 = 0
      exit`,
    reject: "R0 invalid mem access 'map_value_or_null'",
  },
  {
    name: 'bpf_loop with nr_loops 2: the second iteration reaches an uninitialized register',
    source: `
      *(u64 *)(r10 - 8) = 0
      r1 = 2
      ld_pseudo r2, 4, 7
      r3 = r10
      r3 += -8
      r4 = 0
      call bpf_loop
      r0 = 0
      exit
      r3 = *(u64 *)(r2 + 0)
      r3 += 1
      *(u64 *)(r2 + 0) = r3
      if r3 > 1 goto +2
      r0 = 0
      exit
      r0 = *(u64 *)(r9 + 0)
      exit`,
    reject: 'R9 !read_ok',
  },
  {
    // found by the VM property: Linux takes NULL only for arguments marked PTR_MAYBE_NULL, which
    // probe_read's destination is not, whatever the size
    name: 'probe_read into NULL with size 0',
    source: 'r1 = 0\nr2 = 0\nr3 = r10\nr3 += -8\ncall bpf_probe_read\nr0 = 0\nexit',
    reject: 'R1 type=scalar expected=fp, map_value, ringbuf_mem',
    kernelMessage: 'R1 type=scalar expected=fp, pkt, pkt_meta, map_key, map_value, mem, ringbuf_mem, buf, trusted_ptr_',
  },
  {
    name: 'ctx read at a negative offset that is not a multiple of the size',
    source: 'r0 = *(u32 *)(r1 - 3)\nr0 = 0\nexit',
    reject: 'invalid bpf_context access off=-3 size=4',
  },
  // pointer comparisons that Linux 6.18 explores both ways: ctx, stack and other pointers are not
  // known non-null (reg_not_null), so `== 0` is a branch like any other
  {
    name: 'pointer comparison: a subprogram that exits without r0 when its ctx argument is 0',
    source: `
      call pc+1
      exit
      if r1 == 0 goto +2
      r0 = 1
      exit
      exit`,
    reject: 'R0 !read_ok',
  },
  {
    name: 'pointer comparison: ctx == 0 in the main program goes both ways',
    source: 'if r1 == 0 goto +2\nr0 = 0\nexit\nexit',
    reject: 'R0 !read_ok',
  },
  {
    name: 'pointer comparison: ctx != 0 (32-bit) goes both ways',
    source: 'if w1 != 0 goto +1\nexit\nr0 = 0\nexit',
    reject: 'R0 !read_ok',
  },
  {
    name: 'pointer comparison: a stack pointer == 0 goes both ways',
    source: 'r2 = r10\nif r2 == 0 goto +2\nr0 = 0\nexit\nexit',
    reject: 'R0 !read_ok',
  },
  {
    name: 'pointer comparison: a ctx pointer with an offset != 0 goes both ways',
    source: 'r2 = r1\nr2 += 8\nif r2 != 0 goto +1\nexit\nr0 = 0\nexit',
    reject: 'R0 !read_ok',
  },
  {
    name: 'pointer comparison: a maybe-null pointer compared with a register holding 0 stays maybe-null',
    source: `
      .map m hash key=4 value=8 entries=4
      *(u32 *)(r10 - 4) = 0
      r2 = r10
      r2 += -4
      r1 = m ll
      call bpf_map_lookup_elem
      r3 = 0
      if r3 != r0 goto +2
      r0 = 0
      exit
      r1 = *(u64 *)(r0 + 0)
      r0 = 0
      exit`,
    reject: "R0 invalid mem access 'map_value_or_null'",
  },
  {
    name: 'pointer comparison: a checked map value compared with 0 in 32 bits goes both ways',
    source: `
      .map m hash key=4 value=8 entries=4
      *(u32 *)(r10 - 4) = 0
      r2 = r10
      r2 += -4
      r1 = m ll
      call bpf_map_lookup_elem
      if r0 == 0 goto out
      if w0 == 0 goto bad
      r0 = 0
      exit
    bad:
      r0 = *(u64 *)(r1 + 0)
    out:
      r0 = 0
      exit`,
    reject: 'R1 !read_ok',
  },
  {
    name: 'pointer comparison: a 32-bit null check proves nothing',
    source: `
      .map m hash key=4 value=8 entries=4
      *(u32 *)(r10 - 4) = 0
      r2 = r10
      r2 += -4
      r1 = m ll
      call bpf_map_lookup_elem
      if w0 == 0 goto +1
      r1 = *(u64 *)(r0 + 0)
      r0 = 0
      exit`,
    reject: "R0 invalid mem access 'map_value_or_null'",
  },
  {
    name: "a subprogram returning a pointer into its caller's stack",
    source: `
      r1 = r10
      r1 += -8
      call pc+3
      r0 = *(u64 *)(r0 + 0)
      r0 = 0
      exit
      r0 = r1
      exit`,
    reject: 'cannot return stack pointer to the caller',
  },
  {
    name: 'a subprogram returning a pointer into its own stack',
    source: `
      call pc+3
      r0 = *(u64 *)(r0 + 0)
      r0 = 0
      exit
      *(u64 *)(r10 - 8) = 0
      r0 = r10
      r0 += -8
      exit`,
    reject: 'cannot return stack pointer to the caller',
  },
  {
    name: 'misaligned stack write',
    source: `
      r1 = 1
      *(u64 *)(r10 - 8) = r1
      *(u32 *)(r10 - 6) = r1
      r0 = 0
      exit`,
    reject: 'misaligned stack access off 0+0+-6 size 4',
  },
  {
    name: 'misaligned atomic add on the stack',
    source: `
      r1 = 1
      *(u64 *)(r10 - 8) = r1
      lock *(u64 *)(r10 - 12) += r1
      r0 = 0
      exit`,
    reject: 'misaligned stack access off 0+0+-12 size 8',
  },
  {
    name: 'constant shift out of range',
    source: `
      r1 = 1
      r1 <<= 80
      r0 = 0
      exit`,
    reject: 'invalid shift 80',
  },
  {
    // refused by this kernel (lockdown) and outside the runtime's helpers: not in our prototypes
    name: 'probe_write_user is not available',
    source: `
      *(u64 *)(r10 - 8) = 0
      r1 = 0
      r2 = r10
      r2 += -8
      r3 = 8
      call bpf_probe_write_user
      r0 = 0
      exit`,
    reject: 'invalid func unknown#36',
    kernelMessage: 'program of this type cannot use helper bpf_probe_write_user#36',
  },
  {
    name: 'bpf_get_stack into the context',
    source: `
      r2 = r1
      r3 = 64
      r4 = 0
      call bpf_get_stack
      r0 = 0
      exit`,
    reject: 'R2 type=ctx expected=fp, map_value, ringbuf_mem',
    kernelMessage: 'R2 type=ctx expected=fp, pkt, pkt_meta, map_key, map_value, mem, ringbuf_mem, buf, trusted_ptr_',
  },
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
    reject: 'At callback return the register R0 has smin=2 smax=2 should have been in [0, 1]',
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
  },
  {
    name: 'bpf_loop callback returning an unknown value',
    source: 'r1 = 10\nld_pseudo r2, 4, 6\nr3 = 0\nr4 = 0\ncall bpf_loop\nr0 = 0\nexit\ncall bpf_get_prandom_u32\nexit',
    reject: 'At callback return the register R0 has unknown scalar value should have been in [0, 1]',
  },
  {
    name: 'bpf_loop callback dereferencing a null context',
    source: `
      r1 = 10
      ld_pseudo r2, 4, 6
      r3 = 0
      r4 = 0
      call bpf_loop
      r0 = 0
      exit
      r0 = *(u64 *)(r2 + 0)
      r0 = 0
      exit`,
    reject: "R2 invalid mem access 'scalar'",
  },
  {
    name: 'bpf_loop callback: the caller reads what the loop may not have written',
    options: { allowUninitStack: false },
    notKernel: 'root may read uninitialized stack; the option is ours',
    source: `
      r1 = 10
      ld_pseudo r2, 4, 9
      r3 = r10
      r3 += -8
      *(u64 *)(r10 - 8) = 0
      r4 = 0
      call bpf_loop
      r0 = *(u64 *)(r10 - 16)
      r0 = 0
      exit
      r0 = 0
      exit`,
    reject: 'invalid read from stack off -16+0 size 8',
  },
  {
    name: 'a flag stored in the stack and used later as a map value offset stays precise',
    source: `
      .map counts hash key=4 value=16 entries=16
      call bpf_get_prandom_u32
      r6 = 16
      if r0 > 5 goto +1
      r6 = 0
      *(u64 *)(r10 - 16) = r6
      call bpf_get_prandom_u32
      r7 = 0
      if r0 > 5 goto +1
      r7 = 1
      *(u64 *)(r10 - 24) = r7
      *(u32 *)(r10 - 4) = 0
      r2 = r10
      r2 += -4
      r1 = counts ll
      call bpf_map_lookup_elem
      if r0 == 0 goto out
      r1 = *(u64 *)(r10 - 16)
      r0 += r1
      r0 = *(u8 *)(r0 + 0)
    out:
      r0 = 0
      exit`,
    reject: 'invalid access to map value, value_size=16 off=16 size=1',
  },
];
