import type { EventFormat, FormatField } from '../../src/event-format/event-format.js';

export type FieldInput = number | bigint | string | Uint8Array | readonly (number | bigint)[];

function writeInt(view: DataView, at: number, size: number, value: bigint, le: boolean): void {
  switch (size) {
    case 1: view.setUint8(at, Number(BigInt.asUintN(8, value))); break;
    case 2: view.setUint16(at, Number(BigInt.asUintN(16, value)), le); break;
    case 4: view.setUint32(at, Number(BigInt.asUintN(32, value)), le); break;
    case 8: view.setBigUint64(at, BigInt.asUintN(64, value), le); break;
    default: throw new Error(`size ${size}`);
  }
}

function bytesOf(value: FieldInput, field: FormatField): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string') {
    const b = new TextEncoder().encode(value);
    const out = new Uint8Array(b.length + 1);
    out.set(b);
    return out;
  }
  if (Array.isArray(value)) {
    const elem = field.array?.length ? field.size / field.array.length : 8;
    const out = new Uint8Array(value.length * elem);
    const v = new DataView(out.buffer);
    value.forEach((x, k) => {
      writeInt(v, k * elem, elem, BigInt(x), true);
    });
    return out;
  }
  throw new Error(`field ${field.name}: cannot write ${String(value)} as bytes`);
}

/**
 * A record for `format` (little-endian): `common_type` = the event id, the given field values,
 * dynamic (`__data_loc`/`__rel_loc`) payloads appended after the fixed part in field order.
 */
export function buildRecord(format: EventFormat, values: Record<string, FieldInput>, options: { pad?: number } = {}): Uint8Array {
  const all = [...format.commonFields, ...format.fields];
  const dynamicPayloads: { field: FormatField; bytes: Uint8Array }[] = [];
  let size = format.fixedSize;
  for (const f of all) {
    const v = values[f.name];
    // A zero-sized array (`char buf[]`) is the rest of the record: its bytes come after the fixed part.
    if (f.array !== undefined && f.size === 0 && v !== undefined) size = Math.max(size, f.byteOffset + bytesOf(v, f).length);
    if (f.dynamic !== undefined && v !== undefined) {
      const b = bytesOf(v, f);
      dynamicPayloads.push({ field: f, bytes: b });
      size += b.length;
    }
  }
  const out = new Uint8Array(size + (options.pad ?? 0));
  const view = new DataView(out.buffer);
  let tail = size - dynamicPayloads.reduce((n, p) => n + p.bytes.length, 0);
  for (const f of all) {
    const v = f.name === 'common_type' && values[f.name] === undefined ? format.id : values[f.name];
    if (v === undefined) continue;
    if (f.dynamic !== undefined) {
      const payload = dynamicPayloads.find((p) => p.field === f)!;
      out.set(payload.bytes, tail);
      const offset = f.dynamic === 'rel_loc' ? tail - (f.byteOffset + f.size) : tail;
      view.setUint32(f.byteOffset, (payload.bytes.length << 16) | offset, true);
      tail += payload.bytes.length;
    } else if (f.array !== undefined) {
      const b = bytesOf(v, f);
      out.set(f.size === 0 ? b : b.subarray(0, f.size), f.byteOffset);
    } else {
      writeInt(view, f.byteOffset, f.size, BigInt(v as number | bigint), true);
    }
  }
  return out;
}
