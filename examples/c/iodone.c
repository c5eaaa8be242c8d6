// SPDX-License-Identifier: GPL-2.0
/* The raw-tracepoint twin of ioprov.c: block I/O completions by error code and bytes per device,
 * read from block/block_rq_complete's `error` field. Before 4.20 the field was called `errors`:
 * relocation by name finds no `error` there and Probeyard refuses the program (field-missing);
 * ioprov.c, through io:::done, runs on both. */
#include "probeyard.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __s64);
	__type(value, __u64);
} by_error SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __s64);
	__type(value, __u64);
} bytes_by_dev SEC(".maps");

static __always_inline void add(void *map, __s64 *key, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(map, key);
	if (v)
		__sync_fetch_and_add(v, n);
	else
		bpf_map_update_elem(map, key, &n, BPF_NOEXIST);
}

SEC("tracepoint/block/block_rq_complete")
int on_done(struct trace_event_raw_block_rq_complete *ctx)
{
	__s64 error = ctx->error, dev = ctx->dev;
	add(&by_error, &error, 1);
	add(&bytes_by_dev, &dev, (__u64)ctx->nr_sector * 512);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
