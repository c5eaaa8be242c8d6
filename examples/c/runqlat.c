// SPDX-License-Identifier: GPL-2.0
/* Run-queue latency: time from sched_wakeup of a task to sched_switch onto a CPU, as a log2
 * histogram in microseconds. Adapts to kernels before 5.14, whose sched_wakeup still had
 * `success` (a failed wakeup is skipped there), through bpf_core_field_exists. */
#include "probeyard.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} runq_usecs SEC(".maps");

SEC("tracepoint/sched/sched_wakeup")
int on_wakeup(struct trace_event_raw_sched_wakeup *ctx)
{
	struct trace_event_raw_sched_wakeup___old *old = (void *)ctx;
	if (bpf_core_field_exists(old->success) && !old->success)
		return 0;
	__u32 pid = ctx->pid;
	__u64 ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&start, &pid, &ts, BPF_ANY);
	return 0;
}

SEC("tracepoint/sched/sched_switch")
int on_switch(struct trace_event_raw_sched_switch *ctx)
{
	__u32 pid = ctx->next_pid;
	__u64 *tsp = bpf_map_lookup_elem(&start, &pid);
	if (!tsp)
		return 0;
	__u64 delta = (bpf_ktime_get_ns() - *tsp) / 1000;
	bpf_map_delete_elem(&start, &pid);
	__u32 slot = log2l(delta);
	if (slot >= 64)
		slot = 63;
	__u64 *count = bpf_map_lookup_elem(&runq_usecs, &slot);
	if (count)
		__sync_fetch_and_add(count, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
