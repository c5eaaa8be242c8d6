/* The program library's stand-in for vmlinux.h + bpf_helpers.h (as examples/c/probeyard.h is for
 * the examples): only what the library uses, written here, no libbpf headers.
 *
 * Every record struct is a `trace_event_raw_*` marked preserve_access_index, so each field read is
 * a CO-RE relocation that Probeyard resolves by name against each kernel's own format files
 * (packages/compat). The structs are named after this machine's kernel event *classes*
 * (`trace_event_raw_sched_wakeup_template` serves sched_wakeup and sched_wakeup_new) and laid out
 * as Linux 6.18 (x86_64) lays them out, so libbpf resolves them too against the running kernel's
 * BTF (`bpftool prog loadall`); Probeyard takes a tracepoint program's record struct as its own
 * event's record whatever its name. A `___old` flavor describes an older layout of the same
 * record (a field that was renamed, removed, or was inline before it became `__data_loc`): a read
 * through it sits behind `bpf_core_field_exists`, which each kernel answers. */
#ifndef PROBEYARD_LIBRARY_H
#define PROBEYARD_LIBRARY_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef int __s32;
typedef short __s16;
typedef unsigned long long __u64;
typedef long long __s64;
typedef int pid_t;
typedef unsigned int uid_t;
typedef unsigned int dev_t;
typedef unsigned long long sector_t;
typedef _Bool bool;

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#define __always_inline inline __attribute__((always_inline))
/* How a map wants to be shown, as a BTF declaration tag on the map (packages/compat
 * display-hint.ts): PROBEYARD_DISPLAY("hidden") for a program's own bookkeeping. libbpf and the
 * kernel ignore it. */
#define PROBEYARD_DISPLAY(hint) __attribute__((btf_decl_tag("probeyard.display:" hint)))
/* Keeps `var` in a register here: two branches that read the same value from two layouts of a
 * record (behind bpf_core_field_exists) must each keep their own load, which carries its own CO-RE
 * relocation; clang would otherwise sink both loads into one through a pointer chosen by the branch,
 * a modified context pointer that verifiers refuse to dereference. */
#define barrier_var(var) asm volatile("" : "+r"(var))

/* enum bpf_map_type */
enum { BPF_MAP_TYPE_HASH = 1, BPF_MAP_TYPE_ARRAY = 2, BPF_MAP_TYPE_PERCPU_ARRAY = 6, BPF_MAP_TYPE_RINGBUF = 27 };
enum { BPF_ANY = 0, BPF_NOEXIST = 1 };

/* CO-RE field info kinds (libbpf's enum bpf_field_info_kind) */
enum { BPF_FIELD_BYTE_OFFSET = 0, BPF_FIELD_BYTE_SIZE = 1, BPF_FIELD_EXISTS = 2, BPF_FIELD_SIGNED = 3 };
#define bpf_core_field_exists(f) __builtin_preserve_field_info(f, BPF_FIELD_EXISTS)

/* helpers: calls to absolute helper ids (enum bpf_func_id) */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value, __u64 flags) = (void *)2;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)3;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static long (*bpf_get_current_comm)(void *buf, __u32 size) = (void *)16;
static long (*bpf_probe_read_kernel)(void *dst, __u32 size, const void *src) = (void *)113;
static long (*bpf_probe_read_kernel_str)(void *dst, __u32 size, const void *src) = (void *)115;
static long (*bpf_ringbuf_output)(void *ringbuf, void *data, __u64 size, __u64 flags) = (void *)130;

/* the common header of every record */
struct trace_entry {
	unsigned short type;
	unsigned char flags;
	unsigned char preempt_count;
	int pid;
} __attribute__((preserve_access_index));

/* A `__data_loc` string of the record: the u32 locator holds the payload's offset from the
 * record start in its low 16 bits and its length in the high 16 bits. Copies at most `size`
 * bytes, NUL-terminated (the runtime reads inside the record, as the kernel does). */
#define read_data_loc_str(dst, size, ctx, loc) \
	bpf_probe_read_kernel_str(dst, size, (void *)(ctx) + ((loc) & 0xffff))

/* ---- raw_syscalls ---------------------------------------------------------------------- */

struct trace_event_raw_sys_enter {
	struct trace_entry ent;
	long id;
	unsigned long args[6];
} __attribute__((preserve_access_index));

/* ---- sched ----------------------------------------------------------------------------- */

struct trace_event_raw_sched_process_exec {
	struct trace_entry ent;
	__u32 __data_loc_filename;
	pid_t pid;
	pid_t old_pid;
} __attribute__((preserve_access_index));

/* sched_wakeup, sched_wakeup_new */
struct trace_event_raw_sched_wakeup_template {
	struct trace_entry ent;
	char comm[16];
	pid_t pid;
	int prio;
	int target_cpu;
} __attribute__((preserve_access_index));

/* before 5.14 the record still had `success` (0: the wakeup did not happen) */
struct trace_event_raw_sched_wakeup_template___old {
	struct trace_entry ent;
	char comm[16];
	pid_t pid;
	int prio;
	int success;
	int target_cpu;
} __attribute__((preserve_access_index));

struct trace_event_raw_sched_switch {
	struct trace_entry ent;
	char prev_comm[16];
	pid_t prev_pid;
	int prev_prio;
	long prev_state;
	char next_comm[16];
	pid_t next_pid;
	int next_prio;
} __attribute__((preserve_access_index));

/* 6.18: the comms are `__data_loc char[]` */
struct trace_event_raw_sched_process_fork {
	struct trace_entry ent;
	__u32 __data_loc_parent_comm;
	pid_t parent_pid;
	__u32 __data_loc_child_comm;
	pid_t child_pid;
} __attribute__((preserve_access_index));

