// SPDX-License-Identifier: GPL-2.0
/* Block I/O completions by error code and bytes completed per device, through the io provider's
 * stable probe io:::done: its `error` argument is block_rq_complete's `errors` before 4.20 and
 * `error` since, whichever implementation the kernel needs. iodone.c reads the same from the raw
 * tracepoint and is refused where the field is still called `errors`. */
#include "probeyard.h"
#include <probeyard/provider.h>

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

PY_PROBE(io, done)
int on_done(PY_ARGS(io, done) *args)
{
	__s64 error = args->error, dev = args->dev;
	add(&by_error, &error, 1);
	add(&bytes_by_dev, &dev, args->bytes);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
