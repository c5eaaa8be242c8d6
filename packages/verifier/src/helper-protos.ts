// Prototypes of the helpers a tracepoint program may call (`struct bpf_func_proto`), for the
// helpers of the runtime (DESIGN.md "Runtime semantics") and their close relatives.

/** Argument kinds (`enum bpf_arg_type`). */
export const Arg = {
  /** ARG_ANYTHING */
  anything: 'anything',
  /** ARG_CONST_MAP_PTR */
  mapPtr: 'map_ptr',
  /** ARG_PTR_TO_MAP_KEY */
  mapKey: 'map_key',
  /** ARG_PTR_TO_MAP_VALUE */
  mapValue: 'map_value',
  /** ARG_PTR_TO_MAP_VALUE | MEM_UNINIT (written by the helper) */
  uninitMapValue: 'uninit_map_value',
  /** ARG_PTR_TO_MEM | MEM_RDONLY: read by the helper, size in the next argument */
  mem: 'mem',
  /** ARG_PTR_TO_UNINIT_MEM: written by the helper, size in the next argument */
  uninitMem: 'uninit_mem',
  /** ARG_CONST_SIZE */
  size: 'size',
  /** ARG_CONST_SIZE_OR_ZERO */
  sizeOrZero: 'size_or_zero',
  /** ARG_CONST_ALLOC_SIZE_OR_ZERO */
  allocSize: 'alloc_size',
  /** ARG_PTR_TO_CTX */
  ctx: 'ctx',
  /** ARG_PTR_TO_RINGBUF_MEM | OBJ_RELEASE (ARG_PTR_TO_ALLOC_MEM in older kernels) */
  releaseRingbuf: 'release_ringbuf',
  /** ARG_PTR_TO_FUNC: a callback */
  func: 'func',
  /** ARG_PTR_TO_STACK_OR_NULL: the callback's context */
  stackOrNull: 'stack_or_null',
} as const;
export type Arg = (typeof Arg)[keyof typeof Arg];

/** Return kinds (`enum bpf_return_type`). */
export const Ret = {
  /** RET_INTEGER */
  integer: 'integer',
  /** RET_VOID */
  void: 'void',
  /** RET_PTR_TO_MAP_VALUE_OR_NULL */
  mapValueOrNull: 'map_value_or_null',
  /** RET_PTR_TO_RINGBUF_MEM_OR_NULL (RET_PTR_TO_ALLOC_MEM_OR_NULL) */
  ringbufMemOrNull: 'ringbuf_mem_or_null',
} as const;
export type Ret = (typeof Ret)[keyof typeof Ret];

export interface HelperProto {
  id: number;
  name: string;
  args: readonly Arg[];
  ret: Ret;
  /** Map types this helper accepts in its map argument (check_map_func_compatibility). */
  mapTypes?: readonly number[];
  /** `pkt_access`: memory arguments may point into the packet. */
  pktAccess?: boolean;
}

const A = Arg;
const HASHES_AND_ARRAYS = [1, 2, 5, 6, 9, 10];

