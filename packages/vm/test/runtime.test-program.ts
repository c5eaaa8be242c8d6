/**
 * A counting program: `maps` declared, `loadKey` leaves the key in r2, one u64 per key in the
 * `counts` hash map (`lock xadd` when present, an insert on a miss, then `onNew`).
 */
function countingProgram(maps: string, loadKey: string, onNew = ''): string {
  return `
${maps}
${loadKey}
  *(u32 *)(r10 - 4) = r2
  r1 = counts ll
  r2 = r10
  r2 += -4
  call bpf_map_lookup_elem
  if r0 == 0 goto new
  r1 = 1
  lock *(u64 *)(r0 + 0) += r1
  r0 = 0
  exit
new:
  *(u64 *)(r10 - 16) = 1
  r1 = counts ll
  r2 = r10
  r2 += -4
  r3 = r10
  r3 += -16
  r4 = 0
  call bpf_map_update_elem
${onNew}  r0 = 0
  exit
`;
}

// A tracing program that counts events per common_type into a hash map, run by the per-event
// runtime over real trace_pipe_raw pages; the counts must match an independent decoder's.
export const countByTypeSource = countingProgram(
  '.map counts hash key=4 value=8 entries=1024\n.map events ringbuf key=0 value=0 entries=4096',
  '  r6 = r1\n  r2 = *(u16 *)(r6 + 0)',
  '  r1 = events ll\n  r2 = r6\n  r3 = 8\n  r4 = 0\n  call bpf_ringbuf_output\n',
);

/**
 * Syscall counting (the interpreter issue's workload (c)): one u64 per syscall number, read from
 * the `id` field of raw_syscalls/sys_enter (a long at offset 8 of its format; the tests and the
 * bench check that offset against the format they run with). The kernel runs these bytes too.
 */
export const syscountSource = countingProgram('.map counts hash key=4 value=8 entries=1024', '  r2 = *(u64 *)(r1 + 8)');
