// The helpers a tracepoint program may call beyond the basic set (packages/verifier's
// helper-protos.ts lists them all): queue and stack maps, stack traces, perf counters, the current
// task, signals, more clocks and the attach cookie. Each follows kernel/trace/bpf_trace.c,
// kernel/bpf/helpers.c, stackmap.c or queue_stack_maps.c as far as a replay of trace records in
// user space can: where the kernel would look at something a record does not carry (a call chain,
// a counter, the live task), the helper answers as the kernel does when that thing is absent, or
// asks `vm.environment`. Errors are negative errnos in r0, as 64-bit two's complement.
import { addressToBigInt } from '../address.js';
import { HelperAction, type HelperFn, type HelperHost, pointerArg } from './helper-fn.js';
import { HelperId } from '../helper-ids.js';
import { Errno } from '../maps/errno.js';
import { MapType } from '../maps/map.js';
import { QueueStackMap } from '../maps/queue-stack-map.js';

/** `BPF_F_SKIP_FIELD_MASK`, `BPF_F_USER_STACK`, `BPF_F_FAST_STACK_CMP`, `BPF_F_REUSE_STACKID`, `BPF_F_USER_BUILD_ID`. */
const SKIP_FIELD_MASK = 0xff;
const USER_STACK = 1 << 8;
const FAST_STACK_CMP = 1 << 9;
const REUSE_STACKID = 1 << 10;
const USER_BUILD_ID = 1 << 11;
const STACKID_FLAGS = SKIP_FIELD_MASK | USER_STACK | FAST_STACK_CMP | REUSE_STACKID;
const GET_STACK_FLAGS = SKIP_FIELD_MASK | USER_STACK | USER_BUILD_ID;
/** `BPF_F_CURRENT_CPU` (= `BPF_F_INDEX_MASK`). */
const CURRENT_CPU = 0xffffffff;
/** `sizeof(struct bpf_perf_event_value)`: counter, enabled, running. */
const PERF_EVENT_VALUE_SIZE = 24;
/** `sizeof(struct bpf_pidns_info)`: pid, tgid. */
const PIDNS_INFO_SIZE = 8;
/** `_NSIG`: `valid_signal(sig)` is `sig <= _NSIG`. */
const NSIG = 64;
const DEFAULT_HZ = 250;
/** High half of the `bpf_get_current_task` tokens: the x86-64 direct map (`0xffff888000000000`). */
const TASK_TOKEN_BASE_HI = 0xffff8880;

/** r0 = `value` as an unsigned 64-bit integer (two's complement for negatives). */
function setReturnU64(vm: HelperHost, value: bigint | number): void {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) {
    vm.setReturn64(value % 0x100000000, Math.floor(value / 0x100000000));
    return;
  }
  const u = toU64(value);
  vm.setReturn64(Number(u & 0xffffffffn), Number(u >> 32n));
}

function toU64(value: bigint | number): bigint {
  if (typeof value === 'bigint') return BigInt.asUintN(64, value);
  return Number.isFinite(value) ? BigInt.asUintN(64, BigInt(Math.trunc(value))) : 0n;
}

/** Like `pointerArg`, but a size of 0 needs no memory (`ARG_CONST_SIZE_OR_ZERO`; the pointer may be NULL). */
function bufferArg(vm: HelperHost, reg: number, size: number, what: string): number {
  return size === 0 ? 0 : pointerArg(vm, reg, size, what);
}

/** Zeroes `size` bytes of the buffer r`reg` points at (checked by {@link bufferArg}). */
function clearBuffer(vm: HelperHost, reg: number, at: number, size: number): void {
  if (size > 0) (vm.regionBytes[vm.regHi[reg] as number] as Uint8Array).fill(0, at, at + size);
}

function queueStackArg(vm: HelperHost, what: string): QueueStackMap | undefined {
  const map = vm.mapArg(1);
  if (map instanceof QueueStackMap) return map;
  vm.helperFault(`${what}: r1 is not a queue or stack map`);
  return undefined;
}

/** `bpf_map_push_elem(map, value, flags)`: 0, -E2BIG when full (unless `BPF_EXIST`), -EINVAL for other flags. */
const mapPushElem: HelperFn = (vm) => {
  const map = queueStackArg(vm, 'bpf_map_push_elem');
  if (!map) return HelperAction.fault;
  const v = pointerArg(vm, 2, map.spec.valueSize, 'bpf_map_push_elem value');
  if (v < 0) return HelperAction.fault;
  const flags = vm.regHi[3] !== 0 ? -1 : (vm.regLo[3] as number);
  vm.setReturn(map.push(vm.regionBytes[vm.regHi[2] as number] as Uint8Array, v, flags));
  return HelperAction.next;
};

