// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One tool, two attach kinds, as many libbpf-tools have (a kprobe and a tracepoint variant of the
 * same count, the user-space half choosing one): unlinkat() calls counted by a kprobe on
 * do_unlinkat and by the syscalls/sys_enter_unlinkat tracepoint. Probeyard runs tracepoint
 * programs only: `verify` says the kprobe is not supported, the tracepoint one is checked. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, u32);
	__type(value, u64);
} unlinks SEC(".maps");

static __always_inline int count(u32 slot)
{
	u64 *n = bpf_map_lookup_elem(&unlinks, &slot);

	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

SEC("kprobe/do_unlinkat")
int BPF_KPROBE(kprobe_unlinkat, int dfd)
{
	return count(0);
}

SEC("tracepoint/syscalls/sys_enter_unlinkat")
int tp_unlinkat(struct syscall_trace_enter *ctx)
{
	return count(1);
}

char LICENSE[] SEC("license") = "GPL";