/* before: inline `char parent_comm[16]`, `char child_comm[16]` */
struct trace_event_raw_sched_process_fork___old {
	struct trace_entry ent;
	char parent_comm[16];
	pid_t parent_pid;
	char child_comm[16];
	pid_t child_pid;
} __attribute__((preserve_access_index));

struct trace_event_raw_sched_process_exit {
	struct trace_entry ent;
	char comm[16];
	pid_t pid;
	int prio;
	bool group_dead;
} __attribute__((preserve_access_index));

/* ---- block ----------------------------------------------------------------------------- */

/* block_rq_issue (and block_rq_insert) */
struct trace_event_raw_block_rq {
	struct trace_entry ent;
	dev_t dev;
	sector_t sector;
	unsigned int nr_sector;
	unsigned int bytes;
	unsigned short ioprio;
	char rwbs[10];
	char comm[16];
	__u32 __data_loc_cmd;
} __attribute__((preserve_access_index));

/* block_rq_complete: `error` on newer kernels (5.10.43 and 6.18 in the corpus) */
struct trace_event_raw_block_rq_completion {
	struct trace_entry ent;
	dev_t dev;
	sector_t sector;
	unsigned int nr_sector;
	int error;
	unsigned short ioprio;
	char rwbs[10];
	__u32 __data_loc_cmd;
} __attribute__((preserve_access_index));

/* before: `errors` */
struct trace_event_raw_block_rq_completion___old {
	struct trace_entry ent;
	dev_t dev;
	sector_t sector;
	unsigned int nr_sector;
	int errors;
	char rwbs[8];
	__u32 __data_loc_cmd;
} __attribute__((preserve_access_index));

/* ---- irq ------------------------------------------------------------------------------- */

struct trace_event_raw_irq_handler_entry {
	struct trace_entry ent;
	int irq;
	__u32 __data_loc_name;
} __attribute__((preserve_access_index));

struct trace_event_raw_irq_handler_exit {
	struct trace_entry ent;
	int irq;
	int ret;
} __attribute__((preserve_access_index));

/* softirq_entry, softirq_exit */
struct trace_event_raw_softirq {
	struct trace_entry ent;
	unsigned int vec;
} __attribute__((preserve_access_index));

/* ---- signal ---------------------------------------------------------------------------- */

struct trace_event_raw_signal_deliver {
	struct trace_entry ent;
	int sig;
	int errno;
	int code;
	unsigned long sa_handler;
	unsigned long sa_flags;
} __attribute__((preserve_access_index));

/* ---- oom ------------------------------------------------------------------------------- */

/* 6.18; 5.10 had `pid` alone */
struct trace_event_raw_mark_victim {
	struct trace_entry ent;
	int pid;
	__u32 __data_loc_comm;
	unsigned long total_vm;
	unsigned long anon_rss;
	unsigned long file_rss;
	unsigned long shmem_rss;
	uid_t uid;
	unsigned long pgtables;
	short oom_score_adj;
} __attribute__((preserve_access_index));

/* ---- tcp ------------------------------------------------------------------------------- */

/* 6.18; 5.10 had neither `family` nor `err` */
struct trace_event_raw_tcp_retransmit_skb {
	struct trace_entry ent;
	const void *skbaddr;
	const void *skaddr;
	int state;
	__u16 sport;
	__u16 dport;
	__u16 family;
	__u8 saddr[4];
	__u8 daddr[4];
	__u8 saddr_v6[16];
	__u8 daddr_v6[16];
	int err;
} __attribute__((preserve_access_index));

/* ---- shared pieces --------------------------------------------------------------------- */

#define TASK_COMM_LEN 16

/* A log2 histogram as libbpf-tools keep one: slot k counts values in [2^k, 2^(k+1)), the values
 * 0 and 1 both in slot 0 (display hint `log2-histogram`, bucketing `libbpf-tools`). */
#define MAX_SLOTS 32
struct hist {
	__u32 slots[MAX_SLOTS];
};

/* floor(log2(v)), 0 for 0 and 1 */
static __always_inline __u64 log2l(__u64 v)
{
	__u64 r, shift;
	r = (v > 0xffffffffULL) << 5; v >>= r;
	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

/* Adds one to `map[key]` (a u64 counter), creating it at 1. */
static __always_inline void count_one(void *map, const void *key)
{
	__u64 one = 1, *count = bpf_map_lookup_elem(map, key);
	if (count)
		__sync_fetch_and_add(count, 1);
	else
		bpf_map_update_elem(map, key, &one, BPF_NOEXIST);
}

/* Adds `n` to `map[key]` (a u64 total), creating it at `n`. */
static __always_inline void add_to(void *map, const void *key, __u64 n)
{
	__u64 *total = bpf_map_lookup_elem(map, key);
	if (total)
		__sync_fetch_and_add(total, n);
	else
		bpf_map_update_elem(map, key, &n, BPF_NOEXIST);
}

/* Counts `value` in the log2 histogram `map[key]`, creating an empty one first. */
static __always_inline void hist_add(void *map, const void *key, __u64 value)
{
	struct hist *h = bpf_map_lookup_elem(map, key);
	if (!h) {
		struct hist zero = {};
		bpf_map_update_elem(map, key, &zero, BPF_NOEXIST);
		h = bpf_map_lookup_elem(map, key);
		if (!h)
			return;
	}
	/* 64-bit, so that the bound checked is the register that indexes (no zero-extended copy) */
	__u64 slot = log2l(value);
	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	__sync_fetch_and_add(&h->slots[slot], 1);
}

#endif
