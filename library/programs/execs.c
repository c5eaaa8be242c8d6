// SPDX-License-Identifier: GPL-2.0
/* Execs with file names: one event per sched/sched_process_exec (pid, the pid before exec for a
 * multi-threaded exec, command name, file name) and a count per file name. `filename` is
 * `__data_loc char[]` on every kernel of the corpus. */
#include "library.h"

#define FILENAME_LEN 128

struct exec_event {
	__u32 pid;
	__u32 old_pid;
	char comm[TASK_COMM_LEN];
	char filename[FILENAME_LEN];
};

/* names struct exec_event in the object's BTF (a pointer in .bss, never used), so that readers of
 * exec_events find the type of its records: `<name>_events` carries `struct <name>_event` */
struct exec_event *exec_events_type __attribute__((unused));

struct file_key {
	char filename[FILENAME_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} exec_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct file_key);
	__type(value, __u64);
} execs_by_file SEC(".maps");

SEC("tracepoint/sched/sched_process_exec")
int on_exec(struct trace_event_raw_sched_process_exec *ctx)
{
	struct exec_event e = {};
	e.pid = ctx->pid;
	e.old_pid = ctx->old_pid;
	bpf_get_current_comm(e.comm, sizeof(e.comm));
	read_data_loc_str(e.filename, sizeof(e.filename), ctx, ctx->__data_loc_filename);
	bpf_ringbuf_output(&exec_events, &e, sizeof(e), 0);
	count_one(&execs_by_file, e.filename);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