/** `bpf_map_pop_elem` / `bpf_map_peek_elem(map, value)`: 0, or -ENOENT (empty) with the value zeroed. */
function mapTakeElem(remove: boolean): HelperFn {
  const name = remove ? 'bpf_map_pop_elem' : 'bpf_map_peek_elem';
  return (vm) => {
    const map = queueStackArg(vm, name);
    if (!map) return HelperAction.fault;
    const d = pointerArg(vm, 2, map.spec.valueSize, `${name} value`);
    if (d < 0) return HelperAction.fault;
    vm.setReturn(map.take(vm.regionBytes[vm.regHi[2] as number] as Uint8Array, d, remove));
    return HelperAction.next;
  };
}

/**
 * `bpf_get_stackid(ctx, map, flags)`: -EINVAL for unknown flags; otherwise -EFAULT, the kernel's
 * answer when it cannot fetch a call chain — a trace record has none.
 */
const getStackid: HelperFn = (vm) => {
  const map = vm.mapArg(2);
  if (!map || map.spec.type !== MapType.stackTrace) return vm.helperFault('bpf_get_stackid: r2 is not a stack trace map');
  const bad = vm.regHi[3] !== 0 || ((vm.regLo[3] as number) & ~STACKID_FLAGS) !== 0;
  vm.setReturn(bad ? -Errno.EINVAL : -Errno.EFAULT);
  return HelperAction.next;
};

/**
 * `bpf_get_stack(ctx, buf, size, flags)`: -EINVAL for unknown flags, `BPF_F_USER_BUILD_ID`
 * without `BPF_F_USER_STACK`, or a size that is not a multiple of a frame (8 bytes, 32 with build
 * ids); otherwise -EFAULT (no call chain in a record). The buffer is zeroed either way.
 */
const getStack: HelperFn = (vm) => {
  const size = (vm.regLo[3] as number) >>> 0;
  const at = bufferArg(vm, 2, size, 'bpf_get_stack buffer');
  if (at < 0) return HelperAction.fault;
  const flags = vm.regLo[4] as number;
  const buildId = (flags & USER_BUILD_ID) !== 0;
  const bad =
    vm.regHi[4] !== 0 || (flags & ~GET_STACK_FLAGS) !== 0 || (buildId && (flags & USER_STACK) === 0) || size % (buildId ? 32 : 8) !== 0;
  clearBuffer(vm, 2, at, size);
  vm.setReturn(bad ? -Errno.EINVAL : -Errno.EFAULT);
  return HelperAction.next;
};

/**
 * `get_map_perf_counter`'s checks: -EINVAL for flags beyond the index, -E2BIG for an index past
 * the array (`BPF_F_CURRENT_CPU`: the record's CPU); then -ENOENT, as for an empty slot: the
 * VM's perf event arrays hold no perf events, so there is no counter to read.
 */
function perfCounterError(vm: HelperHost, maxEntries: number, flagsLo: number, flagsHi: number): number {
  if (flagsHi !== 0) return -Errno.EINVAL;
  const index = flagsLo >>> 0 === CURRENT_CPU ? vm.cpu : flagsLo >>> 0;
  return index >= maxEntries ? -Errno.E2BIG : -Errno.ENOENT;
}

/** `bpf_perf_event_read(map, flags)`: the counter, or a negative errno (here always one). */
const perfEventRead: HelperFn = (vm) => {
  const map = vm.mapArg(1);
  if (!map || map.spec.type !== MapType.perfEventArray) return vm.helperFault('bpf_perf_event_read: r1 is not a perf event array');
  vm.setReturn(perfCounterError(vm, map.spec.maxEntries, vm.regLo[2] as number, vm.regHi[2] as number));
  return HelperAction.next;
};

/**
 * `bpf_perf_event_read_value(map, flags, buf, size)`: -EINVAL unless size is 24
 * (`struct bpf_perf_event_value`), then as {@link perfEventRead}; the buffer is zeroed on error.
 */
