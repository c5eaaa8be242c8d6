/**
 * Program types (`enum bpf_prog_type`, `BPF_PROG_TYPE_*` in lowercase without the prefix) and
 * how libbpf derives them from ELF section names (`SEC("tracepoint/sched/sched_switch")`).
 */
export const ProgramType = {
  Unspec: 'unspec',
  SocketFilter: 'socket_filter',
  Kprobe: 'kprobe',
  SchedCls: 'sched_cls',
  SchedAct: 'sched_act',
  Tracepoint: 'tracepoint',
  Xdp: 'xdp',
  PerfEvent: 'perf_event',
  CgroupSkb: 'cgroup_skb',
  CgroupSock: 'cgroup_sock',
  LwtIn: 'lwt_in',
  LwtOut: 'lwt_out',
  LwtXmit: 'lwt_xmit',
  SockOps: 'sock_ops',
  SkSkb: 'sk_skb',
  CgroupDevice: 'cgroup_device',
  SkMsg: 'sk_msg',
  RawTracepoint: 'raw_tracepoint',
  CgroupSockAddr: 'cgroup_sock_addr',
  LwtSeg6local: 'lwt_seg6local',
  LircMode2: 'lirc_mode2',
  SkReuseport: 'sk_reuseport',
  FlowDissector: 'flow_dissector',
  CgroupSysctl: 'cgroup_sysctl',
  RawTracepointWritable: 'raw_tracepoint_writable',
  CgroupSockopt: 'cgroup_sockopt',
  Tracing: 'tracing',
  StructOps: 'struct_ops',
  Ext: 'ext',
  Lsm: 'lsm',
  SkLookup: 'sk_lookup',
  Syscall: 'syscall',
  Netfilter: 'netfilter',
} as const;
export type ProgramType = (typeof ProgramType)[keyof typeof ProgramType];

/** What a program attaches to, parsed from the rest of its section name. */
export type AttachPoint =
  /** `tracepoint/<system>/<event>`, `tp/<system>/<event>`: a tracefs event (its format file applies). */
  | { kind: 'tracepoint'; system: string; event: string }
  /** `raw_tp/<name>`, `raw_tracepoint/<name>`: ctx is the TP_PROTO arguments, not the format record. */
  | { kind: 'raw-tracepoint'; name: string }
  /** `tp_btf/`, `fentry/`, `fexit/`, `fmod_ret/`, `lsm/`, `iter/`, `freplace/`: a BTF-named kernel target. */
  | { kind: 'btf'; target: string }
  /** `kprobe/<func>[+<offset>]`, `kretprobe/<func>`. */
  | { kind: 'kprobe'; function: string; offset: number; retprobe: boolean }
  /** `ksyscall/<syscall>`, `kretsyscall/<syscall>`. */
  | { kind: 'syscall'; syscall: string; retprobe: boolean }
  /** `uprobe/<binary>:<func>[+<offset>]`, `uretprobe/…`. */
  | { kind: 'uprobe'; binary: string; function: string; offset: number; retprobe: boolean }
  /** A family whose target text is kept as is (`usdt/…`, `kprobe.multi/…`, `cgroup/…`). */
  | { kind: 'named'; target: string }
  /** Attached by the loader to something outside the object (`xdp`, `socket`, `perf_event`), or no target given. */
  | { kind: 'none' };

/** A program section's meaning according to libbpf's section-name table. */
export interface ProgramSection {
  type: ProgramType;
  /** libbpf's expected attach type (`BPF_TRACE_FENTRY` → 'trace_fentry'), when the family has one. */
  expectedAttachType: string | undefined;
  /** The family prefix that matched (`tracepoint`, `tp`, `raw_tp`, …); undefined for unknown names. */
  family: string | undefined;
  /** Sleepable variant (`.s` families). */
  sleepable: boolean;
  attach: AttachPoint;
}

type Parse = (target: string) => AttachPoint;

interface Family {
  name: string;
  type: ProgramType;
  attachType?: string;
  sleepable?: boolean;
  parse?: Parse;
}

const tracepoint: Parse = (t) => {
  const slash = t.indexOf('/');
  if (slash <= 0 || slash === t.length - 1) return t === '' ? { kind: 'none' } : { kind: 'named', target: t };
  return { kind: 'tracepoint', system: t.slice(0, slash), event: t.slice(slash + 1) };
};
const rawTracepoint: Parse = (t) => (t === '' ? { kind: 'none' } : { kind: 'raw-tracepoint', name: t });
const btf: Parse = (t) => (t === '' ? { kind: 'none' } : { kind: 'btf', target: t });
const named: Parse = (t) => (t === '' ? { kind: 'none' } : { kind: 'named', target: t });

function parseOffset(s: string): number | undefined {
  if (/^0x[0-9a-f]+$/i.test(s)) return Number.parseInt(s.slice(2), 16);
  if (/^\d+$/.test(s)) return Number.parseInt(s, 10);
  return undefined;
}