const PROTOS: readonly HelperProto[] = [
  {
    id: 1,
    name: 'map_lookup_elem',
    args: [A.mapPtr, A.mapKey],
    ret: Ret.mapValueOrNull,
    mapTypes: HASHES_AND_ARRAYS,
    pktAccess: true,
  },
  {
    id: 2,
    name: 'map_update_elem',
    args: [A.mapPtr, A.mapKey, A.mapValue, A.anything],
    ret: Ret.integer,
    mapTypes: HASHES_AND_ARRAYS,
    pktAccess: true,
  },
  {
    id: 3,
    name: 'map_delete_elem',
    args: [A.mapPtr, A.mapKey],
    ret: Ret.integer,
    mapTypes: HASHES_AND_ARRAYS,
    pktAccess: true,
  },
  { id: 4, name: 'probe_read', args: [A.uninitMem, A.sizeOrZero, A.anything], ret: Ret.integer },
  { id: 5, name: 'ktime_get_ns', args: [], ret: Ret.integer },
  { id: 6, name: 'trace_printk', args: [A.mem, A.size], ret: Ret.integer },
  { id: 7, name: 'get_prandom_u32', args: [], ret: Ret.integer },
  { id: 8, name: 'get_smp_processor_id', args: [], ret: Ret.integer },
  { id: 12, name: 'tail_call', args: [A.ctx, A.mapPtr, A.anything], ret: Ret.void, mapTypes: [3] },
  { id: 14, name: 'get_current_pid_tgid', args: [], ret: Ret.integer },
  { id: 15, name: 'get_current_uid_gid', args: [], ret: Ret.integer },
  { id: 16, name: 'get_current_comm', args: [A.uninitMem, A.size], ret: Ret.integer },
  { id: 22, name: 'perf_event_read', args: [A.mapPtr, A.anything], ret: Ret.integer, mapTypes: [4] },
  {
    id: 25,
    name: 'perf_event_output',
    args: [A.ctx, A.mapPtr, A.anything, A.mem, A.sizeOrZero],
    ret: Ret.integer,
    mapTypes: [4],
  },
  { id: 27, name: 'get_stackid', args: [A.ctx, A.mapPtr, A.anything], ret: Ret.integer, mapTypes: [7] },
  { id: 35, name: 'get_current_task', args: [], ret: Ret.integer },
  // bpf_current_task_under_cgroup(map, idx): libbpf-tools' cgroup filter (`-c CG`), on a cgroup array
  { id: 37, name: 'current_task_under_cgroup', args: [A.mapPtr, A.anything], ret: Ret.integer, mapTypes: [8] },
  { id: 45, name: 'probe_read_str', args: [A.uninitMem, A.sizeOrZero, A.anything], ret: Ret.integer },
  {
    id: 55,
    name: 'perf_event_read_value',
    args: [A.mapPtr, A.anything, A.uninitMem, A.size],
    ret: Ret.integer,
    mapTypes: [4],
  },
  // bpf_get_stack_proto_tp: the tracepoint flavour takes the program's context
  { id: 67, name: 'get_stack', args: [A.ctx, A.uninitMem, A.sizeOrZero, A.anything], ret: Ret.integer },
  { id: 80, name: 'get_current_cgroup_id', args: [], ret: Ret.integer },
  { id: 87, name: 'map_push_elem', args: [A.mapPtr, A.mapValue, A.anything], ret: Ret.integer, mapTypes: [22, 23] },
  { id: 88, name: 'map_pop_elem', args: [A.mapPtr, A.uninitMapValue], ret: Ret.integer, mapTypes: [22, 23] },
  { id: 89, name: 'map_peek_elem', args: [A.mapPtr, A.uninitMapValue], ret: Ret.integer, mapTypes: [22, 23] },
  { id: 109, name: 'send_signal', args: [A.anything], ret: Ret.integer },
  { id: 112, name: 'probe_read_user', args: [A.uninitMem, A.sizeOrZero, A.anything], ret: Ret.integer },
  { id: 113, name: 'probe_read_kernel', args: [A.uninitMem, A.sizeOrZero, A.anything], ret: Ret.integer },
  { id: 114, name: 'probe_read_user_str', args: [A.uninitMem, A.sizeOrZero, A.anything], ret: Ret.integer },
  { id: 115, name: 'probe_read_kernel_str', args: [A.uninitMem, A.sizeOrZero, A.anything], ret: Ret.integer },
  { id: 117, name: 'send_signal_thread', args: [A.anything], ret: Ret.integer },
  { id: 118, name: 'jiffies64', args: [], ret: Ret.integer },
  {
    id: 120,
    name: 'get_ns_current_pid_tgid',
    args: [A.anything, A.anything, A.uninitMem, A.size],
    ret: Ret.integer,
  },
  { id: 123, name: 'get_current_ancestor_cgroup_id', args: [A.anything], ret: Ret.integer },
  { id: 125, name: 'ktime_get_boot_ns', args: [], ret: Ret.integer },
  { id: 130, name: 'ringbuf_output', args: [A.mapPtr, A.mem, A.sizeOrZero, A.anything], ret: Ret.integer, mapTypes: [27] },
  { id: 131, name: 'ringbuf_reserve', args: [A.mapPtr, A.allocSize, A.anything], ret: Ret.ringbufMemOrNull, mapTypes: [27] },
  { id: 132, name: 'ringbuf_submit', args: [A.releaseRingbuf, A.anything], ret: Ret.void },
  { id: 133, name: 'ringbuf_discard', args: [A.releaseRingbuf, A.anything], ret: Ret.void },
  { id: 134, name: 'ringbuf_query', args: [A.mapPtr, A.anything], ret: Ret.integer, mapTypes: [27] },
  // 158 get_current_task_btf returns a trusted PTR_TO_BTF_ID of task_struct in the kernel; here
  // the same opaque token as get_current_task (a scalar): reads through it go by probe_read and
  // fail as all kernel-memory reads do, a direct load through it is refused as a scalar's
  { id: 158, name: 'get_current_task_btf', args: [], ret: Ret.integer },
  // 160 ktime_get_coarse_ns: Linux refuses it for tracing programs ("program of this type cannot
  // use helper"; it is not NMI-safe), found by the kernel fuzz
  { id: 174, name: 'get_attach_cookie', args: [A.ctx], ret: Ret.integer },
  { id: 181, name: 'loop', args: [A.anything, A.func, A.stackOrNull, A.anything], ret: Ret.integer },
  { id: 208, name: 'ktime_get_tai_ns', args: [], ret: Ret.integer },
];

const BY_ID = new Map(PROTOS.map((p) => [p.id, p]));

/** The prototype of helper `id`, or undefined when a tracepoint program may not call it here. */
export const helperProto = (id: number): HelperProto | undefined => BY_ID.get(id);

/** All prototypes, by id. */
export const helperProtos = (): readonly HelperProto[] => PROTOS;

/** `bpf_map_lookup_elem` for a known id, `unknown` otherwise (as the kernel log prints calls). */
export const helperName = (id: number): string => {
  const p = BY_ID.get(id);
  return p ? `bpf_${p.name}` : 'unknown';
};

/** Which helpers may take a map of this type (the reverse direction of check_map_func_compatibility). */
export function mapTypeAllowsHelper(mapType: number, helperId: number): boolean {
  switch (mapType) {
    case 3:
      return helperId === 12;
    case 4:
      return helperId === 25 || helperId === 22 || helperId === 55;
    case 7:
      return helperId === 27;
    case 8:
      // BPF_MAP_TYPE_CGROUP_ARRAY: only the cgroup-membership helpers (skb_under_cgroup is not a
      // tracepoint helper)
      return helperId === 37;
    case 27:
      return helperId === 130 || helperId === 131 || helperId === 134;
    case 22:
    case 23:
      return helperId === 87 || helperId === 88 || helperId === 89;
    default:
      return true;
  }
}
