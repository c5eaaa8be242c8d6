// SPDX-License-Identifier: GPL-2.0
/* Time in interrupt handlers: per hard IRQ (number and handler name), the total nanoseconds from
 * irq_handler_entry to irq_handler_exit; per softirq vector, the total nanoseconds from
 * softirq_entry to softirq_exit and a log2 histogram of each run in microseconds. Handlers do not
 * nest on one CPU, so the start of the running one is kept per CPU. */
#include "library.h"

#define IRQ_NAME_LEN 24

/* softirq vectors as kernels number them (vector 5, IRQ_POLL, was BLOCK_IOPOLL on older kernels) */
#define SOFTIRQ_NAME_LEN 12

struct hardirq_start {
	__u64 entered_ns;
	__s32 irq;
	char name[IRQ_NAME_LEN];
};

struct softirq_start {
	__u64 entered_ns;
	__u32 vec;
	__u32 pad;
};

struct irq_key {
	__s32 irq;
	char name[IRQ_NAME_LEN];
};

struct softirq_key {
	__u32 vec;
	char name[SOFTIRQ_NAME_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hardirq_start);
} hardirq_running SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct softirq_start);
} softirq_running SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct irq_key);
	__type(value, __u64);
} hardirq_time_ns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32);
	__type(key, struct softirq_key);
	__type(value, __u64);
} softirq_time_ns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32);
	__type(key, struct softirq_key);
	__type(value, struct hist);
} softirq_duration_us SEC(".maps");

/* up to 8 name bytes as one little-endian word: no string constants, so no .rodata */
#define NAME8(a, b, c, d, e, f, g, h)                                                          \
	((__u64)(a) | (__u64)(b) << 8 | (__u64)(c) << 16 | (__u64)(d) << 24 | (__u64)(e) << 32 | \
	 (__u64)(f) << 40 | (__u64)(g) << 48 | (__u64)(h) << 56)

static __always_inline struct softirq_key softirq_key_of(__u32 vec)
{
	struct softirq_key k = { .vec = vec };
	__u64 lo = 0, hi = 0;
	switch (vec) {
	case 0: lo = NAME8('H', 'I', 0, 0, 0, 0, 0, 0); break;
	case 1: lo = NAME8('T', 'I', 'M', 'E', 'R', 0, 0, 0); break;
	case 2: lo = NAME8('N', 'E', 'T', '_', 'T', 'X', 0, 0); break;
	case 3: lo = NAME8('N', 'E', 'T', '_', 'R', 'X', 0, 0); break;
	case 4: lo = NAME8('B', 'L', 'O', 'C', 'K', 0, 0, 0); break;
	case 5: lo = NAME8('I', 'R', 'Q', '_', 'P', 'O', 'L', 'L'); break;
	case 6: lo = NAME8('T', 'A', 'S', 'K', 'L', 'E', 'T', 0); break;
	case 7: lo = NAME8('S', 'C', 'H', 'E', 'D', 0, 0, 0); break;
	case 8: lo = NAME8('H', 'R', 'T', 'I', 'M', 'E', 'R', 0); break;
	case 9: lo = NAME8('R', 'C', 'U', 0, 0, 0, 0, 0); break;
	default: lo = NAME8('?', 0, 0, 0, 0, 0, 0, 0); break;
	}
	__builtin_memcpy(k.name, &lo, 8);
	__builtin_memcpy(k.name + 8, &hi, 4);
	return k;
}

SEC("tracepoint/irq/irq_handler_entry")
int on_irq_entry(struct trace_event_raw_irq_handler_entry *ctx)
{
	__u32 zero = 0;
	struct hardirq_start *s = bpf_map_lookup_elem(&hardirq_running, &zero);
	if (!s)
		return 0;
	s->entered_ns = bpf_ktime_get_ns();
	s->irq = ctx->irq;
	/* the name becomes part of a map key: no bytes of a longer name read before may stay behind
	 * its NUL (bpf_probe_read_kernel_str does not clear the rest of the buffer) */
	__builtin_memset(s->name, 0, sizeof(s->name));
	read_data_loc_str(s->name, sizeof(s->name), ctx, ctx->__data_loc_name);
	return 0;
}

SEC("tracepoint/irq/irq_handler_exit")
int on_irq_exit(struct trace_event_raw_irq_handler_exit *ctx)
{
	__u32 zero = 0;
	struct hardirq_start *s = bpf_map_lookup_elem(&hardirq_running, &zero);
	if (!s || !s->entered_ns || s->irq != ctx->irq)
		return 0;
	struct irq_key key = { .irq = s->irq };
	__builtin_memcpy(key.name, s->name, sizeof(key.name));
	add_to(&hardirq_time_ns, &key, bpf_ktime_get_ns() - s->entered_ns);
	s->entered_ns = 0;
	return 0;
}

SEC("tracepoint/irq/softirq_entry")
int on_softirq_entry(struct trace_event_raw_softirq *ctx)
{
	__u32 zero = 0;
	struct softirq_start *s = bpf_map_lookup_elem(&softirq_running, &zero);
	if (!s)
		return 0;
	s->entered_ns = bpf_ktime_get_ns();
	s->vec = ctx->vec;
	return 0;
}

SEC("tracepoint/irq/softirq_exit")
int on_softirq_exit(struct trace_event_raw_softirq *ctx)
{
	__u32 zero = 0;
	struct softirq_start *s = bpf_map_lookup_elem(&softirq_running, &zero);
	if (!s || !s->entered_ns || s->vec != ctx->vec)
		return 0;
	__u64 delta_ns = bpf_ktime_get_ns() - s->entered_ns;
	s->entered_ns = 0;
	struct softirq_key key = softirq_key_of(ctx->vec);
	add_to(&softirq_time_ns, &key, delta_ns);
	hist_add(&softirq_duration_us, &key, delta_ns / 1000);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
