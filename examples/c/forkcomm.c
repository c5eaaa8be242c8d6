// SPDX-License-Identifier: GPL-2.0
/* Counts forks per parent name, reading sched_process_fork's inline `char parent_comm[16]`, as
 * kernels before 6.18 lay it out. On 6.18 parent_comm became `__data_loc char[]`: Probeyard
 * refuses this program there (became-dynamic) instead of reading the locator as text. */
#include "probeyard.h"

struct comm { char s[16]; };

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct comm);
	__type(value, __u64);
} forks SEC(".maps");

SEC("tracepoint/sched/sched_process_fork")
int count_forks(struct trace_event_raw_sched_process_fork *ctx)
{
	struct comm key = {};
	bpf_probe_read_kernel(key.s, sizeof(key.s), ctx->parent_comm);
	__u64 one = 1, *count = bpf_map_lookup_elem(&forks, &key);
	if (count)
		__sync_fetch_and_add(count, 1);
	else
		bpf_map_update_elem(&forks, &key, &one, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
