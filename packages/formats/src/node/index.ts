

// Kernel profile from an events/ directory.
export { readEventsTree } from './events-tree.js';

// trace.dat files, `probeyard report`, the live tracefs feed.
export { FileByteSource } from './file-byte-source.js';
export {
  type TraceDatFile,
  type OpenTraceDatFileOptions,
  openTraceDatFile,
  openTraceDatStream,
  parseTraceDatFormat,
} from './trace-dat-file.js';
export { ChunkPrefetcher, prefetchChunks } from './chunk-prefetch.js';
export { type ReportSink, writeTraceDatReport } from './report.js';
export {
  type TracefsMount,
  type TracefsStreamOptions,
  type TracefsRecordStream,
  type TracefsCpuStats,
  type StaleInstance,
  type TracefsSearch,
  type FindTracefsOptions,
  findTracefs,
  searchTracefs,
  describeTracefsSearch,
  tracefsMountsOf,
  tracefsDefaultPaths,
  unmountTracefs,
  openTracefsStream,
  removeStaleInstances,
  processStartTime,
  defaultBufferSizeKb,
} from './tracefs-live.js';
