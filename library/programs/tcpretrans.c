// SPDX-License-Identifier: GPL-2.0
/* TCP retransmits: tcp/tcp_retransmit_skb (upstream since 4.15; older kernels have no such event), one
 * event per retransmitted segment (ports, IPv4 and IPv6 addresses, TCP state, and where the kernel
 * has them the address family (6.x) and the send result `err` (6.x)) and a count per remote port.
 * Ports are in host byte order; an IPv4 connection's addresses also appear IPv4-mapped in the
 * IPv6 fields. */
#include "library.h"

struct retransmit_event {
	__u16 family;
	__u16 sport;
	__u16 dport;
	__u16 pad;
	__u32 state;
	__s32 err;
	__u8 saddr[4];
	__u8 daddr[4];
	__u8 saddr_v6[16];
	__u8 daddr_v6[16];
};

/* names struct retransmit_event in the object's BTF (a pointer in .bss, never used), so that readers of
 * retransmit_events find the type of its records: `<name>_events` carries `struct <name>_event` */
struct retransmit_event *retransmit_events_type __attribute__((unused));

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} retransmit_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} retransmits_by_dport SEC(".maps");

SEC("tracepoint/tcp/tcp_retransmit_skb")
int on_retransmit(struct trace_event_raw_tcp_retransmit_skb *ctx)
{
	struct retransmit_event e = {};
	if (bpf_core_field_exists(ctx->family))
		e.family = ctx->family;
	if (bpf_core_field_exists(ctx->err))
		e.err = ctx->err;
	e.sport = ctx->sport;
	e.dport = ctx->dport;
	e.state = ctx->state;
	bpf_probe_read_kernel(e.saddr, sizeof(e.saddr), ctx->saddr);
	bpf_probe_read_kernel(e.daddr, sizeof(e.daddr), ctx->daddr);
	bpf_probe_read_kernel(e.saddr_v6, sizeof(e.saddr_v6), ctx->saddr_v6);
	bpf_probe_read_kernel(e.daddr_v6, sizeof(e.daddr_v6), ctx->daddr_v6);
	bpf_ringbuf_output(&retransmit_events, &e, sizeof(e), 0);

	__u32 dport = e.dport;
	count_one(&retransmits_by_dport, &dport);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
