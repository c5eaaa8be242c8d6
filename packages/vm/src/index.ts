export {
  CONTEXT_REGION,
  MAP_HANDLE_REGION,
  MAX_FRAMES,
  MAX_TAIL_CALLS,
  STACK_FRAME_SIZE,
  STACK_REGION,
  formatAddress,
} from './address.js';
export { isVmError, type RegionKind, VmError, type VmErrorCode, type VmErrorContext, VmFault } from './errors.js';
export { HelperId, helperName } from './helper-ids.js';
export { clearCommCache, HelperAction, type HelperFn, standardHelpers, unwindTestHelper } from './helpers/helpers.js';
export { ArrayMap } from './maps/array-map.js';
export { createMap, type ProgArray } from './maps/create-map.js';
export { Errno, UpdateFlag } from './maps/errno.js';
export { HashMap } from './maps/hash-map.js';
export { BpfMap, type MapContext, type MapSpec, MapType, mapTypeNames } from './maps/map.js';
export { QueueStackMap } from './maps/queue-stack-map.js';
export { RingBuffer, RingbufQuery } from './maps/ring-buffer.js';
export { StackTraceMap } from './maps/stack-trace-map.js';
export {
  InternalOp,
  type LoadDiagnostic,
  type LoadedProgram,
  type LoadOptions,
  type LoadResult,
  loadProgram,
  loadProgramOrThrow,
  type MapRef,
} from './program.js';
export { type HelperEnvironment, RunStatus, type TierCounters, Vm, type VmOptions, type VmOutput, type VmTier } from './vm.js';
export { programDigest } from './wasm/wasm-tier.js';
export {
  decodeTyped,
  type MapSnapshot,
  type SnapshotEntry,
  snapshotMap,
  type TypeDescription,
  type TypedValue,
  typeSize,
} from './maps/snapshot.js';
export {
  createEventRuntime,
  EventRuntime,
  type EventRecord,
  type OutputBatch,
  type RuntimeCounters,
  type RuntimeOptions,
  type TraceRecordLike,
} from './runtime.js';
export { type AssembledVm, loadAssembly } from './load-assembly.js';
