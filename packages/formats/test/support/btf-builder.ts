// A small writer of BTF blobs for tests: every kind, either byte order, and room for hostile
// values (ids past the end, string offsets out of range, loops). Not part of the package API.

export interface RawRecord {
  name?: number | string;
  kind: number;
  kindFlag?: boolean;
  vlen?: number;
  sizeOrType: number;
  /** Trailing u32 words (members, params, …), written in order. */
  extra?: number[];
}

export class BtfBuilder {
  readonly #strings: number[] = [0];
  readonly #stringOffsets = new Map<string, number>([['', 0]]);
  readonly records: RawRecord[] = [];

  str(s: string): number {
    const hit = this.#stringOffsets.get(s);
    if (hit !== undefined) return hit;
    const off = this.#strings.length;
    for (const b of new TextEncoder().encode(s)) this.#strings.push(b);
    this.#strings.push(0);
    this.#stringOffsets.set(s, off);
    return off;
  }

  /** Adds a record, returns its id. */
  add(r: RawRecord): number {
    this.records.push(r);
    return this.records.length;
  }

  int(name: string, size: number, encoding = 0, bits = size * 8): number {
    return this.add({ name, kind: 1, sizeOrType: size, extra: [(encoding << 24) | bits] });
  }
  ptr(type: number): number {
    return this.add({ kind: 2, sizeOrType: type });
  }
  array(type: number, indexType: number, nelems: number): number {
    return this.add({ kind: 3, sizeOrType: 0, extra: [type, indexType, nelems] });
  }
  struct(name: string, size: number, members: [string, number, number, number?][], union = false): number {
    const kindFlag = members.some((m) => m[3] !== undefined);
    const extra: number[] = [];
    for (const [n, t, bitOffset, bitfield] of members) {
      extra.push(this.str(n), t, kindFlag ? ((bitfield ?? 0) << 24) | bitOffset : bitOffset);
    }
    return this.add({ name, kind: union ? 5 : 4, kindFlag, vlen: members.length, sizeOrType: size, extra });
  }
  enum(name: string, size: number, values: [string, number][], signed = false): number {
    const extra: number[] = [];
    for (const [n, v] of values) extra.push(this.str(n), v >>> 0);
    return this.add({ name, kind: 6, kindFlag: signed, vlen: values.length, sizeOrType: size, extra });
  }
  enum64(name: string, values: [string, bigint][], signed = false): number {
    const extra: number[] = [];
    for (const [n, v] of values) {
      const u = BigInt.asUintN(64, v);
      extra.push(this.str(n), Number(u & 0xffffffffn), Number(u >> 32n));
    }
    return this.add({ name, kind: 19, kindFlag: signed, vlen: values.length, sizeOrType: 8, extra });
  }
  fwd(name: string, union = false): number {
    return this.add({ name, kind: 7, kindFlag: union, sizeOrType: 0 });
  }
  typedef(name: string, type: number): number {
    return this.add({ name, kind: 8, sizeOrType: type });
  }
  qualifier(kind: 'volatile' | 'const' | 'restrict', type: number): number {
    return this.add({ kind: { volatile: 9, const: 10, restrict: 11 }[kind], sizeOrType: type });
  }
  func(name: string, proto: number, linkage = 1): number {
    return this.add({ name, kind: 12, vlen: linkage, sizeOrType: proto });
  }
  funcProto(ret: number, params: [string, number][]): number {
    const extra: number[] = [];
    for (const [n, t] of params) extra.push(this.str(n), t);
    return this.add({ kind: 13, vlen: params.length, sizeOrType: ret, extra });
  }
  variable(name: string, type: number, linkage = 1): number {
    return this.add({ name, kind: 14, sizeOrType: type, extra: [linkage] });
  }
  datasec(name: string, size: number, vars: [number, number, number][]): number {
    return this.add({ name, kind: 15, vlen: vars.length, sizeOrType: size, extra: vars.flat() });
  }
  float(name: string, size: number): number {
    return this.add({ name, kind: 16, sizeOrType: size });
  }
  declTag(name: string, type: number, componentIdx: number): number {
    return this.add({ name, kind: 17, sizeOrType: type, extra: [componentIdx >>> 0] });
  }
  typeTag(name: string, type: number): number {
    return this.add({ name, kind: 18, sizeOrType: type });
  }

  /** The .BTF blob. */
  build(littleEndian = true): Uint8Array {
    const words: number[] = [];
    for (const r of this.records) {
      const name = typeof r.name === 'string' ? this.str(r.name) : (r.name ?? 0);
      words.push(name, ((r.kindFlag ? 1 : 0) << 31) | (r.kind << 24) | (r.vlen ?? 0), r.sizeOrType, ...(r.extra ?? []));
    }
    const typeLen = words.length * 4;
    const strLen = this.#strings.length;
    const out = new Uint8Array(24 + typeLen + strLen);
    const v = new DataView(out.buffer);
    v.setUint16(0, 0xeb9f, littleEndian);
    out[2] = 1;
    v.setUint32(4, 24, littleEndian);
    v.setUint32(8, 0, littleEndian);
    v.setUint32(12, typeLen, littleEndian);
    v.setUint32(16, typeLen, littleEndian);
    v.setUint32(20, strLen, littleEndian);
    for (const [i, w] of words.entries()) v.setUint32(24 + i * 4, w >>> 0, littleEndian);
    out.set(this.#strings, 24 + typeLen);
    return out;
  }
}

/** A .BTF.ext blob: sections of func info, line info and CO-RE records as raw u32 words. */
export function buildBtfExt(
  parts: { func?: [number, number[][]][]; line?: [number, number[][]][]; core?: [number, number[][]][] },
  recordSizes = { func: 8, line: 16, core: 16 },
  littleEndian = true,
): Uint8Array {
  const sub = (recSize: number, secs: [number, number[][]][] | undefined) => {
    if (secs === undefined) return [] as number[];
    const w = [recSize];
    for (const [name, recs] of secs) {
      w.push(name, recs.length);
      for (const r of recs) w.push(...r);
    }
    return w;
  };
  const f = sub(recordSizes.func, parts.func);
  const l = sub(recordSizes.line, parts.line);
  const c = sub(recordSizes.core, parts.core);
  const words = [...f, ...l, ...c];
  const out = new Uint8Array(32 + words.length * 4);
  const v = new DataView(out.buffer);
  v.setUint16(0, 0xeb9f, littleEndian);
  out[2] = 1;
  v.setUint32(4, 32, littleEndian);
  v.setUint32(8, 0, littleEndian);
  v.setUint32(12, f.length * 4, littleEndian);
  v.setUint32(16, f.length * 4, littleEndian);
  v.setUint32(20, l.length * 4, littleEndian);
  v.setUint32(24, (f.length + l.length) * 4, littleEndian);
  v.setUint32(28, c.length * 4, littleEndian);
  for (const [i, w] of words.entries()) v.setUint32(32 + i * 4, w >>> 0, littleEndian);
  return out;
}
