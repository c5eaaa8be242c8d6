/* Probeyard's own minimal stand-in for vmlinux.h + bpf_helpers.h: just what the examples use.
 * Record structs mirror this machine's kernel (Linux 6.18, x86_64) format files; every one is
 * preserve_access_index, so each field access becomes a CO-RE relocation resolved per kernel. */
#ifndef PROBEYARD_EXAMPLES_H
#define PROBEYARD_EXAMPLES_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef int __s32;
typedef unsigned long long __u64;
typedef long long __s64;
typedef int pid_t;
typedef unsigned int dev_t;
typedef unsigned long long sector_t;

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#define __always_inline inline __attribute__((always_inline))

enum { BPF_MAP_TYPE_HASH = 1, BPF_MAP_TYPE_ARRAY = 2 };
enum { BPF_ANY = 0, BPF_NOEXIST = 1 };

/* CO-RE field info kinds (libbpf's enum bpf_field_info_kind) */
enum { BPF_FIELD_BYTE_OFFSET = 0, BPF_FIELD_BYTE_SIZE = 1, BPF_FIELD_EXISTS = 2, BPF_FIELD_SIGNED = 3 };
#define bpf_core_field_exists(f) __builtin_preserve_field_info(f, BPF_FIELD_EXISTS)
#define bpf_core_field_size(f) __builtin_preserve_field_info(f, BPF_FIELD_BYTE_SIZE)

/* helpers: calls to absolute helper ids (enum bpf_func_id) */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value, __u64 flags) = (void *)2;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)3;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static long (*bpf_probe_read_kernel)(void *dst, __u32 size, const void *src) = (void *)113;
static long (*bpf_probe_read_kernel_str)(void *dst, __u32 size, const void *src) = (void *)115;

/* the common header of every record */
struct trace_entry {
	unsigned short type;
	unsigned char flags;
	unsigned char preempt_count;
	int pid;
} __attribute__((preserve_access_index));

struct trace_event_raw_sys_enter {
	struct trace_entry ent;
	long id;
	unsigned long args[6];
} __attribute__((preserve_access_index));

struct trace_event_raw_sched_process_exec {
	struct trace_entry ent;
	__u32 __data_loc_filename;
	pid_t pid;
	pid_t old_pid;
} __attribute__((preserve_access_index));

struct trace_event_raw_sched_wakeup {
	struct trace_entry ent;
	char comm[16];
	pid_t pid;
	int prio;
	int target_cpu;
} __attribute__((preserve_access_index));

/* the layout before 5.14, which still had `success`: a CO-RE flavor of the same record */
struct trace_event_raw_sched_wakeup___old {
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

struct trace_event_raw_block_rq_issue {
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

struct trace_event_raw_block_rq_complete {
	struct trace_entry ent;
	dev_t dev;
	sector_t sector;
	unsigned int nr_sector;
	int error;
	unsigned short ioprio;
	char rwbs[10];
	__u32 __data_loc_cmd;
} __attribute__((preserve_access_index));

/* sched_process_fork as kernels before 6.18 lay it out: inline comm arrays */
struct trace_event_raw_sched_process_fork {
	struct trace_entry ent;
	char parent_comm[16];
	pid_t parent_pid;
	char child_comm[16];
	pid_t child_pid;
} __attribute__((preserve_access_index));

/* log2 bucket of a value (floor(log2(v)), 0 for 0 and 1), as bpftrace's hist() counts */
static __always_inline __u32 log2l(__u64 v)
{
	__u32 r, shift;
	r = (v > 0xffffffffULL) << 5; v >>= r;
	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

/* How a map wants to be shown, carried in the object's BTF as a declaration tag on the map
 * (packages/compat display-hint.ts): PROBEYARD_DISPLAY("hidden"),
 * PROBEYARD_DISPLAY("log2-histogram,bucket=libbpf-tools,unit=us"). libbpf and the kernel ignore it. */
#define PROBEYARD_DISPLAY(hint) __attribute__((btf_decl_tag("probeyard.display:" hint)))

#endif
