// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* An open() tracer built like libbpf-tools' opensnoop: syscall tracepoints read through
 * `struct syscall_trace_enter`'s args[] and `struct syscall_trace_exit`'s ret, the arguments kept
 * by thread id from entry to exit, one record per open through a perf event array. The open()
 * pair is optional: architectures without open(2) (arm64, riscv) have no syscalls/sys_enter_open,
 * and the tool's user-space half turns those two programs off (bpf_program__set_autoload). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "compat.h"
#include "opensnoop.h"

const volatile pid_t targ_tgid = 0;
const volatile uid_t targ_uid = INVALID_UID;
const volatile bool targ_failed = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_ENTRIES);
	__type(key, u32);
	__type(value, struct args_t);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(u32));
	__uint(value_size, sizeof(u32));
} events SEC(".maps");

/* The record type in the object's BTF (a local variable's type is not): the libbpf-tools way of
 * letting tools decode records by field name. */
const struct event *unused_event __attribute__((unused));

static __always_inline bool trace_allowed(u32 tgid)
{
	u32 uid;

	if (targ_tgid && targ_tgid != tgid)
		return false;
	if (targ_uid != INVALID_UID) {
		uid = (u32)bpf_get_current_uid_gid();
		if (targ_uid != uid)
			return false;
	}
	return true;
}

SEC("tracepoint/syscalls/sys_enter_open")
int tracepoint__syscalls__sys_enter_open(struct syscall_trace_enter *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32, pid = id;

	if (trace_allowed(tgid)) {
		struct args_t args = {};
		args.fname = (const char *)ctx->args[0];
		args.flags = (int)ctx->args[1];
		args.mode = (unsigned int)ctx->args[2];
		bpf_map_update_elem(&start, &pid, &args, 0);
	}
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_openat")
int tracepoint__syscalls__sys_enter_openat(struct syscall_trace_enter *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32, pid = id;

	if (trace_allowed(tgid)) {
		struct args_t args = {};
		args.fname = (const char *)ctx->args[1];
		args.flags = (int)ctx->args[2];
		args.mode = (unsigned int)ctx->args[3];
		bpf_map_update_elem(&start, &pid, &args, 0);
	}
	return 0;
}

static __always_inline int trace_exit(struct syscall_trace_exit *ctx)
{
	struct event event = {};
	struct args_t *ap;
	int ret;
	u32 pid = bpf_get_current_pid_tgid();

	ap = bpf_map_lookup_elem(&start, &pid);
	if (!ap)
		return 0;
	ret = ctx->ret;
	if (targ_failed && ret >= 0)
		goto cleanup;

	event.pid = bpf_get_current_pid_tgid() >> 32;
	event.uid = bpf_get_current_uid_gid();
	bpf_get_current_comm(&event.comm, sizeof(event.comm));
	bpf_probe_read_user_str(&event.fname, sizeof(event.fname), ap->fname);
	event.flags = ap->flags;
	event.mode = ap->mode;
	event.ret = ret;
	event.ts = bpf_ktime_get_ns();

	bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &event, sizeof(event));

cleanup:
	bpf_map_delete_elem(&start, &pid);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_open")
int tracepoint__syscalls__sys_exit_open(struct syscall_trace_exit *ctx)
{
	return trace_exit(ctx);
}

SEC("tracepoint/syscalls/sys_exit_openat")
int tracepoint__syscalls__sys_exit_openat(struct syscall_trace_exit *ctx)
{
	return trace_exit(ctx);
}

char LICENSE[] SEC("license") = "GPL";
