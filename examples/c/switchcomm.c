// SPDX-License-Identifier: GPL-2.0
/* Counts context switches per incoming task name: sched/sched_switch, key = next_comm (char[16]). */
#include "probeyard.h"

struct comm { char s[16]; };

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct comm);
	__type(value, __u64);
} switches SEC(".maps");

SEC("tracepoint/sched/sched_switch")
int count_switches(struct trace_event_raw_sched_switch *ctx)
{
	struct comm key = {};
	bpf_probe_read_kernel(key.s, sizeof(key.s), ctx->next_comm);
	__u64 one = 1, *count = bpf_map_lookup_elem(&switches, &key);
	if (count)
		__sync_fetch_and_add(count, 1);
	else
		bpf_map_update_elem(&switches, &key, &one, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
