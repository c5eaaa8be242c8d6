# sched-switch-count.s: counts context switches per next_pid in a hash map.
#
# A Probeyard assembly file: one whole program. Fields of the tracepoint record are read by name
# (sched_switch.next_pid), so the offset comes from the kernel's own format file at load time and
# never from a copied struct.
#
#   probeyard asm examples/sched-switch-count.s --hex
#   probeyard demo

.license "GPL"
.map counts hash key=4 value=8 entries=10240

.section tracepoint/sched/sched_switch
count_switch:
    r2 = *(u32 *)(r1 + sched_switch.next_pid)   # field operand: relocated per kernel
    *(u32 *)(r10 - 4) = r2                      # key = next_pid
    r6 = 1
    *(u64 *)(r10 - 16) = r6                     # initial value 1
    r2 = r10
    r2 += -4
    r1 = counts ll                              # the map, by name
    call bpf_map_lookup_elem
    if r0 == 0 goto insert
    lock *(u64 *)(r0 + 0) += r6                 # existing entry: count atomically
    goto out
insert:
    r2 = r10
    r2 += -4
    r3 = r10
    r3 += -16
    r1 = counts ll
    r4 = 0                                      # BPF_ANY
    call bpf_map_update_elem
out:
    r0 = 0
    exit
