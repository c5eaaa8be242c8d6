// SPDX-License-Identifier: GPL-2.0
/* Counts system calls by number: raw_syscalls/sys_enter, key = the syscall id. */
#include "probeyard.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} syscalls SEC(".maps");

SEC("tracepoint/raw_syscalls/sys_enter")
int count_syscalls(struct trace_event_raw_sys_enter *ctx)
{
	__u32 id = ctx->id;
	__u64 one = 1, *count = bpf_map_lookup_elem(&syscalls, &id);
	if (count)
		__sync_fetch_and_add(count, 1);
	else
		bpf_map_update_elem(&syscalls, &id, &one, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
