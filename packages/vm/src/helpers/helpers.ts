import { format as formatPrintk } from './printk.js';
import { HelperId } from '../helper-ids.js';
import type { ArrayMap } from '../maps/array-map.js';
import { Errno } from '../maps/errno.js';
import { MapType } from '../maps/map.js';
import { RingBuffer } from '../maps/ring-buffer.js';
import type { LoadedProgram } from '../program.js';
import { HelperAction, type HelperFn, type HelperHost, pointerArg } from './helper-fn.js';
import { tracingHelpers } from './tracing-helpers.js';

export { HelperAction, type HelperFn } from './helper-fn.js';

const BPF_F_CURRENT_CPU = 0xffffffff;
const commCache = new WeakMap<HelperHost, Map<number, Uint8Array>>();

/** Where a helper may read through probe_read*: the record, the stack, map values. */
function readableByProbe(vm: HelperHost, hi: number): boolean {
  const k = vm.regionOf(hi);
  return k === 'context' || k === 'stack' || k === 'map-value' || k === 'ringbuf';
}

/**
 * `bpf_map_lookup_elem`. Exported so that the compiled tier's helper import calls it directly
 * when it is the VM's lookup helper (a call site that sees one function, which the JIT inlines,
 * instead of the call through the helper table that sees every helper).
 */
export const mapLookupElem: HelperFn = (vm) => {
  const map = vm.mapArg(1);
  if (!map) return vm.helperFault('bpf_map_lookup_elem: r1 is not a map');
  const k = pointerArg(vm, 2, map.spec.keySize, 'bpf_map_lookup_elem key');
  if (k < 0) return HelperAction.fault;
  const at = map.lookupFromProgram(vm.regionBytes[vm.regHi[2] as number] as Uint8Array, k, vm.cpu);
  if (at < 0) vm.setReturn64(0, 0);
  else vm.setReturn64(at, map.regionId);
  return HelperAction.next;
};

const mapUpdateElem: HelperFn = (vm) => {
  const map = vm.mapArg(1);
  if (!map) return vm.helperFault('bpf_map_update_elem: r1 is not a map');
  const k = pointerArg(vm, 2, map.spec.keySize, 'bpf_map_update_elem key');
  if (k < 0) return HelperAction.fault;
  const v = pointerArg(vm, 3, map.spec.valueSize, 'bpf_map_update_elem value');
  if (v < 0) return HelperAction.fault;
  const flags = vm.regHi[4] !== 0 ? -1 : (vm.regLo[4] as number);
  vm.setReturn(
    map.updateFromProgram(
      vm.regionBytes[vm.regHi[2] as number] as Uint8Array,
      k,
      vm.regionBytes[vm.regHi[3] as number] as Uint8Array,
      v,
      flags,
      vm.cpu,
    ),
  );
  return HelperAction.next;
};

const mapDeleteElem: HelperFn = (vm) => {
  const map = vm.mapArg(1);
  if (!map) return vm.helperFault('bpf_map_delete_elem: r1 is not a map');
  const k = pointerArg(vm, 2, map.spec.keySize, 'bpf_map_delete_elem key');
  if (k < 0) return HelperAction.fault;
  vm.setReturn(map.deleteFromProgram(vm.regionBytes[vm.regHi[2] as number] as Uint8Array, k));
  return HelperAction.next;
};

/** probe_read, probe_read_kernel, probe_read_user: (dst, size, unsafe_ptr). */
/** Counts a failed probe read as kernel or user memory (see `Vm.kernelReadsFailed`). */
function countFailedRead(vm: HelperHost, user: boolean): void {
  if (user) vm.userReadsFailed++;
  else vm.kernelReadsFailed++;
}

