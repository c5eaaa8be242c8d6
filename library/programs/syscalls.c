// SPDX-License-Identifier: GPL-2.0
/* System calls by id and by process: raw_syscalls/sys_enter. `id` is a `long` (4 bytes on 32-bit
 * kernels, where it is relocated to a sign-extending 4-byte load); the process is the caller's
 * pid (tgid) and command name. */
#include "library.h"

/* the calling process: pid (tgid) and command name */
struct proc_key {
	__u32 pid;
	char comm[TASK_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} syscalls_by_id SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct proc_key);
	__type(value, __u64);
} syscalls_by_process SEC(".maps");

SEC("tracepoint/raw_syscalls/sys_enter")
int on_sys_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u32 id = ctx->id;
	count_one(&syscalls_by_id, &id);

	struct proc_key key = {};
	key.pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	count_one(&syscalls_by_process, &key);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
