import { FormatError } from '../errors.js';
import { ByteView } from '../elf/byte-view.js';

/** `BTF_MAGIC`, read as a u16 in the file's byte order. */
export const BTF_MAGIC = 0xeb9f;

/** `struct btf_header`. Offsets are relative to the end of the header (`hdrLen`). */
export interface BtfHeader {
  littleEndian: boolean;
  version: number;
  flags: number;
  hdrLen: number;
  typeOff: number;
  typeLen: number;
  strOff: number;
  strLen: number;
}

/** Endianness of a BTF or .BTF.ext blob from its magic; `malformed` when it is neither. */
export function btfByteOrder(bytes: Uint8Array, what: string): boolean {
  if (bytes.length < 2) throw new FormatError('truncated', `${what} header: ${bytes.length} bytes, need the magic`, { byteOffset: 0 });
  if (bytes[0] === 0x9f && bytes[1] === 0xeb) return true;
  if (bytes[0] === 0xeb && bytes[1] === 0x9f) return false;
  throw new FormatError('malformed', `${what} header: bad magic ${hex(bytes[0])} ${hex(bytes[1])}, want 0xeb9f`, { byteOffset: 0 });
}

function hex(b: number | undefined): string {
  return `0x${(b ?? 0).toString(16).padStart(2, '0')}`;
}

/** Decodes and checks `struct btf_header`: both sections inside the blob, strings NUL-bounded. */
export function decodeBtfHeader(bytes: Uint8Array): BtfHeader {
  const littleEndian = btfByteOrder(bytes, 'btf');
  const v = new ByteView(bytes, littleEndian, '.BTF');
  const h: BtfHeader = {
    littleEndian,
    version: v.u8(2, 'btf header'),
    flags: v.u8(3, 'btf header'),
    hdrLen: v.u32(4, 'btf header'),
    typeOff: v.u32(8, 'btf header'),
    typeLen: v.u32(12, 'btf header'),
    strOff: v.u32(16, 'btf header'),
    strLen: v.u32(20, 'btf header'),
  };
  if (h.version !== 1) throw new FormatError('unsupported', `btf header: version ${h.version}, want 1`, { byteOffset: 2 });
  if (h.hdrLen < 24) throw new FormatError('malformed', `btf header: hdr_len ${h.hdrLen} is below 24`, { byteOffset: 4 });
  if (h.hdrLen > bytes.length) {
    throw new FormatError('truncated', `btf header: hdr_len ${h.hdrLen} past the section (${bytes.length} bytes)`, { byteOffset: 4 });
  }
  // A longer header (a newer kernel's) is accepted when its extra bytes are zero, as libbpf does.
  for (let i = 24; i < h.hdrLen; i++) {
    if (bytes[i] !== 0) throw new FormatError('unsupported', `btf header: unknown non-zero header byte at ${i}`, { byteOffset: i });
  }
  const body = bytes.length - h.hdrLen;
  if (h.typeOff % 4 !== 0) throw new FormatError('malformed', `btf header: type_off ${h.typeOff} is not 4-byte aligned`, { byteOffset: 8 });
  if (h.typeOff + h.typeLen > body) {
    throw new FormatError('out-of-range', `btf header: types at ${h.typeOff} length ${h.typeLen} end past the data (${body} bytes)`, {
      byteOffset: 8,
    });
  }
  if (h.strOff + h.strLen > body) {
    throw new FormatError('out-of-range', `btf header: strings at ${h.strOff} length ${h.strLen} end past the data (${body} bytes)`, {
      byteOffset: 16,
    });
  }
  if (h.strOff < h.typeOff + h.typeLen && h.typeOff < h.strOff + h.strLen) {
    throw new FormatError('malformed', `btf header: types [${h.typeOff}, ${h.typeOff + h.typeLen}) overlap strings [${h.strOff}, ${h.strOff + h.strLen})`, {
      byteOffset: 8,
    });
  }
  if (h.strLen === 0 || bytes[h.hdrLen + h.strOff] !== 0 || bytes[h.hdrLen + h.strOff + h.strLen - 1] !== 0) {
    throw new FormatError('malformed', 'btf header: string section must start and end with NUL', { byteOffset: h.hdrLen + h.strOff });
  }
  return h;
}
