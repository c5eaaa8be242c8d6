import { type ScriptType, stringType, u64 } from './script-types.js';

/**
 * Builtin variables the VM gives a meaning (DESIGN.md, "Runtime semantics"): each answers from the
 * event being processed. `probe` is typed per program (its name's length).
 */
export const builtinTypes: Record<string, ScriptType> = {
  /** process id (tgid), from `bpf_get_current_pid_tgid` >> 32: the record's pid, its tgid where the node knows it */
  pid: u64,
  /** thread id, `bpf_get_current_pid_tgid` & 0xffffffff: the record's `common_pid` */
  tid: u64,
  /** user and group id, `bpf_get_current_uid_gid`: known only where the runtime has a view of the node's processes */
  uid: u64,
  gid: u64,
  /** the CPU the record came from */
  cpu: u64,
  /** the record's timestamp (ns) */
  nsecs: u64,
  /** ns since the run started (BEGIN's time) */
  elapsed: u64,
  /** the task name, from the node's saved_cmdlines */
  comm: stringType(16),
  /** an opaque per-pid token (no kernel pointer exists here) */
  curtask: u64,
  /** `bpf_get_prandom_u32` */
  rand: u64,
  /** `bpf_get_current_cgroup_id`: 0 unless the runtime knows the pid's cgroup */
  cgroup: u64,
  /** `bpf_jiffies64` */
  jiffies: u64,
};

/** Builtins of bpftrace that cannot exist over trace records, with why. */
export const refusedBuiltins: Record<string, string> = {
  kstack: 'kstack needs the kernel stack of the running task; a trace record carries none',
  ustack: 'ustack needs the user stack of the running task; a trace record carries none',
  func: 'func names the function of a kprobe or uprobe; tracepoints have none',
  retval: 'retval is the return value of a kretprobe or uretprobe; tracepoints have none',
  cpid: 'cpid is the pid of a child started with -c, which is not supported here',
  username: 'username needs the node\'s user database; print uid instead',
  ctx: 'ctx is the raw context pointer; read fields with args.FIELD',
  args: 'args alone is the whole record; read one field with args.FIELD',
  sarg0: 'sargN reads the stack of a probed function; tracepoints have none',
};

/** `arg0`…`arg9` and `sarg0`…`sarg9` (kprobe and uprobe arguments). */
export function refusedBuiltinOf(name: string): string | undefined {
  if (Object.hasOwn(refusedBuiltins, name)) return refusedBuiltins[name];
  if (/^arg\d+$/.test(name)) return `${name} is an argument of a kprobe or uprobe; a tracepoint's values are args.FIELD`;
  if (/^sarg\d+$/.test(name)) return refusedBuiltins.sarg0;
  return undefined;
}

/** Aggregation functions: only as the value of a map assignment (`@x[k] = count()`). */
export const aggregations = new Set(['count', 'sum', 'min', 'max', 'avg', 'stats', 'hist', 'lhist']);

/** Functions of bpftrace that cannot exist here, with why. */
export const refusedFunctions: Record<string, string> = {
  system: 'system() runs a command on the node; a tracing program never does',
  cat: 'cat() reads files of the node; a tracing program never does',
  signal: 'signal() sends a signal to the traced task, which a recorded event cannot reach',
  override: 'override() changes a kernel function\'s return value, which only kernel BPF can do',
  kstack: 'kstack() needs the kernel stack of the running task; a trace record carries none',
  ustack: 'ustack() needs the user stack of the running task; a trace record carries none',
  ksym: 'ksym() resolves kernel addresses, which a recorded event does not carry',
  usym: 'usym() resolves user addresses, which a recorded event does not carry',
  kaddr: 'kaddr() resolves kernel symbols, which only kernel BPF can use',
  uaddr: 'uaddr() resolves user symbols, which only kernel BPF can use',
  reg: 'reg() reads CPU registers of a kprobe; a trace record carries none',
  ntop: 'ntop() is not supported yet',
  join: 'join() reads an argv array from user memory, which a recorded event does not carry',
  strftime: 'strftime() is not supported yet; printf nsecs instead',
  buf: 'buf() is not supported yet',
  path: 'path() resolves a kernel struct path, which only kernel BPF can do',
  macaddr: 'macaddr() is not supported yet',
  cgroupid: 'cgroupid() resolves a cgroup path on the node, which is not supported here',
  sizeof: 'sizeof() is not supported yet',
  offsetof: 'offsetof() is not supported yet',
  strerror: 'strerror() is not supported yet',
  debugf: 'debugf() writes to the kernel trace pipe; use printf',
  unwatch: 'unwatch() removes a watchpoint; watchpoints are not supported here',
  percpu_kaddr: 'percpu_kaddr() reads kernel memory, which only kernel BPF can do',
  skboutput: 'skboutput() captures packets, which only kernel BPF can do',
  len: 'len() is not supported yet',
  has_key: 'has_key() is not supported yet',
};

/** Statement functions: no value. */
export const statementFunctions = new Set(['printf', 'time', 'print', 'clear', 'zero', 'delete', 'exit']);

/** Every callable name, for "did you mean" hints. */
export const knownFunctions = ['str', 'strncmp', ...aggregations, ...statementFunctions];
