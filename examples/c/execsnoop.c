// SPDX-License-Identifier: GPL-2.0
/* Counts exec()s by file name: sched/sched_process_exec, reading the __data_loc string `filename`. */
#include "probeyard.h"

#define NAME_LEN 64

struct name { char s[NAME_LEN]; };

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct name);
	__type(value, __u64);
} execs SEC(".maps");

SEC("tracepoint/sched/sched_process_exec")
int count_execs(struct trace_event_raw_sched_process_exec *ctx)
{
	struct name key = {};
	/* __data_loc: low 16 bits the offset from the record start, high 16 bits the length */
	__u32 loc = ctx->__data_loc_filename;
	bpf_probe_read_kernel_str(key.s, sizeof(key.s), (void *)ctx + (loc & 0xffff));
	__u64 one = 1, *count = bpf_map_lookup_elem(&execs, &key);
	if (count)
		__sync_fetch_and_add(count, 1);
	else
		bpf_map_update_elem(&execs, &key, &one, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