/** probe_read and its _kernel/_user forms: copy size bytes, or -EFAULT and zeros. */
const probeRead = (user: boolean): HelperFn => (vm) => {
  const size = vm.regLo[2] as number;
  if (size < 0) return vm.helperFault(`probe_read: size ${size >>> 0} is too large`);
  const d = pointerArg(vm, 1, size, 'probe_read destination');
  if (d < 0) return HelperAction.fault;
  const dst = vm.regionBytes[vm.regHi[1] as number] as Uint8Array;
  const sLo = vm.regLo[3] as number;
  const sHi = vm.regHi[3] as number;
  const s = readableByProbe(vm, sHi) ? vm.resolve(sLo, sHi, size) : -1;
  if (s < 0) {
    dst.fill(0, d, d + size);
    countFailedRead(vm, user);
    vm.setReturn(-Errno.EFAULT);
    return HelperAction.next;
  }
  dst.set((vm.regionBytes[sHi] as Uint8Array).subarray(s, s + size), d);
  vm.setReturn(0);
  return HelperAction.next;
};

/** probe_read_str and its _kernel/_user forms: copy up to size-1 bytes and a NUL. */
const probeReadStr = (user: boolean): HelperFn => (vm) => {
  const size = vm.regLo[2] as number;
  if (size < 0) return vm.helperFault(`probe_read_str: size ${size >>> 0} is too large`);
  const d = pointerArg(vm, 1, size, 'probe_read_str destination');
  if (d < 0) return HelperAction.fault;
  if (size === 0) {
    vm.setReturn(0);
    return HelperAction.next;
  }
  const dst = vm.regionBytes[vm.regHi[1] as number] as Uint8Array;
  const sLo = vm.regLo[3] as number;
  const sHi = vm.regHi[3] as number;
  const s = readableByProbe(vm, sHi) ? vm.resolve(sLo, sHi, 1) : -1;
  if (s >= 0) {
    const src = vm.regionBytes[sHi] as Uint8Array;
    const end = vm.regionLength[sHi] as number;
    let n = 0;
    while (n < size - 1 && s + n < end && src[s + n] !== 0) n++;
    const terminated = n === size - 1 || (s + n < end && src[s + n] === 0);
    if (terminated) {
      for (let i = 0; i < n; i++) dst[d + i] = src[s + i] as number;
      dst[d + n] = 0;
      vm.setReturn(n + 1);
      return HelperAction.next;
    }
  }
  dst.fill(0, d, d + size);
  countFailedRead(vm, user);
  vm.setReturn(-Errno.EFAULT);
  return HelperAction.next;
};

const ktimeGetNs: HelperFn = (vm) => {
  vm.setReturn64(vm.timeLo, vm.timeHi);
  return HelperAction.next;
};

const tracePrintk: HelperFn = (vm) => {
  const size = vm.regLo[2] as number;
  const f = pointerArg(vm, 1, size, 'bpf_trace_printk format');
  if (f < 0) return HelperAction.fault;
  const text = formatPrintk(vm, vm.regionBytes[vm.regHi[1] as number] as Uint8Array, f, size);
  if (text === undefined) {
    vm.setReturn(-Errno.EINVAL);
    return HelperAction.next;
  }
  vm.output({ kind: 'printk', cpu: vm.cpu, timestamp: vm.timestamp, pid: vm.pid, text });
  vm.setReturn(text.length + 1);
  return HelperAction.next;
};

const getPrandomU32: HelperFn = (vm) => {
  let x = vm.randomState;
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  vm.randomState = x;
  vm.setReturn64(x, 0);
  return HelperAction.next;
};

const getSmpProcessorId: HelperFn = (vm) => {
  vm.setReturn64(vm.cpu, 0);
  return HelperAction.next;
};

const tailCall: HelperFn = (vm) => {
  const map = vm.mapArg(2);
  if (!map || map.spec.type !== MapType.progArray) {
    return vm.helperFault('bpf_tail_call: r2 is not a program array');
  }
  const index = (vm.regLo[3] as number) >>> 0;
  const target =
    index < map.spec.maxEntries ? (map as ArrayMap<LoadedProgram>).slots[index] : undefined;
  if (target === undefined || vm.tailCalls >= 33 || vm.frame !== 0) {
    // the kernel falls through to the next instruction
    vm.setReturn(-Errno.ENOENT);
    return HelperAction.next;
  }
  vm.tailCalls++;
  vm.tailTarget = target;
  return HelperAction.tailCall;
};

