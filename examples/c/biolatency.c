// SPDX-License-Identifier: GPL-2.0
/* Block I/O latency: block_rq_issue to block_rq_complete of the same (dev, sector), as a log2
 * histogram in microseconds. */
#include "probeyard.h"

struct rq_key {
	__u32 dev;
	__u32 pad;
	__u64 sector;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct rq_key);
	__type(value, __u64);
} issued SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} bio_usecs SEC(".maps");

SEC("tracepoint/block/block_rq_issue")
int on_issue(struct trace_event_raw_block_rq_issue *ctx)
{
	struct rq_key key = { .dev = ctx->dev, .sector = ctx->sector };
	__u64 ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&issued, &key, &ts, BPF_ANY);
	return 0;
}

SEC("tracepoint/block/block_rq_complete")
int on_complete(struct trace_event_raw_block_rq_complete *ctx)
{
	struct rq_key key = { .dev = ctx->dev, .sector = ctx->sector };
	__u64 *tsp = bpf_map_lookup_elem(&issued, &key);
	if (!tsp)
		return 0;
	__u64 delta = (bpf_ktime_get_ns() - *tsp) / 1000;
	bpf_map_delete_elem(&issued, &key);
	__u32 slot = log2l(delta);
	if (slot >= 64)
		slot = 63;
	__u64 *count = bpf_map_lookup_elem(&bio_usecs, &slot);
	if (count)
		__sync_fetch_and_add(count, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
