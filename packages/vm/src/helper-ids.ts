import { helperName as isaHelperName } from '@probeyard/isa';

/**
 * Kernel helper ids (`enum bpf_func_id`, `BPF_FUNC_*`) of the helpers the VM provides.
 */
export const HelperId = {
  mapLookupElem: 1,
  mapUpdateElem: 2,
  mapDeleteElem: 3,
  probeRead: 4,
  ktimeGetNs: 5,
  tracePrintk: 6,
  getPrandomU32: 7,
  getSmpProcessorId: 8,
  tailCall: 12,
  getCurrentPidTgid: 14,
  getCurrentUidGid: 15,
  getCurrentComm: 16,
  perfEventRead: 22,
  perfEventOutput: 25,
  getStackid: 27,
  getCurrentTask: 35,
  currentTaskUnderCgroup: 37,
  probeReadStr: 45,
  perfEventReadValue: 55,
  getStack: 67,
  getCurrentCgroupId: 80,
  mapPushElem: 87,
  mapPopElem: 88,
  mapPeekElem: 89,
  sendSignal: 109,
  probeReadUser: 112,
  probeReadKernel: 113,
  probeReadUserStr: 114,
  probeReadKernelStr: 115,
  sendSignalThread: 117,
  jiffies64: 118,
  getNsCurrentPidTgid: 120,
  getCurrentAncestorCgroupId: 123,
  ktimeGetBootNs: 125,
  ringbufOutput: 130,
  ringbufReserve: 131,
  ringbufSubmit: 132,
  ringbufDiscard: 133,
  ringbufQuery: 134,
  getCurrentTaskBtf: 158,
  ktimeGetCoarseNs: 160,
  getAttachCookie: 174,
  loop: 181,
  ktimeGetTaiNs: 208,
} as const;
export type HelperId = (typeof HelperId)[keyof typeof HelperId];


/** The kernel's name of helper `id` (`bpf_map_lookup_elem`, from packages/isa's table), or `helper #<id>`. */
export function helperName(id: number): string {
  const name = isaHelperName(id);
  return name === undefined ? `helper #${id}` : `bpf_${name}`;
}