const getCurrentPidTgid: HelperFn = (vm) => {
  const tgid = vm.environment.tgidOf?.(vm.pid) ?? vm.pid;
  vm.setReturn64(vm.pid, tgid);
  return HelperAction.next;
};

const getCurrentUidGid: HelperFn = (vm) => {
  const ids = vm.environment.uidGidOf?.(vm.pid);
  if (ids === undefined) vm.setReturn(-Errno.EINVAL);
  else vm.setReturn64(ids[0], ids[1]);
  return HelperAction.next;
};

const getCurrentComm: HelperFn = (vm) => {
  const size = vm.regLo[2] as number;
  const d = pointerArg(vm, 1, size, 'bpf_get_current_comm buffer');
  if (d < 0) return HelperAction.fault;
  let cache = commCache.get(vm);
  if (!cache) {
    cache = new Map();
    commCache.set(vm, cache);
  }
  let comm = cache.get(vm.pid);
  if (!comm) {
    const name = vm.environment.commOf?.(vm.pid) ?? (vm.pid === 0 ? '<idle>' : '<...>');
    comm = new TextEncoder().encode(name).subarray(0, 15);
    cache.set(vm.pid, comm);
  }
  const dst = vm.regionBytes[vm.regHi[1] as number] as Uint8Array;
  dst.fill(0, d, d + size);
  if (size > 0) dst.set(comm.subarray(0, size - 1), d);
  vm.setReturn(0);
  return HelperAction.next;
};

const perfEventOutput: HelperFn = (vm) => {
  const map = vm.mapArg(2);
  if (!map || map.spec.type !== MapType.perfEventArray) {
    return vm.helperFault('bpf_perf_event_output: r2 is not a perf event array');
  }
  const flagsLo = (vm.regLo[3] as number) >>> 0;
  const index = flagsLo === BPF_F_CURRENT_CPU ? vm.cpu : flagsLo;
  const size = vm.regLo[5] as number;
  const at = pointerArg(vm, 4, size, 'bpf_perf_event_output data');
  if (at < 0) return HelperAction.fault;
  if (index >= map.spec.maxEntries) {
    vm.setReturn(-Errno.E2BIG);
    return HelperAction.next;
  }
  const data = (vm.regionBytes[vm.regHi[4] as number] as Uint8Array).slice(at, at + size);
  vm.output({ kind: 'perf', map: map.name, cpu: index, timestamp: vm.timestamp, data });
  vm.setReturn(0);
  return HelperAction.next;
};

function ringbufArg(vm: HelperHost, what: string): RingBuffer | undefined {
  const map = vm.mapArg(1);
  if (map instanceof RingBuffer) return map;
  vm.helperFault(`${what}: r1 is not a ring buffer`);
  return undefined;
}

const ringbufOutput: HelperFn = (vm) => {
  const rb = ringbufArg(vm, 'bpf_ringbuf_output');
  if (!rb) return HelperAction.fault;
  const size = vm.regLo[3] as number;
  const at = pointerArg(vm, 2, size, 'bpf_ringbuf_output data');
  if (at < 0) return HelperAction.fault;
  vm.setReturn(rb.output(vm.regionBytes[vm.regHi[2] as number] as Uint8Array, at, size));
  return HelperAction.next;
};

const ringbufReserve: HelperFn = (vm) => {
  const rb = ringbufArg(vm, 'bpf_ringbuf_reserve');
  if (!rb) return HelperAction.fault;
  const size = vm.regHi[2] !== 0 ? -1 : (vm.regLo[2] as number);
  const at = size > 0 ? rb.reserve(size) : -1;
  if (at < 0) vm.setReturn64(0, 0);
  else vm.setReturn64(at, rb.regionId);
  return HelperAction.next;
};

