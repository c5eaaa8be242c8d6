// SPDX-License-Identifier: GPL-2.0
/* Fork and exit with lifetimes: forks counted by parent command name; at each sched_process_exit
 * of a task whose fork was seen, its lifetime (fork to exit) as a log2 histogram in milliseconds
 * and one event (pid, parent pid, command name, lifetime). sched_process_fork's comms became
 * `__data_loc char[]` in 6.18 (inline `char parent_comm[16]` before): the program reads
 * whichever this kernel has (bpf_core_field_exists on both layouts). */
#include "library.h"

struct task_start {
	__u64 forked_ns;
	__u32 ppid;
	__u32 pad;
};

struct exit_event {
	__u32 pid;
	__u32 ppid;
	char comm[TASK_COMM_LEN];
	__u64 lifetime_ns;
};

/* names struct exit_event in the object's BTF (a pointer in .bss, never used), so that readers of
 * exit_events find the type of its records: `<name>_events` carries `struct <name>_event` */
struct exit_event *exit_events_type __attribute__((unused));

struct comm_key {
	char comm[TASK_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct task_start);
} task_starts SEC(".maps") PROBEYARD_DISPLAY("hidden");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct comm_key);
	__type(value, __u64);
} forks_by_parent SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hist);
} task_lifetime_ms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} exit_events SEC(".maps");

SEC("tracepoint/sched/sched_process_fork")
int on_fork(struct trace_event_raw_sched_process_fork *ctx)
{
	struct trace_event_raw_sched_process_fork___old *old = (void *)ctx;
	struct comm_key parent = {};
	__u32 child = ctx->child_pid, ppid = ctx->parent_pid;
	if (bpf_core_field_exists(ctx->__data_loc_parent_comm))
		read_data_loc_str(parent.comm, sizeof(parent.comm), ctx, ctx->__data_loc_parent_comm);
	else if (bpf_core_field_exists(old->parent_comm))
		bpf_probe_read_kernel(parent.comm, sizeof(parent.comm), old->parent_comm);
	count_one(&forks_by_parent, &parent);

	struct task_start start = { .forked_ns = bpf_ktime_get_ns(), .ppid = ppid };
	bpf_map_update_elem(&task_starts, &child, &start, BPF_ANY);
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int on_exit(struct trace_event_raw_sched_process_exit *ctx)
{
	__u32 pid = ctx->pid;
	struct task_start *start = bpf_map_lookup_elem(&task_starts, &pid);
	if (!start)
		return 0;
	struct exit_event e = {};
	e.pid = pid;
	e.ppid = start->ppid;
	e.lifetime_ns = bpf_ktime_get_ns() - start->forked_ns;
	bpf_map_delete_elem(&task_starts, &pid);
	bpf_probe_read_kernel(e.comm, sizeof(e.comm), ctx->comm);
	bpf_ringbuf_output(&exit_events, &e, sizeof(e), 0);
	__u32 zero = 0;
	hist_add(&task_lifetime_ms, &zero, e.lifetime_ns / 1000000);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
