// The kernel's limits the verifier enforces, by their kernel names.

/** `MAX_BPF_STACK` */
export const MAX_STACK_BYTES = 512;
/** `MAX_CALL_FRAMES` */
export const MAX_CALL_FRAMES = 8;
/** `PERF_MAX_TRACE_SIZE`: the kernel's bound on tracepoint context reads. */
export const PERF_MAX_TRACE_SIZE = 8192;
/** `BPF_COMPLEXITY_LIMIT_INSNS` */
export const DEFAULT_INSN_LIMIT = 1_000_000;
/** `BPF_MAX_VAR_OFF` */
export const MAX_VAR_OFF = 1n << 29n;
/** `BPF_MAX_VAR_SIZ` */
export const MAX_VAR_SIZE = 1n << 29n;
/** `MAX_PACKET_OFF`: packet ranges are proven only for offsets up to this. */
export const MAX_PACKET_OFF = 0xffff;
/** `struct xdp_md`: data, data_end, data_meta, ingress_ifindex, rx_queue_index, egress_ifindex. */
export const XDP_MD_SIZE = 24;
/** Explored states kept per instruction for pruning (older ones are dropped; pruning only gets rarer). */
export const MAX_STATES_PER_INSN = 64;