function ringbufCommit(discard: boolean): HelperFn {
  const name = discard ? 'bpf_ringbuf_discard' : 'bpf_ringbuf_submit';
  return (vm) => {
    const hi = vm.regHi[1] as number;
    const lo = vm.regLo[1] as number;
    const rb = vm.maps.find((m) => m.regionId === hi && hi !== 0);
    if (!(rb instanceof RingBuffer) || !rb.commit(lo >>> 0, discard)) {
      return vm.helperFault(`${name}: r1 is not an outstanding ring buffer reservation`, [lo, hi]);
    }
    vm.setReturn64(0, 0);
    return HelperAction.next;
  };
}

const ringbufQuery: HelperFn = (vm) => {
  const rb = ringbufArg(vm, 'bpf_ringbuf_query');
  if (!rb) return HelperAction.fault;
  vm.setReturn(rb.query(vm.regLo[2] as number));
  return HelperAction.next;
};

/**
 * `bpf_loop` is run by each tier itself (its callback is a BPF-to-BPF call per iteration: see
 * Vm.interpret and compile-wasm.ts's emitLoop, for a call by id and a `callx` alike); this entry
 * makes the id known at load and is never called.
 */
const loopOutsideInterpreter: HelperFn = (vm) => vm.helperFault('bpf_loop: reached as a plain helper (each tier runs it itself)');

/** The helpers every VM has unless told otherwise, by kernel helper id. */
export const standardHelpers: ReadonlyMap<number, HelperFn> = new Map<number, HelperFn>([
  [HelperId.mapLookupElem, mapLookupElem],
  [HelperId.mapUpdateElem, mapUpdateElem],
  [HelperId.mapDeleteElem, mapDeleteElem],
  [HelperId.probeRead, probeRead(false)],
  [HelperId.probeReadKernel, probeRead(false)],
  [HelperId.probeReadUser, probeRead(true)],
  [HelperId.probeReadStr, probeReadStr(false)],
  [HelperId.probeReadKernelStr, probeReadStr(false)],
  [HelperId.probeReadUserStr, probeReadStr(true)],
  [HelperId.ktimeGetNs, ktimeGetNs],
  [HelperId.ktimeGetBootNs, ktimeGetNs],
  [HelperId.ktimeGetCoarseNs, ktimeGetNs],
  [HelperId.tracePrintk, tracePrintk],
  [HelperId.getPrandomU32, getPrandomU32],
  [HelperId.getSmpProcessorId, getSmpProcessorId],
  [HelperId.tailCall, tailCall],
  [HelperId.getCurrentPidTgid, getCurrentPidTgid],
  [HelperId.getCurrentUidGid, getCurrentUidGid],
  [HelperId.getCurrentComm, getCurrentComm],
  [HelperId.perfEventOutput, perfEventOutput],
  [HelperId.ringbufOutput, ringbufOutput],
  [HelperId.ringbufReserve, ringbufReserve],
  [HelperId.ringbufSubmit, ringbufCommit(false)],
  [HelperId.ringbufDiscard, ringbufCommit(true)],
  [HelperId.ringbufQuery, ringbufQuery],
  [HelperId.loop, loopOutsideInterpreter],
  ...tracingHelpers,
]);

/** Forgets cached `comm`s (call when the node's saved_cmdlines changed). */
export function clearCommCache(vm: HelperHost): void {
  commCache.delete(vm);
}

/**
 * uBPF's conformance test helper ("unwind", id 5 in bpf_conformance): returns r1, and when
 * that is 0 ends the run with r0 = 0. Only for conformance harnesses: id 5 is
 * `bpf_ktime_get_ns` in the kernel.
 */
export const unwindTestHelper: HelperFn = (vm) => {
  vm.setReturn64(vm.regLo[1] as number, vm.regHi[1] as number);
  return vm.regLo[1] === 0 && vm.regHi[1] === 0 ? HelperAction.exit : HelperAction.next;
};
