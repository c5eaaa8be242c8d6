// Public API of @probeyard/verifier.
export { VerifierError, type VerifierErrorCode, type VerifierErrorContext, isVerifierError } from './errors.js';
export {
  type Program,
  type RawInsn,
  MAX_PROGRAM_INSNS,
  decodeProgram,
  encodeInsns,
  parseHexProgram,
} from './program.js';
export { formatInsn, insnTextOf } from './insn-text.js';
export { type HelperProto, Arg, Ret, helperProto, helperProtos, helperName } from './helper-protos.js';
export {
  MapType,
  type MapDef,
  type ContextSpec,
  type PacketSlots,
  type InitialReg,
  type VerifyOptions,
  type Diagnostic,
  type FieldAccess,
  type VerifyStats,
  type VerifyResult,
} from './types.js';
export { sanitizeVerified } from './sanitize.js';
export { verify, DEFAULT_INSN_LIMIT, MAX_CALL_FRAMES, MAX_STACK_BYTES, PERF_MAX_TRACE_SIZE } from './verify.js';
export { type LinkedProgram, linkObjectProgram, POISON_CALL_KFUNC_BASE } from './object-program.js';
