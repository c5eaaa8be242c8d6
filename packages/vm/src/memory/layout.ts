import { MAX_FRAMES, STACK_FRAME_SIZE } from '../address.js';

/**
 * Layout of the compiled tier's linear memory (one `WebAssembly.Memory` per {@link Vm}). The
 * interpreter, the helpers and the maps use the same bytes through typed-array views, so both
 * tiers see one state and nothing is copied per run.
 *
 * ```
 *     0  r0..r10 low halves  (Int32Array, the Vm's regLo)
 *    44  fast-loop entries   (i32, see FAST_LOOPS_ADDR)
 *    48  r0..r10 high halves (Int32Array, the Vm's regHi)
 *    96  run state: pc, n, frame, kind, faultBase, faultSize, region count, budget
 *   128  region lowest byte  [256 x i32]  (the Vm's regionLow)
 *  1152  region length       [256 x i32]  (the Vm's regionLength)
 *  2176  region base         [256 x i32]  (linear address of byte 0 of each region)
 *  3200  misc state: the current CPU (see Misc)
 *  4096  the stack: 8 frames of 512 bytes (region 2)
 *  8192  each map's storage, 8-byte aligned: its values (the map's region), then, for a hash
 *        map, its index (buckets, then the keys arena: maps/hash-table.ts), which compiled
 *        lookups probe and no program address reaches; then the staged pages (page-stage.ts);
 *        then the context (the event record), last
 * ```
 */
export const REG_LO_ADDR = 0;
/**
 * Entries into the fast copy of a versioned self-loop (compile-wasm.ts, versionPlan), an i32
 * counter that wraps, in the 4 bytes between the halves' 11 slots: for tests and the benchmark.
 */
export const FAST_LOOPS_ADDR = 44;
export const REG_HI_ADDR = 48;
export const STATE_ADDR = 96;
/** Byte offsets inside the run state (i32 each). */
export const State = {
  pc: 0,
  n: 4,
  frame: 8,
  kind: 12,
  faultBase: 16,
  faultSize: 20,
  regionCount: 24,
  budget: 28,
} as const;
export const MAX_REGIONS = 256;
export const LOW_ADDR = 128;
export const LEN_ADDR = LOW_ADDR + MAX_REGIONS * 4;
export const BASE_ADDR = LEN_ADDR + MAX_REGIONS * 4;
/** State besides the run state that compiled code reads (i32 each; {@link Misc}). */
export const MISC_ADDR = BASE_ADDR + MAX_REGIONS * 4;
/** Byte offsets inside the misc state. */
export const Misc = {
  /** The current event's CPU (`Vm.cpu`): per-CPU map lookups compiled inline. */
  cpu: 0,
} as const;
export const STACK_ADDR = 4096;
export const STACK_BYTES = STACK_FRAME_SIZE * MAX_FRAMES;
export const MAPS_ADDR = STACK_ADDR + STACK_BYTES;
export const PAGE = 65536;

/** Why compiled code stopped early (`State.kind`); helper actions are `ABORT_HELPER + action`. */
export const AbortKind = {
  memory: 1,
  budget: 2,
  callDepth: 3,
  /** bpf_loop's r2 is not one of the program's callback addresses. */
  loopCallback: 4,
  helper: 16,
} as const;

/** Flags of a compiled module's `start` entry (its 4th argument; compile-wasm.ts). */
export const StartFlags = {
  /** Zero frame 0 (the 512 bytes below the stack top) before the run. */
  zeroFrame: 1,
  /**
   * Store every register on a normal exit from frame 0; without it only those the program may
   * write (writtenRegisters) and r2: the VM passes it clear when the register file already holds
   * the others' start values (the same program's last run started fresh and exited normally).
   */
  full: 2,
} as const;

/** The highest budget the compiled tier counts in an i32 (above it the interpreter runs). */
export const MAX_COMPILED_BUDGET = 0x7f000000;
