import { FormatError } from '../errors.js';
import type { FormatField } from './event-format.js';

function outOfRange(field: FormatField, at: number, need: number, available: number): FormatError {
  return new FormatError(
    'out-of-range',
    `field '${field.name}': ${need} bytes at record offset ${at} exceed the ${available} available`,
    { byteOffset: at },
  );
}

/**
 * Signedness of a field: the file's `signed:` when present, else guessed from the type text
 * (old kernels): `unsigned`, `u8`..`u64`, `bool`, pointers and `char` arrays are unsigned.
 */
export function isFieldSigned(field: FormatField): boolean {
  if (field.signed !== undefined) return field.signed;
  const t = field.type;
  if (t.includes('*') || /\bunsigned\b/.test(t) || /^(__)?u(8|16|32|64)$/.test(t) || /^uint\d+_t$/.test(t)) return false;
  if (field.array !== undefined || /^(bool|_Bool|char|gfp_t|dev_t|size_t|sector_t|umode_t|uid_t|gid_t)$/.test(t)) return false;
  return true;
}

/**
 * Reads a numeric field (size 1, 2, 4 or 8) of the record that starts at `recordOffset` in
 * `view`: exact up to 2^53, lossy beyond (use {@link readFieldBigInt} there). Allocation-free.
 * Throws {@link FormatError} `out-of-range` when the field lies outside the view, `unsupported`
 * for another size.
 */
export function readFieldNumber(view: DataView, recordOffset: number, field: FormatField, littleEndian = true): number {
  const at = recordOffset + field.byteOffset;
  if (at < 0 || at + field.size > view.byteLength) throw outOfRange(field, field.byteOffset, field.size, view.byteLength - recordOffset);
  const signed = isFieldSigned(field);
  switch (field.size) {
    case 1:
      return signed ? view.getInt8(at) : view.getUint8(at);
    case 2:
      return signed ? view.getInt16(at, littleEndian) : view.getUint16(at, littleEndian);
    case 4:
      return signed ? view.getInt32(at, littleEndian) : view.getUint32(at, littleEndian);
    case 8: {
      const lo = view.getUint32(at + (littleEndian ? 0 : 4), littleEndian);
      const hi = signed ? view.getInt32(at + (littleEndian ? 4 : 0), littleEndian) : view.getUint32(at + (littleEndian ? 4 : 0), littleEndian);
      return hi * 4294967296 + lo;
    }
    default:
      throw new FormatError('unsupported', `field '${field.name}': cannot read a number of ${field.size} bytes`, { byteOffset: field.byteOffset });
  }
}

/** Like {@link readFieldNumber}, exact for 64-bit fields. */
export function readFieldBigInt(view: DataView, recordOffset: number, field: FormatField, littleEndian = true): bigint {
  if (field.size !== 8) return BigInt(readFieldNumber(view, recordOffset, field, littleEndian));
  const at = recordOffset + field.byteOffset;
  if (at < 0 || at + 8 > view.byteLength) throw outOfRange(field, field.byteOffset, 8, view.byteLength - recordOffset);
  return isFieldSigned(field) ? view.getBigInt64(at, littleEndian) : view.getBigUint64(at, littleEndian);
}

/**
 * Where the payload of a `__data_loc` / `__rel_loc` field lies: the u32 holds the offset in its
 * low 16 bits and the length in its high 16 bits; `data_loc` offsets count from the record start,
 * `rel_loc` offsets from the end of the field itself (5.17+). `byteOffset` is absolute in `view`.
 * Throws {@link FormatError} `out-of-range` when the payload lies outside the record.
 */
export function readDynamicLocation(
  view: DataView,
  recordOffset: number,
  recordLength: number,
  field: FormatField,
  littleEndian = true,
): { byteOffset: number; length: number } {
  if (field.dynamic === undefined) {
    throw new FormatError('malformed', `field '${field.name}': not a __data_loc or __rel_loc field`, { byteOffset: field.byteOffset });
  }
  if (field.byteOffset + 4 > recordLength || recordOffset + recordLength > view.byteLength) {
    throw outOfRange(field, field.byteOffset, 4, Math.min(recordLength, view.byteLength - recordOffset));
  }
  const word = view.getUint32(recordOffset + field.byteOffset, littleEndian);
  const length = word >>> 16;
  let offset = word & 0xffff;
  if (field.dynamic === 'rel_loc') offset += field.byteOffset + field.size;
  if (offset + length > recordLength) {
    throw new FormatError(
      'out-of-range',
      `field '${field.name}': ${field.dynamic} points at ${length} bytes at record offset ${offset}, past the record's ${recordLength} bytes`,
      { byteOffset: field.byteOffset },
    );
  }
  return { byteOffset: recordOffset + offset, length };
}

/** Decodes bytes up to the first NUL (at most `length`) as UTF-8, with a fast path for ASCII. */
export function decodeCString(bytes: Uint8Array, byteOffset: number, length: number): string {
  let end = byteOffset;
  const limit = Math.min(byteOffset + length, bytes.length);
  let ascii = true;
  while (end < limit && bytes[end] !== 0) {
    if (bytes[end]! >= 0x80) ascii = false;
    end++;
  }
  if (ascii && end - byteOffset <= 64) {
    let s = '';
    for (let k = byteOffset; k < end; k++) s += String.fromCharCode(bytes[k]!);
    return s;
  }
  return textDecoder.decode(bytes.subarray(byteOffset, end));
}

const textDecoder = new TextDecoder('utf-8');

/**
 * Reads a string field: a fixed `char` array (up to its NUL or its size) or a `__data_loc` /
 * `__rel_loc char[]` (up to its NUL or its length). Throws {@link FormatError} `out-of-range`.
 */
export function readFieldString(
  view: DataView,
  recordOffset: number,
  recordLength: number,
  field: FormatField,
  littleEndian = true,
): string {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  if (field.dynamic !== undefined) {
    const loc = readDynamicLocation(view, recordOffset, recordLength, field, littleEndian);
    return decodeCString(bytes, loc.byteOffset, loc.length);
  }
  if (field.byteOffset + field.size > recordLength || recordOffset + recordLength > view.byteLength) {
    throw outOfRange(field, field.byteOffset, field.size, Math.min(recordLength, view.byteLength - recordOffset));
  }
  return decodeCString(bytes, recordOffset + field.byteOffset, field.size);
}
