// SPDX-License-Identifier: GPL-2.0
/* Signals delivered: signal/signal_deliver (the receiving task is `current`), counted by signal
 * number and receiving process (pid (tgid) and command name). */
#include "library.h"

struct signal_key {
	__u32 sig;
	__u32 pid;
	char comm[TASK_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct signal_key);
	__type(value, __u64);
} signals_delivered SEC(".maps");

SEC("tracepoint/signal/signal_deliver")
int on_signal_deliver(struct trace_event_raw_signal_deliver *ctx)
{
	struct signal_key key = {};
	key.sig = ctx->sig;
	key.pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	count_one(&signals_delivered, &key);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
