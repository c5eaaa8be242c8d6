// Public API of @probeyard/formats. Each area adds its own named exports below.
export { FormatError, type FormatErrorCode, type FormatErrorContext, isFormatError } from './errors.js';

// BPF objects: ELF64, BTF, .BTF.ext (src/elf, src/btf, src/object).
export { ByteView } from './elf/byte-view.js';
export { EM_BPF, ElfType, type ElfHeader, decodeElfHeader } from './elf/elf-header.js';
export { SectionType, SectionFlags, type ElfSection, isExecutableSection } from './elf/elf-section.js';
export { SymbolType, SymbolBinding, SpecialSection, type ElfSymbol } from './elf/elf-symbol.js';
export { BpfRelocationType, type ElfRelocation, relocationTypeName } from './elf/elf-relocation.js';
export { type ElfFile, decodeElf, readElf } from './elf/elf-file.js';
export { BtfKind, type BtfKindName, btfKindNames, BtfIntEncoding, type BtfLinkage } from './btf/btf-kind.js';
export { BTF_MAGIC, type BtfHeader, decodeBtfHeader } from './btf/btf-header.js';
export { type BtfRawType, BtfRawTypes, indexBtfTypes } from './btf/btf-raw-type.js';
export { BtfStrings } from './btf/btf-strings.js';
export type {
  BtfType,
  BtfVoid,
  BtfInt,
  BtfPtr,
  BtfArray,
  BtfMember,
  BtfStruct,
  BtfUnion,
  BtfEnum,
  BtfEnum64,
  BtfFwd,
  BtfTypedef,
  BtfVolatile,
  BtfConst,
  BtfRestrict,
  BtfFunc,
  BtfFuncProto,
  BtfVar,
  BtfDatasec,
  BtfFloat,
  BtfDeclTag,
  BtfTypeTag,
} from './btf/btf-type.js';
export { BtfSpec, type BtfMemberMatch, MAX_RESOLVE_DEPTH, MEMBER_SEARCH_BUDGET, decodeBtf, readBtf } from './btf/btf-spec.js';
export { formatBtfType, formatBtfTypeName, formatBtfDeclaration, FORMAT_BUDGET } from './btf/format-btf-type.js';
export {
  type BtfExt,
  type BtfExtHeader,
  type BtfExtSection,
  type BtfFuncInfo,
  type BtfLineInfo,
  type BtfCoreRelocation,
  decodeBtfExt,
  readBtfExt,
} from './btf/btf-ext.js';
export {
  CoreRelocationKind,
  type CoreRelocationKindName,
  coreRelocationKindNames,
  coreRelocationKindName,
  isFieldRelocation,
  isTypeRelocation,
  isEnumvalRelocation,
} from './btf/core-relocation-kind.js';
export {
  type CoreAccess,
  type CoreAccessStep,
  CORE_SPEC_MAX_LEN,
  parseAccessString,
  resolveCoreAccess,
  formatCoreAccess,
} from './btf/core-access.js';
export { ProgramType, type AttachPoint, type ProgramSection, parseProgramSection } from './object/program-section.js';
export { BpfMapType, MapType, mapTypeNames, mapTypeName } from './object/map-type.js';
export type {
  ObjectSpec,
  ProgramSpec,
  ProgramRelocation,
  RelocationSite,
  ProgramLineInfo,
  ObjectCoreRelocation,
  MapSpec,
  GlobalDataSpec,
  GlobalVarSpec,
} from './object/object-spec.js';
export { readBpfObject } from './object/read-bpf-object.js';
export { ProgramIndex, transitiveCallees } from './object/programs.js';
export { globalDataKind } from './object/globals.js';
export {
  type TracepointFieldAccess,
  type TracepointFieldKind,
  parseTraceEventStructName,
  parseSyscallArgField,
  syscallArgField,
  tracepointFieldAccesses,
  formatTracepointFieldAccess,
} from './object/tracepoint-fields.js';

