// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A syscall counter built like libbpf-tools' syscount: raw_syscalls tracepoints, a cgroup filter
 * (bpf_current_task_under_cgroup on a cgroup array), options in .rodata that the user-space half
 * sets before load, counts per syscall id (or per process) with latency. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "compat.h"
#include "syscount.h"

const volatile bool filter_cg = false;
const volatile bool count_by_process = false;
const volatile bool measure_latency = false;
const volatile bool filter_failed = false;
const volatile int filter_errno = 0;
const volatile pid_t filter_pid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__type(key, u32);
	__type(value, u32);
	__uint(max_entries, 1);
} cgroup_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_ENTRIES);
	__type(key, u32);
	__type(value, u64);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_ENTRIES);
	__type(key, u32);
	__type(value, struct data_t);
} data SEC(".maps");

static __always_inline void save_proc_name(struct data_t *val)
{
	bpf_get_current_comm(&val->comm, sizeof(val->comm));
}

SEC("tracepoint/raw_syscalls/sys_enter")
int sys_enter(struct trace_event_raw_sys_enter *args)
{
	u64 id = bpf_get_current_pid_tgid();
	pid_t pid = id >> 32;
	u32 tid = id;
	u64 ts;

	if (filter_cg && !bpf_current_task_under_cgroup(&cgroup_map, 0))
		return 0;
	if (filter_pid && pid != filter_pid)
		return 0;

	ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&start, &tid, &ts, 0);
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_exit")
int sys_exit(struct trace_event_raw_sys_exit *args)
{
	u64 id = bpf_get_current_pid_tgid();
	static const struct data_t zero;
	pid_t pid = id >> 32;
	struct data_t *val;
	u64 *start_ts, lat = 0;
	u32 tid = id;
	u32 key;

	if (filter_cg && !bpf_current_task_under_cgroup(&cgroup_map, 0))
		return 0;
	if (filter_pid && pid != filter_pid)
		return 0;
	if (filter_failed && args->ret >= 0)
		return 0;
	if (filter_errno && args->ret != -filter_errno)
		return 0;

	if (measure_latency) {
		start_ts = bpf_map_lookup_elem(&start, &tid);
		if (!start_ts)
			return 0;
		lat = bpf_ktime_get_ns() - *start_ts;
	}

	key = (count_by_process) ? pid : args->id;
	val = bpf_map_lookup_elem(&data, &key);
	if (!val) {
		bpf_map_update_elem(&data, &key, &zero, BPF_NOEXIST);
		val = bpf_map_lookup_elem(&data, &key);
		if (!val)
			return 0;
	}
	__sync_fetch_and_add(&val->count, 1);
	if (count_by_process)
		save_proc_name(val);
	if (measure_latency) {
		__sync_fetch_and_add(&val->total_ns, lat);
		if (lat > val->max_ns)
			val->max_ns = lat;
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
