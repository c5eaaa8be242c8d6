// Public API of @probeyard/compat: kernel compatibility without an ABI.
export { CompatError, type CompatErrorCode, type CompatErrorContext, isCompatError } from './errors.js';
export {
  type EventLayout,
  type LayoutField,
  layoutOf,
  formatOfLayout,
  layoutFieldOf,
  layoutKey,
  layoutHash,
} from './event-layout.js';
export {
  type ProgramSpec,
  type SpecProgram,
  type SpecMap,
  type SpecGlobal,
  type SpecAttach,
  type SpecFieldRelocation,
  type FieldRelocationKind,
  type FieldNameSource,
  type BuiltField,
  type ValueType,
  type ReadProgramOptions,
  readProgramSpec,
  valueTypeOfBtf,
  displayHintsOfBtf,
} from './program-spec.js';
export {
  type DisplayHint,
  type DisplayCommon,
  type DisplayKind,
  type Log2Bucketing,
  displayKinds,
  parseDisplayHint,
  parseDisplayTag,
  displayTagPrefix,
} from './display-hint.js';
export {
  type RuntimeProbe,
  type ScriptAction,
  type ScriptPrintfArg,
  type SpecScript,
  runtimeProbeOf,
  runtimeProbeSection,
} from './script-spec.js';
export {
  type PrintfConversion,
  type PrintfSegment,
  parsePrintf,
  formatPrintf,
  formatIntegerConversion,
  formatStringConversion,
} from './script-printf.js';
export { type ProgramSpecJson, specToJson, specFromJson } from './spec-json.js';
export {
  ABI_TAG,
  type Manifest,
  type ManifestField,
  type NamedAccess,
  type PinnedAccess,
  buildManifest,
  formatManifest,
  programAccesses,
  helpersOf,
  mapDefsOf,
  attachKey,
} from './manifest.js';
export {
  type KernelProfile,
  type ProfileSource,
  type ProfileMeta,
  profileOfFormatSet,
  profileOfFiles,
  profileOfTraceDat,
  profileFormat,
  findProfileEvent,
  readProfileTarball,
  parseUname,
  parseKernelVersionFile,
  isCompleteSource,
  completenessOf,
} from './kernel-profile.js';
export {
  POISON_HELPER_ID,
  type UnresolvedKind,
  type InsnPatch,
  type Fixup,
  type PinnedMismatch,
  type ProgramFixups,
  type FixupPlan,
  computeFixups,
  applyFixups,
} from './fixups.js';
export {
  type VerdictStatus,
  type ReasonKind,
  type VerdictReason,
  type ProgramVerdict,
  type Verdict,
  type VerdictSummary,
  type CompatOptions,
  checkCompat,
  formatVerdict,
  verdictHeadline,
  verdictSummary,
  worseStatus,
} from './verdict.js';
export {
  type FieldChangeKind,
  type FieldChange,
  type EventDiff,
  diffEventFormats,
  diffProfiles,
  formatEventDiffs,
} from './format-diff.js';
export { parseRodataAssignment, type RodataValue, setRodata } from './rodata.js';