// Tracefs event formats, print fmt and kernel profiles (src/event-format, src/print-fmt, src/profile).
export { type FormatField, type EventFormat, maxFieldExtent, parseEventFormat, findField } from './event-format/event-format.js';
export { type FieldDeclaration, parseFieldDeclaration } from './event-format/field-declaration.js';
export { type RelayoutOptions, relayoutRecord } from './event-format/relayout-record.js';
export {
  isFieldSigned,
  readFieldNumber,
  readFieldBigInt,
  readDynamicLocation,
  readFieldString,
  decodeCString,
} from './event-format/field-read.js';
export type { PrintFmt, PrintExpr, CTypeName, BinaryOp } from './print-fmt/print-fmt-tree.js';
export { parsePrintFmt, parseCExpression, parseIntegerLiteral } from './print-fmt/parse-print-fmt.js';
export { TokenKind, type Token, lexC } from './print-fmt/c-lexer.js';
export { evaluateConstant } from './print-fmt/evaluate-constant.js';
export { type Conversion, type FormatSegment, parsePrintfFormat, formatInteger } from './print-fmt/printf.js';
export type { RenderEnv } from './print-fmt/render-env.js';
export { formatRecord, formatRecordRaw } from './print-fmt/format-record.js';
export { type RecordWriter, compileRecordWriter } from './print-fmt/record-writer.js';
export { TextWriter } from './print-fmt/text-writer.js';
export {
  type EventFormatSet,
  type ProfileFormat,
  type ProfileError,
  type EventsTreeFile,
  type EventFormatDigest,
  buildEventFormatSet,
  digestEventFormats,
  readEventsTarball,
  classifyEventsPath,
  longSizeOfHeaderPage,
  sha256Hex,
} from './profile/event-format-set.js';
export { type TarFile, readTar, isGzip } from './profile/tar.js';

// Ring-buffer pages, trace-cmd trace.dat, record streams (src/ring-buffer, src/trace-dat, src/record-stream.ts).
export { type HeaderPageLayout, parseHeaderPage, defaultHeaderPage } from './ring-buffer/header-page.js';
export { type HeaderEventLayout, parseHeaderEvent } from './ring-buffer/header-event.js';
export {
  type PageEvent,
  type PageOptions,
  type PagedRecord,
  encodePage,
  encodeRecordPages,
  pageEventSize,
  headerPageText,
  headerEventText,
} from './ring-buffer/encode-page.js';
export { type TraceDatEncodeInput, encodeTraceDat } from './trace-dat/encode-trace-dat.js';
export { type RelayoutTarget, relayoutTraceDat } from './trace-dat/relayout-trace-dat.js';
export {
  RingBufferType,
  missedEventsFlag,
  missedStoredFlag,
  type PageHeader,
  decodePageHeader,
  PageReader,
} from './ring-buffer/page.js';
export { TraceRecord, type RecordEventFormat, compareRecords } from './ring-buffer/trace-record.js';
export { type ByteSource, MemoryByteSource } from './trace-dat/byte-source.js';
export { Compression, type BlockDecompressor, decompressBlock, isZstdWasmLoaded, loadZstdWasm, registerDecompressor } from './trace-dat/decompress.js';
export {
  traceDatMagic,
  TraceDatOption,
  type TraceDatCpu,
  type TraceDatBuffer,
  type TraceDatRawOption,
  type Tsc2Nsec,
  type TimeShift,
  type TimeShiftSample,
  timeShiftInterpolateFlag,
  type TraceDatInfo,
  TraceDat,
  decodeTraceDat,
} from './trace-dat/trace-dat.js';
export {
  type EventFormatText,
  type EventFormatParser,
  type BasicEventFormat,
  parseBasicEventFormat,
  EventFormatTable,
} from './trace-dat/event-format-table.js';
export { CpuRecordReader, hostTime } from './trace-dat/cpu-reader.js';
export { type RecordReader, MergedRecordReader } from './trace-dat/merge.js';
export { type OpenTraceDatOptions, type RecordSelection, TraceDatReader, openTraceDat } from './trace-dat/trace-dat-reader.js';
export { KallsymsTable, parsePrintkFormats } from './trace-dat/kallsyms.js';
export {
  type ReportRenderEnv,
  type ReportEventFormat,
  type RecordTextFormatter,
  type ReportOptions,
  formatReportTime,
  traceDatRenderEnv,
  reportChunks,
} from './trace-dat/report.js';
export {
  type RecordStreamInfo,
  type RecordStreamStats,
  type RecordBatch,
  type RecordStream,
  type TraceDatStreamOptions,
  streamRecords,
  traceDatRecordStream,
} from './record-stream.js';
