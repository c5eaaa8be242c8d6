// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Weak kernel symbols as libbpf-tools use them: a kfunc from a newer kernel declared __weak and
 * called only when bpf_ksym_exists() says the running kernel has it. libbpf resolves an absent weak
 * kfunc to 0, the branch is dead, and the program loads everywhere. Counts execs by comm; on a
 * kernel with the kfunc it would also count them by cgroup. Also bpf_printk, which libbpf-tools'
 * debug builds use. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "compat.h"

/* Not in any kernel: stands for a kfunc of a kernel newer than the one this runs on. */
extern u64 bpf_probeyard_cgroup_of_task(struct task_struct *task) __ksym __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, char[TASK_COMM_LEN]);
	__type(value, u64);
} execs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, u64);
	__type(value, u64);
} by_cgroup SEC(".maps");

SEC("tracepoint/sched/sched_process_exec")
int count_exec(struct trace_event_raw_sched_process_exec *ctx)
{
	char comm[TASK_COMM_LEN] = {};
	u64 one = 1, *count;

	bpf_get_current_comm(&comm, sizeof(comm));
	count = bpf_map_lookup_elem(&execs, &comm);
	if (count)
		__sync_fetch_and_add(count, 1);
	else
		bpf_map_update_elem(&execs, &comm, &one, BPF_NOEXIST);

	if (bpf_ksym_exists(bpf_probeyard_cgroup_of_task)) {
		u64 cgid = bpf_probeyard_cgroup_of_task((struct task_struct *)bpf_get_current_task_btf());
		count = bpf_map_lookup_elem(&by_cgroup, &cgid);
		if (count)
			__sync_fetch_and_add(count, 1);
		else
			bpf_map_update_elem(&by_cgroup, &cgid, &one, BPF_NOEXIST);
	}
	bpf_printk("exec pid %d old_pid %d", ctx->pid, ctx->old_pid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
