// SPDX-License-Identifier: GPL-2.0
/* Counts forks per parent name and sums the child pids, like forkcomm.c, but through the proc
 * provider's stable probe proc:::fork instead of sched/sched_process_fork: the arguments record
 * (library/include/probeyard/provider.h) has the same layout on every kernel, and the provider
 * picks the implementation each kernel needs (inline char[16] comms before 6.18, __data_loc on
 * 6.18), so this object runs where forkcomm.o is refused. */
#include "probeyard.h"
#include <probeyard/provider.h>

struct comm { char s[16]; };

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct comm);
	__type(value, __u64);
} forks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct comm);
	__type(value, __u64);
} child_pids SEC(".maps");

static __always_inline void add(void *map, struct comm *key, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(map, key);
	if (v)
		__sync_fetch_and_add(v, n);
	else
		bpf_map_update_elem(map, key, &n, BPF_NOEXIST);
}

PY_PROBE(proc, fork)
int count_forks(PY_ARGS(proc, fork) *args)
{
	struct comm key = {};
	bpf_probe_read_kernel_str(key.s, sizeof(key.s), PY_STR(args, parent_comm));
	add(&forks, &key, 1);
	add(&child_pids, &key, args->child_pid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
