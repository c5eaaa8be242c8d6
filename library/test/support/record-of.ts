// A raw tracepoint record laid out by a kernel's format file, for running a program on a kernel
// there is no recording of: every field set by name (numbers, strings for char arrays and
// `__data_loc char[]`, byte lists for other arrays), common_type set to the event id.
import type { EventFormat } from '@probeyard/formats';

export function recordOf(format: EventFormat, values: Record<string, number | bigint | string | number[]>): Uint8Array {
  const encoder = new TextEncoder();
  const tail: number[] = [];
  const dynamic: [offset: number, bytes: Uint8Array][] = [];
  for (const f of format.fields) {
    const v = values[f.name];
    if (f.dynamic !== undefined && typeof v === 'string') {
      const bytes = new Uint8Array([...encoder.encode(v), 0]);
      dynamic.push([format.fixedSize + tail.length, bytes]);
      tail.push(...bytes);
    }
  }
  const size = (format.fixedSize + tail.length + 3) & ~3;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set(tail, format.fixedSize);
  view.setUint16(0, format.id, true);
  let d = 0;
  for (const f of [...format.commonFields, ...format.fields]) {
    const v = values[f.name];
    if (v === undefined) continue;
    if (f.dynamic !== undefined) {
      const [offset, bytes] = dynamic[d++]!;
      view.setUint32(f.byteOffset, (bytes.length << 16) | offset, true);
    } else if (typeof v === 'string') {
      out.set(encoder.encode(v).subarray(0, f.size - 1), f.byteOffset);
    } else if (Array.isArray(v)) {
      out.set(v.slice(0, f.size), f.byteOffset);
    } else {
      const big = BigInt(v);
      if (f.size === 8) view.setBigUint64(f.byteOffset, BigInt.asUintN(64, big), true);
      else if (f.size === 4) view.setUint32(f.byteOffset, Number(BigInt.asUintN(32, big)), true);
      else if (f.size === 2) view.setUint16(f.byteOffset, Number(BigInt.asUintN(16, big)), true);
      else if (f.size === 1) view.setUint8(f.byteOffset, Number(BigInt.asUintN(8, big)));
    }
  }
  return out;
}
