import { FormatError } from '../errors.js';
import { type EventFormat, type FormatField, findField } from './event-format.js';
import { isFieldSigned, readDynamicLocation } from './field-read.js';

/** Options of {@link relayoutRecord}. */
export interface RelayoutOptions {
  /** Byte order of both records (default little endian). */
  littleEndian?: boolean;
  /** Values of fields the target has and the source lacks (default 0, or an empty string). */
  fill?: Readonly<Record<string, number | bigint | string>>;
}

const isString = (f: FormatField) => (f.array !== undefined || f.dynamic !== undefined) && /^(unsigned )?char$/.test(f.type.trim());

function readInt(bytes: Uint8Array, view: DataView, at: number, size: number, signed: boolean, le: boolean): bigint {
  switch (size) {
    case 1:
      return BigInt(signed ? view.getInt8(at) : view.getUint8(at));
    case 2:
      return BigInt(signed ? view.getInt16(at, le) : view.getUint16(at, le));
    case 4:
      return BigInt(signed ? view.getInt32(at, le) : view.getUint32(at, le));
    case 8:
      return signed ? view.getBigInt64(at, le) : view.getBigUint64(at, le);
    default: {
      // an odd size: the bytes as an unsigned number
      let v = 0n;
      for (let i = 0; i < size; i++) v |= BigInt(bytes[at + (le ? i : size - 1 - i)]!) << BigInt(8 * i);
      return v;
    }
  }
}

function writeInt(out: Uint8Array, at: number, size: number, value: bigint, le: boolean): void {
  // two's complement truncated to the target size (a 64-bit long into a 32-bit long keeps its low half)
  const v = BigInt.asUintN(size * 8, value);
  for (let i = 0; i < size; i++) out[at + (le ? i : size - 1 - i)] = Number((v >> BigInt(8 * i)) & 0xffn);
}

/**
 * Rewrites one record laid out by `from` (an event's format on one kernel) into the layout of
 * `to` (the same event's format on another kernel), field by field, by name: integers keep their
 * value (sign- or zero-extended, or truncated to the new width), strings their text (inline
 * `char[N]` ⇄ `__data_loc char[]`/`__rel_loc`, cut to fit a shorter array), arrays their elements
 * (each element converted, as `unsigned long args[6]` from 8 to 4 bytes), `__data_loc` payloads are
 * copied behind the fixed part; a field only `to` has gets `options.fill[name]` or 0, a field only
 * `from` has is dropped. `common_type` becomes `to.id`. The record bytes start at `common_type`.
 */
export function relayoutRecord(record: Uint8Array, from: EventFormat, to: EventFormat, options: RelayoutOptions = {}): Uint8Array {
  const le = options.littleEndian ?? true;
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  const fields = [...to.commonFields, ...to.fields];
  const sourceBytes = (src: FormatField): Uint8Array => {
    if (src.dynamic !== undefined) {
      const loc = readDynamicLocation(view, 0, record.length, src, le);
      return record.subarray(loc.byteOffset, loc.byteOffset + loc.length);
    }
    if (src.byteOffset + src.size > record.length) {
      throw new FormatError('out-of-range', `relayout ${from.name}: field '${src.name}' at ${src.byteOffset} (${src.size} bytes) is past the record's ${record.length}`, { event: from.name });
    }
    return record.subarray(src.byteOffset, src.byteOffset + src.size);
  };
  const fill = (f: FormatField): Uint8Array | bigint => {
    const v = options.fill?.[f.name];
    if (typeof v === 'string') return new TextEncoder().encode(`${v}\0`);
    return v === undefined ? (isString(f) ? new Uint8Array([0]) : 0n) : BigInt(v);
  };
  const values = new Map<FormatField, Uint8Array | bigint>();
  for (const f of fields) {
    const src = findField(from, f.name);
    if (f.name === 'common_type') {
      values.set(f, BigInt(to.id));
      continue;
    }
    if (src === undefined) {
      values.set(f, fill(f));
      continue;
    }
    if (isString(f) || isString(src) || f.dynamic !== undefined || src.dynamic !== undefined) {
      let bytes = sourceBytes(src);
      if (isString(f) && isString(src)) {
        // text up to its NUL, NUL-terminated
        const nul = bytes.indexOf(0);
        bytes = Uint8Array.from([...bytes.subarray(0, nul < 0 ? bytes.length : nul), 0]);
      }
      values.set(f, bytes);
      continue;
    }
    if (f.array !== undefined || src.array !== undefined) {
      const n = src.array?.length ?? 1;
      const m = f.array?.length ?? 1;
      const srcStep = src.size / n;
      const dstStep = f.size / m;
      if (!Number.isInteger(srcStep) || !Number.isInteger(dstStep)) {
        throw new FormatError('unsupported', `relayout ${from.name}: array field '${f.name}' of ${src.size} → ${f.size} bytes`, { event: from.name });
      }
      const out = new Uint8Array(f.size);
      const bytes = sourceBytes(src);
      const elView = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let i = 0; i < Math.min(n, m); i++) writeInt(out, i * dstStep, dstStep, readInt(bytes, elView, i * srcStep, srcStep, isFieldSigned(src), le), le);
      values.set(f, out);
      continue;
    }
    sourceBytes(src); // bounds
    values.set(f, readInt(record, view, src.byteOffset, src.size, isFieldSigned(src), le));
  }
  // the fixed part, then the payloads of dynamic fields in field order
  let size = to.fixedSize;
  for (const f of fields) {
    const v = values.get(f)!;
    if (f.dynamic !== undefined && v instanceof Uint8Array) size += v.length;
  }
  const out = new Uint8Array((size + 3) & ~3);
  let at = to.fixedSize;
  for (const f of fields) {
    const v = values.get(f)!;
    if (f.dynamic !== undefined) {
      const bytes = v instanceof Uint8Array ? v : new Uint8Array(0);
      if (bytes.length > 0xffff || at > 0xffff) throw new FormatError('out-of-range', `relayout ${from.name}: '${f.name}' payload of ${bytes.length} bytes at ${at}`, { event: from.name });
      out.set(bytes, at);
      const offset = f.dynamic === 'rel_loc' ? at - (f.byteOffset + f.size) : at;
      writeInt(out, f.byteOffset, 4, (BigInt(bytes.length) << 16n) | BigInt(offset), le);
      at += bytes.length;
    } else if (v instanceof Uint8Array) {
      out.set(v.subarray(0, f.size), f.byteOffset);
    } else {
      writeInt(out, f.byteOffset, f.size, v, le);
    }
  }
  return out;
}
