; exec-events.s: one event per exec into a ring buffer, written in the bpf_conformance syntax,
; with a subprogram and a second program in the same file.

.license "Dual MIT/GPL"
.map events ringbuf entries=262144
.map exec_count array key=4 value=8 entries=1

.section tracepoint/sched/sched_process_exec
on_exec:
    mov %r6, %r1                                ; keep ctx
    lddw %r1, events
    mov %r2, 16
    mov %r3, 0
    call ringbuf_reserve
    jeq %r0, 0, done
    mov %r7, %r0
    ldxw %r1, [%r6 + sched_process_exec.pid]
    stxw [%r7], %r1
    ldxw %r1, [%r6 + sched_process_exec.old_pid]
    stxw [%r7+4], %r1
    call ktime_get_ns
    stxdw [%r7+8], %r0
    mov %r1, %r7
    mov %r2, 0
    call ringbuf_submit
    call local bump
done:
    mov %r0, 0
    exit
bump:                                           ; subprogram: exec_count[0] += 1
    stw [%r10-4], 0
    lddw %r1, exec_count
    mov %r2, %r10
    add %r2, -4
    call map_lookup_elem
    jeq %r0, 0, +2
    mov %r1, 1
    lock add [%r0], %r1
    mov %r0, 0
    exit

.section tracepoint/sched/sched_process_exit
on_exit:
    ldxw %r2, [%r1 + sched_process_exit.pid]
    mov %r0, 0
    exit
