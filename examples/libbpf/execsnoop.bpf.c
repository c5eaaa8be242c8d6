// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* An exec tracer in the style of libbpf-tools' execsnoop: one record per exec through a perf event
 * array (one ring per CPU, sized by libbpf at load), built in a per-CPU scratch array because the
 * event does not fit on the stack; a uid filter in .rodata. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "compat.h"
#include "execsnoop.h"

const volatile uid_t targ_uid = INVALID_UID;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct event);
} heap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(u32));
	__uint(value_size, sizeof(u32));
} events SEC(".maps");

SEC("tracepoint/sched/sched_process_exec")
int handle_exec(struct trace_event_raw_sched_process_exec *ctx)
{
	u32 zero = 0, uid;
	unsigned int fname_off;
	struct event *e;

	uid = (u32)bpf_get_current_uid_gid();
	if (targ_uid != INVALID_UID && targ_uid != uid)
		return 0;

	e = bpf_map_lookup_elem(&heap, &zero);
	if (!e)
		return 0;

	e->pid = ctx->pid;
	e->old_pid = ctx->old_pid;
	e->uid = uid;
	bpf_get_current_comm(&e->comm, sizeof(e->comm));
	fname_off = ctx->__data_loc_filename & 0xFFFF;
	bpf_probe_read_str(&e->filename, sizeof(e->filename), (void *)ctx + fname_off);

	bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, e, sizeof(*e));
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