const perfEventReadValue: HelperFn = (vm) => {
  const map = vm.mapArg(1);
  if (!map || map.spec.type !== MapType.perfEventArray) return vm.helperFault('bpf_perf_event_read_value: r1 is not a perf event array');
  const size = (vm.regLo[4] as number) >>> 0;
  const at = bufferArg(vm, 3, size, 'bpf_perf_event_read_value buffer');
  if (at < 0) return HelperAction.fault;
  const err =
    size !== PERF_EVENT_VALUE_SIZE ? -Errno.EINVAL : perfCounterError(vm, map.spec.maxEntries, vm.regLo[2] as number, vm.regHi[2] as number);
  clearBuffer(vm, 3, at, size);
  vm.setReturn(err);
  return HelperAction.next;
};

/**
 * `bpf_get_current_task()`: an opaque token for the record's task, 0xffff888000000000 +
 * pid × 0x2000 (shaped like a kernel direct-map address; never 0, the same for the same pid).
 * Not a pointer into anything: `probe_read*` through it gives -EFAULT and a zeroed destination,
 * as a read of any address outside the VM's regions does.
 */
const getCurrentTask: HelperFn = (vm) => {
  const pid = vm.pid >>> 0;
  vm.setReturn64((pid * 0x2000) % 0x100000000, TASK_TOKEN_BASE_HI + Math.floor(pid / 0x80000));
  return HelperAction.next;
};

/**
 * `bpf_get_current_cgroup_id()`: `environment.cgroupIdOf(pid)`, else 0 — never a cgroup's id
 * (the root's is 1), so a program can tell "unknown" apart; a record does not name a cgroup.
 */
const getCurrentCgroupId: HelperFn = (vm) => {
  setReturnU64(vm, vm.environment.cgroupIdOf?.(vm.pid) ?? 0);
  return HelperAction.next;
};

/**
 * `bpf_current_task_under_cgroup(map, idx)`: -E2BIG for an index past the cgroup array; else
 * `environment.taskUnderCgroup(pid, idx)` (1 or 0) when the node knows which cgroup user space
 * put in slot idx; else -EAGAIN, the kernel's answer for an empty slot: a replay has no cgroup fds
 * and a record does not say which cgroup its task was in. (libbpf-tools test `!helper(...)`, so an
 * empty slot lets every task through, as it does on a kernel.)
 */
const currentTaskUnderCgroup: HelperFn = (vm) => {
  const map = vm.mapArg(1);
  if (!map || map.spec.type !== MapType.cgroupArray) return vm.helperFault('bpf_current_task_under_cgroup: r1 is not a cgroup array');
  const idx = (vm.regLo[2] as number) >>> 0;
  if (vm.regHi[2] !== 0 || idx >= map.spec.maxEntries) vm.setReturn(-Errno.E2BIG);
  else {
    const under = vm.environment.taskUnderCgroup?.(vm.pid, idx);
    vm.setReturn(under === undefined ? -Errno.EAGAIN : under ? 1 : 0);
  }
  return HelperAction.next;
};

/**
 * `bpf_get_current_ancestor_cgroup_id(level)`: 0, the kernel's answer for a level deeper than the
 * task's cgroup, and never a cgroup's id: a record does not name a cgroup.
 */
const getCurrentAncestorCgroupId: HelperFn = (vm) => {
  vm.setReturn64(0, 0);
  return HelperAction.next;
};

/**
 * `bpf_get_ns_current_pid_tgid(dev, ino, nsdata, size)`: -EINVAL when size is not 8 or dev does
 * not fit a `dev_t` (32 bits); -ENOENT when the VM knows no pid namespace
 * (`environment.pidNamespace`); -EINVAL when (dev, ino) is not that namespace (the kernel's
 * `ns_match` failure); else pid and tgid (the record's, see `environment.pidNamespace`) as two
 * u32 and 0. nsdata is zeroed on error.
 */
const getNsCurrentPidTgid: HelperFn = (vm) => {
  const size = (vm.regLo[4] as number) >>> 0;
  const at = bufferArg(vm, 3, size, 'bpf_get_ns_current_pid_tgid nsdata');
  if (at < 0) return HelperAction.fault;
  let err: number = -Errno.EINVAL;
  if (size === PIDNS_INFO_SIZE && vm.regHi[1] === 0) {
    const ns = vm.environment.pidNamespace;
    if (ns === undefined) err = -Errno.ENOENT;
    else if (
      toU64(ns.dev) === addressToBigInt(vm.regLo[1] as number, 0) &&
      toU64(ns.ino) === addressToBigInt(vm.regLo[2] as number, vm.regHi[2] as number)
    ) {
      const view = vm.regionViews[vm.regHi[3] as number] as DataView;
      view.setUint32(at, vm.pid >>> 0, true);
      view.setUint32(at + 4, (vm.environment.tgidOf?.(vm.pid) ?? vm.pid) >>> 0, true);
      vm.setReturn(0);
      return HelperAction.next;
    }
  }
  clearBuffer(vm, 3, at, size);
  vm.setReturn(err);
  return HelperAction.next;
};

