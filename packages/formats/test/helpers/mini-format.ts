// A deliberately small, independent reader of tracefs format files for tests: it gives field
// values as the corpus' reference decoder prints them, without depending on the package's own
// event-format parser (so a bug there cannot hide a bug in the ring-buffer reader).
export interface MiniField {
  name: string;
  offset: number;
  size: number;
  signed: boolean;
  kind: 'int' | 'chars' | 'data_loc' | 'rel_loc' | 'bytes';
}
export interface MiniFormat {
  name: string;
  id: number;
  fields: MiniField[];
}

export function parseMiniFormat(text: string): MiniFormat {
  const name = /^name: (\S+)/m.exec(text)![1]!;
  const id = Number(/^ID: (\d+)/m.exec(text)![1]);
  const fields: MiniField[] = [];
  for (const m of text.matchAll(/field:(.*?);\toffset:(\d+);\tsize:(\d+);\tsigned:(\d+);/g)) {
    const decl = m[1]!.trim();
    const fname = /([A-Za-z_]\w*)\s*(\[[^\]]*\])?$/.exec(decl)![1]!;
    const size = Number(m[3]);
    let kind: MiniField['kind'] = 'int';
    if (decl.startsWith('__data_loc')) kind = 'data_loc';
    else if (decl.startsWith('__rel_loc')) kind = 'rel_loc';
    else if (/^(unsigned )?char .*\[/.test(decl)) kind = 'chars';
    else if (decl.includes('[')) kind = 'bytes';
    fields.push({ name: fname, offset: Number(m[2]), size, signed: m[4] === '1', kind });
  }
  return { name, id, fields };
}

function cString(bytes: Uint8Array, start: number, end: number): string {
  let e = start;
  while (e < end && bytes[e] !== 0) e++;
  return new TextDecoder('latin1').decode(bytes.subarray(start, e));
}

export function miniValues(format: MiniFormat, bytes: Uint8Array, at: number): [string, number | string][] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return format.fields.map((f) => {
    const o = at + f.offset;
    switch (f.kind) {
      case 'chars':
        return [f.name, cString(bytes, o, o + f.size)];
      case 'data_loc': {
        const v = view.getUint32(o, true);
        return [f.name, cString(bytes, at + (v & 0xffff), at + (v & 0xffff) + (v >>> 16))];
      }
      case 'rel_loc': {
        const v = view.getUint32(o, true);
        const s = o + 4 + (v & 0xffff);
        return [f.name, cString(bytes, s, s + (v >>> 16))];
      }
      case 'bytes':
        return [f.name, Array.from(bytes.subarray(o, o + f.size)).join(',')];
      default: {
        let v: number;
        if (f.size === 1) v = f.signed ? view.getInt8(o) : view.getUint8(o);
        else if (f.size === 2) v = f.signed ? view.getInt16(o, true) : view.getUint16(o, true);
        else if (f.size === 4) v = f.signed ? view.getInt32(o, true) : view.getUint32(o, true);
        else v = Number(f.signed ? view.getBigInt64(o, true) : view.getBigUint64(o, true));
        return [f.name, v];
      }
    }
  });
}

/** Python's repr() of a str, as the reference decoder printed it. */
export function pyRepr(v: number | string): string {
  if (typeof v === 'number') return String(v);
  const quote = v.includes("'") && !v.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of v) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || (c >= 0x7f && c < 0xa1) || c === 0xad) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

export function pyDict(values: [string, number | string][]): string {
  return `{${values.map(([k, v]) => `'${k}': ${pyRepr(v)}`).join(', ')}}`;
}
