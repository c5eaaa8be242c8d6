/**
 * VM addresses. A 64-bit address is two 32-bit halves: the high half names a memory region,
 * the low half is the byte offset inside it.
 *
 * ```
 *  63                32 31                 0
 * +--------------------+--------------------+
 * |     region id      |    byte offset     |
 * +--------------------+--------------------+
 * ```
 *
 * An access `[reg + off]` stays in the region of `reg`: when `off` carries the offset across the
 * 32-bit boundary the access faults (it would leave its region), it never reaches a neighbour.
 * Region 0 is never mapped, so a NULL pointer (and any small scalar) faults. Region ids are
 * small integers given out by {@link Vm} when it is created: the context (the event record),
 * the stack (8 frames of 512 bytes), each map's value storage, each ring buffer's data area.
 * Map handles (what `lddw rX, map` loads) are not dereferenceable: their high half is
 * {@link MAP_HANDLE_REGION}, outside every region table.
 */

/** Region id of the context (the event record, or the conformance test's memory). */
export const CONTEXT_REGION = 1;
/**
 * Region id of the stack: {@link MAX_FRAMES} frames of {@link STACK_FRAME_SIZE} bytes. Frame 0
 * is the top 512 bytes (its r10 is the end of the region, so an access above r10 faults); each
 * BPF-to-BPF call gets the next 512 bytes below, zeroed.
 */
export const STACK_REGION = 2;
/** Region id of the values of map 0 of a VM (map i: this + i), given in the order of the VM's maps. */
export const FIRST_MAP_REGION = 3;
/** High half of a map handle (a `BPF_PSEUDO_MAP_FD` load); the low half is the map index. */
export const MAP_HANDLE_REGION = 0x7ffffff0;
/**
 * High half of a callback's address (a `BPF_PSEUDO_FUNC` load, what `bpf_loop` takes); the low
 * half is the instruction index of the callback. Like a map handle, not dereferenceable.
 */
export const FUNC_REGION = 0x7ffffff1;
/** Bytes of one stack frame (`MAX_BPF_STACK`). */
export const STACK_FRAME_SIZE = 512;
/** Deepest BPF-to-BPF call chain (`MAX_CALL_FRAMES`). */
export const MAX_FRAMES = 8;
/** r10 of frame 0: the stack grows down from the end of the stack region, one frame per call. */
export const STACK_TOP = STACK_FRAME_SIZE * MAX_FRAMES;
/** Most tail calls one run may make (`MAX_TAIL_CALL_CNT`). */
export const MAX_TAIL_CALLS = 33;

/** Formats a VM address as `0x<region>_<offset>` hex. */
export function formatAddress(lo: number, hi: number): string {
  return `0x${(hi >>> 0).toString(16)}_${(lo >>> 0).toString(16).padStart(8, '0')}`;
}

/** A VM address as one bigint (for errors and the API edge). */
export function addressToBigInt(lo: number, hi: number): bigint {
  return (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
}