/**
 * `bpf_send_signal(sig)` / `bpf_send_signal_thread(sig)`, in the kernel's order: -EPERM for the
 * idle task (pid 0, a kernel thread) and for init (tgid 1); -EINVAL for an invalid signal
 * (above 64); otherwise `environment.sendSignal(pid, sig, thread)`'s answer, or -EPERM without
 * it: a replay cannot signal the task that was recorded, and the VM never signals anything itself.
 * (Other kernel threads, which the kernel also refuses, cannot be told from a record.)
 */
function sendSignal(thread: boolean): HelperFn {
  return (vm) => {
    const sig = (vm.regLo[1] as number) >>> 0;
    const pid = vm.pid;
    const env = vm.environment;
    if (pid === 0 || (env.tgidOf?.(pid) ?? pid) === 1) vm.setReturn(-Errno.EPERM);
    else if (sig > NSIG) vm.setReturn(-Errno.EINVAL);
    else vm.setReturn(env.sendSignal ? env.sendSignal(pid, sig, thread) : -Errno.EPERM);
    return HelperAction.next;
  };
}

/**
 * `bpf_jiffies64()`, approximated from the record timestamp (the trace clock: ns since boot) and
 * `environment.hz` (default 250): INITIAL_JIFFIES + ts × HZ / 10^9, where INITIAL_JIFFIES is the
 * kernel's boot value `(u32)(-300 × HZ)` (jiffies wrap 5 minutes after boot, on purpose). The
 * kernel's count drifts from that by the ticks it lost or caught up; deltas between records are
 * right to a tick.
 */
const jiffies64: HelperFn = (vm) => {
  const h = vm.environment.hz;
  const hz = h !== undefined && Number.isInteger(h) && h > 0 ? h : DEFAULT_HZ;
  const initial = BigInt((-300 * hz) >>> 0);
  setReturnU64(vm, initial + (addressToBigInt(vm.timeLo, vm.timeHi) * BigInt(hz)) / 1_000_000_000n);
  return HelperAction.next;
};

/** `bpf_ktime_get_tai_ns()`: the record timestamp plus `environment.taiOffsetNs` (default 0). */
const ktimeGetTaiNs: HelperFn = (vm) => {
  const offset = vm.environment.taiOffsetNs;
  if (offset === undefined || offset === 0 || offset === 0n) vm.setReturn64(vm.timeLo, vm.timeHi);
  else setReturnU64(vm, addressToBigInt(vm.timeLo, vm.timeHi) + toU64(offset));
  return HelperAction.next;
};

/** `bpf_get_attach_cookie(ctx)`: `environment.attachCookie`, default 0 (an attachment without a cookie). */
const getAttachCookie: HelperFn = (vm) => {
  setReturnU64(vm, vm.environment.attachCookie ?? 0);
  return HelperAction.next;
};

/** These helpers by kernel id (part of `standardHelpers`). */
export const tracingHelpers: readonly (readonly [number, HelperFn])[] = [
  [HelperId.mapPushElem, mapPushElem],
  [HelperId.mapPopElem, mapTakeElem(true)],
  [HelperId.mapPeekElem, mapTakeElem(false)],
  [HelperId.getStackid, getStackid],
  [HelperId.getStack, getStack],
  [HelperId.perfEventRead, perfEventRead],
  [HelperId.perfEventReadValue, perfEventReadValue],
  [HelperId.getCurrentTask, getCurrentTask],
  // the kernel's is a BTF pointer; here the same token: reads through it fail as kernel reads do
  [HelperId.getCurrentTaskBtf, getCurrentTask],
  [HelperId.currentTaskUnderCgroup, currentTaskUnderCgroup],
  [HelperId.getCurrentAncestorCgroupId, getCurrentAncestorCgroupId],
  [HelperId.getCurrentCgroupId, getCurrentCgroupId],
  [HelperId.getNsCurrentPidTgid, getNsCurrentPidTgid],
  [HelperId.sendSignal, sendSignal(false)],
  [HelperId.sendSignalThread, sendSignal(true)],
  [HelperId.jiffies64, jiffies64],
  [HelperId.ktimeGetTaiNs, ktimeGetTaiNs],
  [HelperId.getAttachCookie, getAttachCookie],
];