const kprobe =
  (retprobe: boolean): Parse =>
  (t) => {
    if (t === '') return { kind: 'none' };
    const plus = t.lastIndexOf('+');
    const offset = plus > 0 ? parseOffset(t.slice(plus + 1)) : undefined;
    if (plus > 0 && offset === undefined) return { kind: 'named', target: t };
    return { kind: 'kprobe', function: plus > 0 ? t.slice(0, plus) : t, offset: offset ?? 0, retprobe };
  };
const syscall =
  (retprobe: boolean): Parse =>
  (t) =>
    t === '' ? { kind: 'none' } : { kind: 'syscall', syscall: t, retprobe };
const uprobe =
  (retprobe: boolean): Parse =>
  (t) => {
    const colon = t.lastIndexOf(':');
    if (colon <= 0) return t === '' ? { kind: 'none' } : { kind: 'named', target: t };
    const binary = t.slice(0, colon);
    let fn = t.slice(colon + 1);
    let offset = 0;
    const plus = fn.lastIndexOf('+');
    if (plus >= 0) {
      const o = parseOffset(fn.slice(plus + 1));
      if (o === undefined) return { kind: 'named', target: t };
      offset = o;
      fn = fn.slice(0, plus);
    } else {
      const o = parseOffset(fn);
      if (o !== undefined) {
        offset = o;
        fn = '';
      }
    }
    return { kind: 'uprobe', binary, function: fn, offset, retprobe };
  };

