// SPDX-License-Identifier: GPL-2.0
/* Block I/O latency and sizes: from block_rq_issue to block_rq_complete of the same request
 * (disk, sector), a log2 histogram in microseconds per disk; the size of each issued request that
 * carries data, a log2 histogram in bytes per command name (the task that issued it); failed
 * completions per disk. The completion's status is `error` on newer kernels (5.10.43, 6.18) and
 * `errors` on older ones (up to 4.4.88 in the corpus): the program reads whichever this kernel has
 * (bpf_core_field_exists on both names). */
#include "library.h"

/* a disk as the kernel's dev_t splits it: major (12 bits) and minor (20 bits) */
struct disk_key {
	__u32 major;
	__u32 minor;
};

struct request_key {
	__u32 dev;
	__u32 pad;
	__u64 sector;
};

struct comm_key {
	char comm[TASK_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct request_key);
	__type(value, __u64);
} issued_at_ns SEC(".maps") PROBEYARD_DISPLAY("hidden");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct disk_key);
	__type(value, struct hist);
} bio_latency_us SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct comm_key);
	__type(value, struct hist);
} bio_size_bytes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct disk_key);
	__type(value, __u64);
} bio_errors SEC(".maps");

static __always_inline struct disk_key disk_of(__u32 dev)
{
	struct disk_key d = { .major = dev >> 20, .minor = dev & ((1U << 20) - 1) };
	return d;
}

SEC("tracepoint/block/block_rq_issue")
int on_issue(struct trace_event_raw_block_rq *ctx)
{
	struct request_key rq = { .dev = ctx->dev, .sector = ctx->sector };
	__u64 ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&issued_at_ns, &rq, &ts, BPF_ANY);

	__u32 bytes = ctx->bytes;
	if (bytes) {
		struct comm_key who = {};
		bpf_probe_read_kernel(who.comm, sizeof(who.comm), ctx->comm);
		hist_add(&bio_size_bytes, &who, bytes);
	}
	return 0;
}

SEC("tracepoint/block/block_rq_complete")
int on_complete(struct trace_event_raw_block_rq_completion *ctx)
{
	struct trace_event_raw_block_rq_completion___old *old = (void *)ctx;
	struct disk_key disk = disk_of(ctx->dev);
	int error = 0;
	if (bpf_core_field_exists(ctx->error)) {
		error = ctx->error;
		barrier_var(error);
	} else if (bpf_core_field_exists(old->errors)) {
		error = old->errors;
		barrier_var(error);
	}
	if (error)
		count_one(&bio_errors, &disk);

	struct request_key rq = { .dev = ctx->dev, .sector = ctx->sector };
	__u64 *issued = bpf_map_lookup_elem(&issued_at_ns, &rq);
	if (!issued)
		return 0;
	__u64 delta_us = (bpf_ktime_get_ns() - *issued) / 1000;
	bpf_map_delete_elem(&issued_at_ns, &rq);
	hist_add(&bio_latency_us, &disk, delta_us);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
