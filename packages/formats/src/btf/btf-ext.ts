import { FormatError } from '../errors.js';
import { ByteView } from '../elf/byte-view.js';
import { btfByteOrder } from './btf-header.js';
import { type BtfSpec, rebase } from './btf-spec.js';
import { coreRelocationKindName, type CoreRelocationKindName } from './core-relocation-kind.js';

/** `struct btf_ext_header`; offsets are relative to the end of the header. */
export interface BtfExtHeader {
  littleEndian: boolean;
  version: number;
  flags: number;
  hdrLen: number;
  funcInfoOff: number;
  funcInfoLen: number;
  lineInfoOff: number;
  lineInfoLen: number;
  /** 0 when the header is the short (24-byte) one without CO-RE relocations. */
  coreReloOff: number;
  coreReloLen: number;
}

/** `struct bpf_func_info` in an object: `insn_off` is a byte offset in the section. */
export interface BtfFuncInfo {
  byteOffset: number;
  /** A `BTF_KIND_FUNC` id. */
  typeId: number;
}

/** `struct bpf_line_info`. */
export interface BtfLineInfo {
  byteOffset: number;
  fileName: string;
  /** The source line's text. */
  line: string;
  /** `BPF_LINE_INFO_LINE_NUM(line_col)`. */
  lineNumber: number;
  /** `BPF_LINE_INFO_LINE_COL(line_col)`. */
  column: number;
}

/** `struct bpf_core_relo`. */
export interface BtfCoreRelocation {
  /** Byte offset of the instruction in its section. */
  byteOffset: number;
  /** The root type the access string starts from. */
  typeId: number;
  /** Raw access string: "0:2:1" (indices). */
  accessString: string;
  /** `enum bpf_core_relo_kind`. */
  kind: number;
  kindName: CoreRelocationKindName;
}

/** Records of one program section ("btf_ext_info_sec"). */
export interface BtfExtSection<T> {
  section: string;
  records: T[];
}

/** Decoded `.BTF.ext`: func info, line info and CO-RE relocations per section. */
export interface BtfExt {
  header: BtfExtHeader;
  funcInfo: BtfExtSection<BtfFuncInfo>[];
  lineInfo: BtfExtSection<BtfLineInfo>[];
  coreRelocations: BtfExtSection<BtfCoreRelocation>[];
}

const MIN_RECORD_SIZE = { func: 8, line: 16, core: 16 } as const;

/**
 * Decodes a `.BTF.ext` blob; names and strings come from the `.BTF` string section of `btf`.
 * `baseOffset` is where the blob starts in a larger input; error offsets count from there.
 */
export function decodeBtfExt(bytes: Uint8Array, btf: BtfSpec, baseOffset = 0): BtfExt {
  return rebase(() => decodeBtfExtAt(bytes, btf), baseOffset, '.BTF.ext');
}

