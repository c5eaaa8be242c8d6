// SPDX-License-Identifier: GPL-2.0
/* OOM kills: oom/mark_victim, one event per victim and a count per victim command name. 5.10
 * reports the victim's pid alone; 6.x adds its name (`__data_loc char[] comm`), memory (kB), uid
 * and oom_score_adj: each is read where this kernel has it (bpf_core_field_exists), left 0 (the
 * name empty) where not. Kernels without mark_victim (the corpus' Android kernels up to 4.4.88) have no event
 * to attach to. */
#include "library.h"

struct oom_kill_event {
	__u32 pid;
	__u32 uid;
	char comm[TASK_COMM_LEN];
	__u64 total_vm_kb;
	__u64 anon_rss_kb;
	__u64 file_rss_kb;
	__u64 shmem_rss_kb;
	__u64 pgtables_kb;
	__s32 oom_score_adj;
	__u32 pad;
};

/* names struct oom_kill_event in the object's BTF (a pointer in .bss, never used), so that readers of
 * oom_kill_events find the type of its records: `<name>_events` carries `struct <name>_event` */
struct oom_kill_event *oom_kill_events_type __attribute__((unused));

struct comm_key {
	char comm[TASK_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 * 1024);
} oom_kill_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct comm_key);
	__type(value, __u64);
} oom_kills SEC(".maps");

SEC("tracepoint/oom/mark_victim")
int on_mark_victim(struct trace_event_raw_mark_victim *ctx)
{
	struct oom_kill_event e = {};
	e.pid = ctx->pid;
	if (bpf_core_field_exists(ctx->__data_loc_comm))
		read_data_loc_str(e.comm, sizeof(e.comm), ctx, ctx->__data_loc_comm);
	if (bpf_core_field_exists(ctx->uid))
		e.uid = ctx->uid;
	if (bpf_core_field_exists(ctx->total_vm))
		e.total_vm_kb = ctx->total_vm;
	if (bpf_core_field_exists(ctx->anon_rss))
		e.anon_rss_kb = ctx->anon_rss;
	if (bpf_core_field_exists(ctx->file_rss))
		e.file_rss_kb = ctx->file_rss;
	if (bpf_core_field_exists(ctx->shmem_rss))
		e.shmem_rss_kb = ctx->shmem_rss;
	if (bpf_core_field_exists(ctx->pgtables))
		e.pgtables_kb = ctx->pgtables;
	if (bpf_core_field_exists(ctx->oom_score_adj))
		e.oom_score_adj = ctx->oom_score_adj;
	bpf_ringbuf_output(&oom_kill_events, &e, sizeof(e), 0);

	struct comm_key who = {};
	__builtin_memcpy(who.comm, e.comm, sizeof(who.comm));
	count_one(&oom_kills, &who);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
