// What helpers see of the node (the agent's view of tracefs) and where a run's outputs go: the
// types of the helper layer that `VmOptions` passes through (vm.ts re-exports them).

/** One output of a run: a ring-buffer or perf record, or a trace_printk line. */
export type VmOutput =
  | { kind: 'ringbuf'; map: string; cpu: number; timestamp: bigint; data: Uint8Array }
  | { kind: 'perf'; map: string; cpu: number; timestamp: bigint; data: Uint8Array }
  | { kind: 'printk'; cpu: number; timestamp: bigint; pid: number; text: string };

/** What helpers ask about the node (the agent's view of tracefs). */
export interface HelperEnvironment {
  /** tgid of a pid, from `saved_tgids`. */
  tgidOf?: (pid: number) => number | undefined;
  /** comm of a pid, from `saved_cmdlines`. */
  commOf?: (pid: number) => string | undefined;
  /** (uid, gid) of a pid, when the agent knows it. */
  uidGidOf?: (pid: number) => readonly [number, number] | undefined;
  /**
   * The id of a pid's cgroup on the unified hierarchy (cgroup v2: the inode number of its
   * directory), for `bpf_get_current_cgroup_id`; undefined when unknown (the helper gives 0).
   */
  cgroupIdOf?: (pid: number) => bigint | number | undefined;
  /**
   * Whether the task `pid` is under the cgroup in slot `idx` of a cgroup array
   * (`bpf_current_task_under_cgroup`); undefined when unknown (the helper answers -EAGAIN, as
   * for an empty slot).
   */
  taskUnderCgroup?: (pid: number, idx: number) => boolean | undefined;
  /**
   * The pid namespace the records' pids are numbered in (tracefs gives pids of the initial
   * namespace, so this is the node's: the agent reads it with `stat /proc/self/ns/pid` when it
   * runs there): `st_dev` and `st_ino`. `bpf_get_ns_current_pid_tgid` answers for it only;
   * without it the helper gives -ENOENT.
   */
  pidNamespace?: { dev: bigint | number; ino: bigint | number };
  /**
   * Sends signal `sig` for `bpf_send_signal` (`thread` false: to the process of `pid`) or
   * `bpf_send_signal_thread` (`thread` true: to the thread `pid`); returns 0 or a negative
   * errno. Absent (the default), the helpers give -EPERM: a replay cannot signal the task that
   * was recorded, and the VM never signals a process by itself.
   */
  sendSignal?: (pid: number, sig: number, thread: boolean) => number;
  /** `CONFIG_HZ` of the recorded kernel, for `bpf_jiffies64` (default 250). */
  hz?: number;
  /**
   * CLOCK_TAI minus the records' clock, ns, for `bpf_ktime_get_tai_ns` (default 0: the record
   * timestamp itself).
   */
  taiOffsetNs?: bigint | number;
  /** The BPF cookie of the attachment (`bpf_get_attach_cookie`); default 0, as with no cookie. */
  attachCookie?: bigint | number;
}