/** libbpf's `section_defs` (the subset of names used by tracing and common networking programs). */
const families: Family[] = [
  { name: 'socket', type: 'socket_filter' },
  { name: 'sk_reuseport/migrate', type: 'sk_reuseport', attachType: 'sk_reuseport_select_or_migrate' },
  { name: 'sk_reuseport', type: 'sk_reuseport', attachType: 'sk_reuseport_select' },
  { name: 'kprobe', type: 'kprobe', parse: kprobe(false) },
  { name: 'kretprobe', type: 'kprobe', parse: kprobe(true) },
  { name: 'uprobe', type: 'kprobe', parse: uprobe(false) },
  { name: 'uretprobe', type: 'kprobe', parse: uprobe(true) },
  { name: 'uprobe.s', type: 'kprobe', sleepable: true, parse: uprobe(false) },
  { name: 'uretprobe.s', type: 'kprobe', sleepable: true, parse: uprobe(true) },
  { name: 'kprobe.multi', type: 'kprobe', attachType: 'trace_kprobe_multi', parse: named },
  { name: 'kretprobe.multi', type: 'kprobe', attachType: 'trace_kprobe_multi', parse: named },
  { name: 'uprobe.multi', type: 'kprobe', attachType: 'trace_uprobe_multi', parse: named },
  { name: 'uretprobe.multi', type: 'kprobe', attachType: 'trace_uprobe_multi', parse: named },
  { name: 'ksyscall', type: 'kprobe', parse: syscall(false) },
  { name: 'kretsyscall', type: 'kprobe', parse: syscall(true) },
  { name: 'usdt', type: 'kprobe', parse: named },
  { name: 'tc/ingress', type: 'sched_cls', attachType: 'tcx_ingress' },
  { name: 'tc/egress', type: 'sched_cls', attachType: 'tcx_egress' },
  { name: 'tcx/ingress', type: 'sched_cls', attachType: 'tcx_ingress' },
  { name: 'tcx/egress', type: 'sched_cls', attachType: 'tcx_egress' },
  { name: 'tc', type: 'sched_cls' },
  { name: 'classifier', type: 'sched_cls' },
  { name: 'action', type: 'sched_act' },
  { name: 'tracepoint', type: 'tracepoint', parse: tracepoint },
  { name: 'tp', type: 'tracepoint', parse: tracepoint },
  { name: 'raw_tracepoint', type: 'raw_tracepoint', parse: rawTracepoint },
  { name: 'raw_tp', type: 'raw_tracepoint', parse: rawTracepoint },
  { name: 'raw_tracepoint.w', type: 'raw_tracepoint_writable', parse: rawTracepoint },
  { name: 'raw_tp.w', type: 'raw_tracepoint_writable', parse: rawTracepoint },
  { name: 'tp_btf', type: 'tracing', attachType: 'trace_raw_tp', parse: btf },
  { name: 'fentry', type: 'tracing', attachType: 'trace_fentry', parse: btf },
  { name: 'fmod_ret', type: 'tracing', attachType: 'modify_return', parse: btf },
  { name: 'fexit', type: 'tracing', attachType: 'trace_fexit', parse: btf },
  { name: 'fentry.s', type: 'tracing', attachType: 'trace_fentry', sleepable: true, parse: btf },
  { name: 'fmod_ret.s', type: 'tracing', attachType: 'modify_return', sleepable: true, parse: btf },
  { name: 'fexit.s', type: 'tracing', attachType: 'trace_fexit', sleepable: true, parse: btf },
  { name: 'freplace', type: 'ext', parse: btf },
  { name: 'lsm', type: 'lsm', attachType: 'lsm_mac', parse: btf },
  { name: 'lsm.s', type: 'lsm', attachType: 'lsm_mac', sleepable: true, parse: btf },
  { name: 'lsm_cgroup', type: 'lsm', attachType: 'lsm_cgroup', parse: btf },
  { name: 'iter', type: 'tracing', attachType: 'trace_iter', parse: btf },
  { name: 'iter.s', type: 'tracing', attachType: 'trace_iter', sleepable: true, parse: btf },
  { name: 'syscall', type: 'syscall', sleepable: true },
  { name: 'xdp.frags/devmap', type: 'xdp', attachType: 'xdp_devmap' },
  { name: 'xdp/devmap', type: 'xdp', attachType: 'xdp_devmap' },
  { name: 'xdp.frags/cpumap', type: 'xdp', attachType: 'xdp_cpumap' },
  { name: 'xdp/cpumap', type: 'xdp', attachType: 'xdp_cpumap' },
  { name: 'xdp.frags', type: 'xdp', attachType: 'xdp' },
  { name: 'xdp', type: 'xdp', attachType: 'xdp' },
  { name: 'perf_event', type: 'perf_event' },
  { name: 'lwt_in', type: 'lwt_in' },
  { name: 'lwt_out', type: 'lwt_out' },
  { name: 'lwt_xmit', type: 'lwt_xmit' },
  { name: 'lwt_seg6local', type: 'lwt_seg6local' },
  { name: 'sockops', type: 'sock_ops', attachType: 'cgroup_sock_ops' },
  { name: 'sk_skb/stream_parser', type: 'sk_skb', attachType: 'sk_skb_stream_parser' },
  { name: 'sk_skb/stream_verdict', type: 'sk_skb', attachType: 'sk_skb_stream_verdict' },
  { name: 'sk_skb', type: 'sk_skb' },
  { name: 'sk_msg', type: 'sk_msg', attachType: 'sk_msg_verdict' },
  { name: 'lirc_mode2', type: 'lirc_mode2', attachType: 'lirc_mode2' },
  { name: 'flow_dissector', type: 'flow_dissector', attachType: 'flow_dissector' },
  { name: 'cgroup_skb/ingress', type: 'cgroup_skb', attachType: 'cgroup_inet_ingress' },
  { name: 'cgroup_skb/egress', type: 'cgroup_skb', attachType: 'cgroup_inet_egress' },
  { name: 'cgroup/skb', type: 'cgroup_skb' },
  { name: 'cgroup/dev', type: 'cgroup_device', attachType: 'cgroup_device' },
  { name: 'cgroup/sysctl', type: 'cgroup_sysctl', attachType: 'cgroup_sysctl' },
  { name: 'cgroup/getsockopt', type: 'cgroup_sockopt', attachType: 'cgroup_getsockopt' },
  { name: 'cgroup/setsockopt', type: 'cgroup_sockopt', attachType: 'cgroup_setsockopt' },
  { name: 'cgroup', type: 'cgroup_sock', parse: named },
  { name: 'struct_ops', type: 'struct_ops', parse: named },
  { name: 'struct_ops.s', type: 'struct_ops', sleepable: true, parse: named },
  { name: 'sk_lookup', type: 'sk_lookup', attachType: 'sk_lookup' },
  { name: 'netfilter', type: 'netfilter', attachType: 'netfilter' },
];

// Longest name first, so `xdp/devmap` wins over `xdp` and `uprobe.s` over `uprobe`.
const byLength = [...families].sort((a, b) => b.name.length - a.name.length);

/**
 * What libbpf makes of a program section name: the program type, expected attach type and the
 * attach point. An unknown name gives type `unspec` (libbpf refuses to load it without an
 * explicit type; parsing it is still useful).
 */
export function parseProgramSection(sectionName: string): ProgramSection {
  for (const f of byLength) {
    let target: string | undefined;
    if (sectionName === f.name) target = '';
    else if (sectionName.startsWith(`${f.name}/`)) target = sectionName.slice(f.name.length + 1);
    if (target === undefined) continue;
    // `cgroup/sock_create` etc. keep the whole rest; exact-only families reject extra text.
    const attach: AttachPoint = f.parse !== undefined ? f.parse(target) : target === '' ? { kind: 'none' } : { kind: 'named', target };
    return { type: f.type, expectedAttachType: f.attachType, family: f.name, sleepable: f.sleepable ?? false, attach };
  }
  return { type: 'unspec', expectedAttachType: undefined, family: undefined, sleepable: false, attach: { kind: 'none' } };
}
