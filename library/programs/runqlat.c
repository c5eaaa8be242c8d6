// SPDX-License-Identifier: GPL-2.0
/* Run-queue latency: from the moment a task becomes runnable (sched_wakeup, sched_wakeup_new, or
 * switched out while still runnable) to the sched_switch that puts it on a CPU, as a log2
 * histogram in microseconds. Kernels before 5.14 report failed wakeups (`success` 0): those are
 * skipped where the field exists (bpf_core_field_exists). */
#include "library.h"

/* prev_state bits that mean the task left the CPU to sleep, stop or die: the ten low state bits
 * except 0x100, which 4.14+ kernels set for a preempted (still runnable) task; 3.x/4.x mark
 * preemption above these bits (TASK_STATE_MAX) and use 0x200 for TASK_PARKED. */
#define NOT_RUNNABLE 0x2ff

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} runnable_since_ns SEC(".maps") PROBEYARD_DISPLAY("hidden");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hist);
} runq_latency_us SEC(".maps");

static __always_inline void enqueue(__u32 pid)
{
	if (!pid)
		return;
	__u64 ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&runnable_since_ns, &pid, &ts, BPF_ANY);
}

static __always_inline int on_wakeup_record(struct trace_event_raw_sched_wakeup_template *ctx)
{
	struct trace_event_raw_sched_wakeup_template___old *old = (void *)ctx;
	if (bpf_core_field_exists(old->success) && !old->success)
		return 0;
	enqueue(ctx->pid);
	return 0;
}

SEC("tracepoint/sched/sched_wakeup")
int on_wakeup(struct trace_event_raw_sched_wakeup_template *ctx)
{
	return on_wakeup_record(ctx);
}

SEC("tracepoint/sched/sched_wakeup_new")
int on_wakeup_new(struct trace_event_raw_sched_wakeup_template *ctx)
{
	return on_wakeup_record(ctx);
}

SEC("tracepoint/sched/sched_switch")
int on_switch(struct trace_event_raw_sched_switch *ctx)
{
	if ((ctx->prev_state & NOT_RUNNABLE) == 0)
		enqueue(ctx->prev_pid);

	__u32 pid = ctx->next_pid;
	__u64 *since = bpf_map_lookup_elem(&runnable_since_ns, &pid);
	if (!since)
		return 0;
	__u64 delta_us = (bpf_ktime_get_ns() - *since) / 1000;
	bpf_map_delete_elem(&runnable_since_ns, &pid);
	__u32 zero = 0;
	hist_add(&runq_latency_us, &zero, delta_us);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