function decodeBtfExtAt(bytes: Uint8Array, btf: BtfSpec): BtfExt {
  const littleEndian = btfByteOrder(bytes, 'btf.ext');
  const v = new ByteView(bytes, littleEndian, '.BTF.ext');
  const hdrLen = v.u32(4, 'btf.ext header');
  const header: BtfExtHeader = {
    littleEndian,
    version: v.u8(2, 'btf.ext header'),
    flags: v.u8(3, 'btf.ext header'),
    hdrLen,
    funcInfoOff: v.u32(8, 'btf.ext header'),
    funcInfoLen: v.u32(12, 'btf.ext header'),
    lineInfoOff: v.u32(16, 'btf.ext header'),
    lineInfoLen: v.u32(20, 'btf.ext header'),
    coreReloOff: 0,
    coreReloLen: 0,
  };
  if (header.version !== 1) throw new FormatError('unsupported', `btf.ext header: version ${header.version}, want 1`, { byteOffset: 2 });
  if (hdrLen < 24) throw new FormatError('malformed', `btf.ext header: hdr_len ${hdrLen} is below 24`, { byteOffset: 4 });
  if (hdrLen > bytes.length) throw new FormatError('truncated', `btf.ext header: hdr_len ${hdrLen} past the section (${bytes.length} bytes)`, { byteOffset: 4 });
  if (hdrLen >= 32) {
    header.coreReloOff = v.u32(24, 'btf.ext header');
    header.coreReloLen = v.u32(28, 'btf.ext header');
  }
  if (btf.littleEndian !== littleEndian) {
    throw new FormatError('malformed', 'btf.ext header: byte order differs from .BTF', { byteOffset: 0 });
  }
  const strings = btf.strings;
  const str = (off: number, what: string, at: number) => {
    try {
      return strings.get(off, what);
    } catch (e) {
      if (e instanceof FormatError) throw new FormatError(e.code, e.message, { byteOffset: at });
      throw e;
    }
  };
  const funcInfo = readInfo(v, hdrLen, 8, 'func info', header.funcInfoOff, header.funcInfoLen, MIN_RECORD_SIZE.func, str, (at) => ({
    byteOffset: v.u32(at),
    typeId: v.u32(at + 4),
  }));
  const lineInfo = readInfo(v, hdrLen, 16, 'line info', header.lineInfoOff, header.lineInfoLen, MIN_RECORD_SIZE.line, str, (at) => {
    const lineCol = v.u32(at + 12);
    return {
      byteOffset: v.u32(at),
      fileName: str(v.u32(at + 4), 'line info file name', at + 4),
      line: str(v.u32(at + 8), 'line info line', at + 8),
      lineNumber: lineCol >>> 10,
      column: lineCol & 0x3ff,
    };
  });
  const coreRelocations = readInfo(v, hdrLen, 24, 'core relocations', header.coreReloOff, header.coreReloLen, MIN_RECORD_SIZE.core, str, (at) => {
    const kind = v.u32(at + 12);
    return {
      byteOffset: v.u32(at),
      typeId: v.u32(at + 4),
      accessString: str(v.u32(at + 8), 'core relocation access string', at + 8),
      kind,
      kindName: coreRelocationKindName(kind),
    };
  });
  return { header, funcInfo, lineInfo, coreRelocations };
}

function readInfo<T>(
  v: ByteView,
  hdrLen: number,
  /** Where the subsection's offset field is in the header (for errors about it). */
  headerField: number,
  what: string,
  off: number,
  len: number,
  minRecordSize: number,
  str: (off: number, what: string, at: number) => string,
  record: (at: number) => T,
): BtfExtSection<T>[] {
  if (len === 0) return [];
  const start = hdrLen + off;
  if (start + len > v.length) {
    throw new FormatError('out-of-range', `${what}: at ${off} length ${len} ends past the section (${v.length} bytes)`, { byteOffset: headerField });
  }
  const end = start + len;
  const recordSize = v.u32(start, what);
  if (recordSize < minRecordSize || recordSize % 4 !== 0) {
    throw new FormatError('malformed', `${what}: record size ${recordSize}, want a multiple of 4 of at least ${minRecordSize}`, { byteOffset: start });
  }
  const out: BtfExtSection<T>[] = [];
  let at = start + 4;
  while (at < end) {
    if (at + 8 > end) throw new FormatError('truncated', `${what}: section header at ${at} cut at ${end}`, { byteOffset: at });
    const section = str(v.u32(at), `${what} section name`, at);
    const count = v.u32(at + 4);
    at += 8;
    if (count === 0) throw new FormatError('malformed', `${what} ${section}: zero records`, { byteOffset: at - 4 });
    if (count * recordSize > end - at) {
      throw new FormatError('truncated', `${what} ${section}: ${count} records of ${recordSize} bytes at ${at} end past ${end}`, { byteOffset: at - 4 });
    }
    const records: T[] = [];
    for (let i = 0; i < count; i++, at += recordSize) records.push(record(at));
    out.push({ section, records });
  }
  return out;
}

/** `decodeBtfExt` with errors prefixed "read btf.ext: ". */
export function readBtfExt(bytes: Uint8Array, btf: BtfSpec, baseOffset = 0): BtfExt {
  try {
    return decodeBtfExt(bytes, btf, baseOffset);
  } catch (e) {
    if (e instanceof FormatError) throw e.withPrefix('read btf.ext');
    throw e;
  }
}
