// @probeyard/isa: the eBPF instruction set (RFC 9669): model, encode/decode, assembler, disassembler.
export {
  type AssembledObject,
  type AssembledProgram,
  type AssembleOptions,
  type AssemblerSyntax,
  type AttachPoint,
  assemble,
  assembleInstructions,
  type FieldLayout,
  type FieldRelocation,
  type FieldResolver,
  type MapRelocation,
  parseAttachPoint,
} from './assembler/assemble.js';
export { type MapDeclaration, MapType } from './assembler/maps.js';
export { decode } from './decode.js';
export { encode } from './encode.js';
export { type IsaErrorCode, type IsaErrorContext, IsaError, isIsaError } from './errors.js';
export { disassemble, type FormatOptions, formatConformance, formatInstruction, formatLlvm, jumpTarget, type Syntax } from './format.js';
export { type HelperName, helperId, helperName, helpers } from './helpers.js';
export {
  ConformanceGroup,
  conformanceGroupOf,
  conformanceGroupsOfProgram,
  IsaVersion,
  isaVersionOf,
  isaVersionOfProgram,
} from './info.js';
export {
  type Instruction,
  type InstructionFields,
  imm64,
  placeInstructions,
  slotCount,
  slotTotal,
  splitImm64,
} from './instruction.js';
export {
  AluOp,
  AtomicOp,
  atomicFetch,
  ByteOrder,
  CallSource,
  classMask,
  InsnClass,
  JmpOp,
  Mode,
  Opcode,
  PseudoSource,
  registerCount,
  Size,
  Source,
  sizeBytes,
} from './opcode.js';
export { checkInstruction, validateInstruction } from './validate.js';
