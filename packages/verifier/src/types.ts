// Public input and output types of `verify`.
import { BpfMapType, type EventFormat } from '@probeyard/formats';

/** Map types the verifier knows (`enum bpf_map_type`): packages/formats' table, shared with packages/vm. */
export const MapType = BpfMapType;
export type MapType = BpfMapType;

/** A map the program refers to (`struct bpf_map_def`): by fd or index in `lddw rX, map[fd]`. */
export interface MapDef {
  type: number;
  keySize: number;
  valueSize: number;
  maxEntries: number;
  name?: string;
  /** Read-only for the program (`BPF_F_RDONLY_PROG`, `.rodata`). */
  readonly?: boolean;
  /**
   * The value of a read-only map frozen before load (`BPF_MAP_FREEZE`, as libbpf freezes
   * `.rodata`): loads from it at a known offset are known constants, as in the kernel.
   */
  frozen?: Uint8Array;
}

/**
 * Byte offsets of the 4-byte context fields that hold packet pointers (`struct xdp_md`'s
 * `data`, `data_end`, `data_meta`). A 4-byte read of one gives `PTR_TO_PACKET`,
 * `PTR_TO_PACKET_END` or `PTR_TO_PACKET_META`; any other read or write touching one is refused.
 */
export interface PacketSlots {
  data: number;
  dataEnd: number;
  meta?: number;
}

/**
 * What `r1` points to at entry.
 * - `tracepoint`: a `BPF_PROG_TYPE_TRACEPOINT` record. Without `event` only the kernel's rule
 *   applies (read-only, aligned, offsets 8 up to 8192); with the event's `format` every access
 *   must also fall inside one field of the record, and each is reported.
 * - `xdp`: a `BPF_PROG_TYPE_XDP` context (`struct xdp_md`, 24 bytes, read-only, 4-byte reads;
 *   `data`, `data_end`, `data_meta` at 0, 4, 8 are packet pointers; `egress_ifindex` is refused
 *   as for a program not attached to a devmap). Helpers are still checked against the tracing
 *   prototypes.
 * - `raw`: a context of `size` bytes, any aligned read (and writes when `writable`), no report;
 *   with `packet`, those slots are packet pointers as for `xdp`; with `legacyPacketLoads`, the
 *   socket-filter instructions `BPF_LD_[ABS|IND]` are allowed (r6 must be the context).
 */
export type ContextSpec =
  | { kind: 'tracepoint'; event?: EventFormat }
  | { kind: 'xdp' }
  | { kind: 'raw'; size: number; writable?: boolean; packet?: PacketSlots; legacyPacketLoads?: boolean };

/** An initial value for a register (used by conformance harnesses and tests). */
export type InitialReg =
  | { type: 'not_init' }
  | { type: 'scalar'; umin?: bigint; umax?: bigint; smin?: bigint; smax?: bigint }
  | { type: 'ctx'; offset?: number }
  | { type: 'stack'; offset: number }
  | { type: 'map_ptr'; map: number }
  | { type: 'map_value'; map: number; offset?: number; maybeNull?: boolean }
  /**
   * PTR_TO_PACKET (or _META): `offset` fixed bytes past `data`, plus a variable part in
   * [varMin, varMax] (signed) when given; `range` bytes from `data` known to be inside the packet.
   */
  | { type: 'packet' | 'packet_meta'; offset?: number; range?: number; varMin?: bigint; varMax?: bigint }
  /** PTR_TO_PACKET_END */
  | { type: 'packet_end' };

export interface VerifyOptions {
  /** Maps by fd/index as used in `lddw` (src_reg 1 or 2). */
  maps?: ReadonlyMap<number, MapDef> | readonly (MapDef | undefined)[];
  /** The context layout; default `{ kind: 'tracepoint' }`. */
  context?: ContextSpec;
  /** Root semantics (default true); false applies the kernel's unprivileged rules. */
  privileged?: boolean;
  /** Reads of never-written stack bytes (the kernel allows them with CAP_PERFMON). Default: `privileged`. */
  allowUninitStack?: boolean;
  /** Reject `div`/`mod` by a register that may be zero (BPF defines it; the kernel allows it). Default false. */
  rejectDivisionByZero?: boolean;
  /**
   * Skip the 512-byte limit on the combined stack of a call chain (each frame is still limited to
   * 512). Linux 6.13+ on x86-64 gives tracing programs a private stack and skips it. Default false.
   */
  privateStack?: boolean;
  /**
   * Precision (default true): scalars that decide nothing compare as "any scalar" at prune points,
   * and callback loops widen them (see precision.ts). false compares every scalar by range, for
   * differential tests of the pruning itself.
   */
  precision?: boolean;
  /** 0 (default): no log; 1: instructions and states at branches; 2: state after every instruction. */
  logLevel?: 0 | 1 | 2;
  /** Maximum log lines kept (default 100,000). */
  logLimit?: number;
  /** Processed-instruction limit (default 1,000,000, the kernel's `BPF_COMPLEXITY_LIMIT_INSNS`). */
  insnLimit?: number;
  /** Wall-clock limit in milliseconds (default 60,000); exceeding it rejects the program. */
  timeLimitMs?: number;
  /** Initial registers r0-r9 (default: r1 the context, the others not initialized). */
  initialRegs?: Readonly<Record<number, InitialReg>>;
  /** Stack bytes (negative offsets from r10) that hold unknown data at entry (default none). */
  initialStackBytes?: readonly number[];
  /**
   * Instructions where a path ends without being checked further (a harness hook: conformance
   * suites compile their `assume` statements to a jump there).
   */
  stopAt?: readonly number[];
}

/** One problem found, in the style of the kernel verifier log. */
export interface Diagnostic {
  insnIndex: number;
  /** The instruction's text (`r0 = *(u32 *)(r1 +8)`). */
  insnText: string;
  /** The kernel-like reason (`R1 invalid mem access 'scalar'`). */
  message: string;
}

/** One read of the tracepoint record, resolved to a field of the event. */
export interface FieldAccess {
  insnIndex: number;
  /** `system/name` of the event. */
  event: string;
  /** The field the bytes belong to. */
  field: string;
  offset: number;
  size: number;
  /** Byte offset of the access inside the field (0 when it starts at the field). */
  fieldOffset: number;
}

export interface VerifyStats {
  insnsProcessed: number;
  /** States stored at prune points. */
  states: number;
  peakStates: number;
  /** States pruned because an explored state covered them. */
  prunedStates: number;
  timeMs: number;
}

export interface VerifyResult {
  ok: boolean;
  /** Empty when accepted; the first error otherwise (the kernel stops at the first error). */
  diagnostics: Diagnostic[];
  stats: VerifyStats;
  /** Every distinct ctx read, sorted by instruction. */
  contextAccesses: FieldAccess[];
  /**
   * `probe_read*` calls whose source is a plain number rather than a pointer the program holds
   * (the record, the stack, a map value): reads of kernel or user memory, which a userspace
   * runtime cannot see. By instruction, with the helper id.
   */
  outsideReads?: { insnIndex: number; helper: number }[];
  /** The per-instruction log when `logLevel` > 0. */
  log: string[];
  /**
   * Per instruction: bit 0 reached, bit 1 fall-through edge taken, bit 2 jump edge taken
   * (for conditional jumps). Lets a caller find branches that can never go one way.
   */
  coverage: Uint8Array;
  /**
   * Accepted as Linux accepts it, but not runnable as written: today a tracepoint ctx read at a
   * negative offset (Linux 6.18 allows it and reads the bytes before the record; packages/vm
   * faults it). Empty for most programs.
   */
  warnings: Diagnostic[];
}
