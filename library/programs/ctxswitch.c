// SPDX-License-Identifier: GPL-2.0
/* Context switches by process: each sched_switch counted for the task that leaves the CPU (its
 * pid (tgid) and command name), and separately the involuntary ones, where it was still runnable
 * (preempted). The prev_state test is the one runqlat.c explains. */
#include "library.h"

#define NOT_RUNNABLE 0x2ff

struct proc_key {
	__u32 pid;
	char comm[TASK_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct proc_key);
	__type(value, __u64);
} switches_by_process SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct proc_key);
	__type(value, __u64);
} preemptions_by_process SEC(".maps");

SEC("tracepoint/sched/sched_switch")
int on_switch(struct trace_event_raw_sched_switch *ctx)
{
	struct proc_key key = {};
	/* the task switched out is still `current` when the event fires */
	key.pid = bpf_get_current_pid_tgid() >> 32;
	bpf_probe_read_kernel(key.comm, sizeof(key.comm), ctx->prev_comm);
	count_one(&switches_by_process, &key);
	if ((ctx->prev_state & NOT_RUNNABLE) == 0)
		count_one(&preemptions_by_process, &key);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
