// Public API of @probeyard/runtime: the join of compat and vm.
export { isRuntimeError, RuntimeError, type RuntimeErrorCode, type RuntimeErrorContext } from './errors.js';
export {
  type LoadedSpecProgram,
  type LoadSpecOptions,
  type LoadForProfileOptions,
  type LoadOutcome,
  type LoadFault,
  type Refusal,
  LoadedSpec,
  loadSpec,
  loadedMaxEntries,
  DEFAULT_STACK_TRACE_ENTRIES,
  loadForProfile,
  mapMemoryBytes,
} from './load-spec.js';
export { type OutputBounds, OutputQueue } from './output-queue.js';
export { type TargetCounters, type TargetFault, type DispatchRunOptions, AttachedTarget, Dispatcher } from './dispatcher.js';
export { resolveDisplayHint, unitOfMapName, slotsMember } from './display.js';
export { type ScriptSessionOptions, type ScriptRunOptions, ScriptSession } from './script-session.js';
export {
  type JsonValue,
  type SnapshotEntryJson,
  type MapSnapshotJson,
  type MapSnapshotPayload,
  type OutputEventJson,
  type EventsPayload,
  type CountersPayload,
  type OutputKind,
  type OutputPayload,
  parseJsonValue,
  parseMapSnapshotPayload,
  parseEventsPayload,
  parseCountersPayload,
  parseOutputPayload,
} from './payloads.js';
export {
  type MapSnapshotOptions,
  jsonOfInteger,
  jsonOfTyped,
  untypedInteger,
  decodeBytes,
  sumCounters,
  encodeSnapshotMap,
  encodeMapSnapshot,
  encodeEvents,
  encodeCounters,
} from './encode.js';
export {
  type HistogramBucket,
  log2Label,
  linearLabel,
  log2Bucket,
  linearBucket,
  linearSlotCount,
  histogramBuckets,
  log2Buckets,
  linearBuckets,
  barWidth,
  formatBuckets,
} from './draw/buckets.js';
export {
  type HistogramSeries,
  histogramSeries,
  integerOf,
  entryInteger,
  keyMembers,
  keyText,
  memberText,
  compareKeys,
} from './draw/histogram-data.js';
export { type DrawMapsOptions, drawMap, drawMaps, valueText } from './draw/draw-maps.js';
export { formatOutputEvent, traceSeconds } from './draw/events.js';
export { type BucketView, type MergedMapView, histogramKinds, mergeSnapshots, slotLabel } from './draw/merge-maps.js';
