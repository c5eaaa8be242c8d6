// Rewrites a little-endian trace-cmd version 7 file with another compression of its compressed
// sections and CPU data chunks (zstd → zlib here, since the trace-cmd on the test machines only
// writes zstd). Sections keep their order, ids, flags and string ids; every offset is remapped.
import { zlibSync } from 'fflate';
import { decompress } from 'fzstd';

function u8cat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
const le32 = (v: number) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, v, true);
  return b;
};

export function recompressV7ToZlib(src: Uint8Array): Uint8Array {
  const v = new DataView(src.buffer, src.byteOffset, src.byteLength);
  let p = src.indexOf(0, 10) + 1 + 2 + 4; // version, endianness, long size, page size
  const pageSize = v.getUint32(p - 4, true);
  const nameEnd = src.indexOf(0, p);
  const versionEnd = src.indexOf(0, nameEnd + 1);
  const optionsAt = Number(v.getBigUint64(versionEnd + 1, true));
  p = versionEnd + 9;
  const head = u8cat([src.subarray(0, src.indexOf(0, 10) + 7), new TextEncoder().encode('zlib\x001.3\x00'), new Uint8Array(8)]);
  const recompress = (data: Uint8Array, size: number) => {
    const z = zlibSync(decompress(data, new Uint8Array(size)));
    return u8cat([le32(z.length), le32(size), z]);
  };
  // Pass 1: every section, re-encoded (the buffer section's bytes are built below).
  const sections: { oldAt: number; newAt: number; id: number; bytes: Uint8Array }[] = [];
  let bufferOld = -1;
  while (p < src.length) {
    const id = v.getUint16(p, true);
    const flags = v.getUint16(p + 2, true);
    const size = Number(v.getBigUint64(p + 8, true));
    const content = src.subarray(p + 16, p + 16 + size);
    let body = content;
    if (id === 3) bufferOld = p;
    else if (flags & 1) body = recompress(content.subarray(8, 8 + new DataView(content.buffer, content.byteOffset).getUint32(0, true)), new DataView(content.buffer, content.byteOffset).getUint32(4, true));
    sections.push({ oldAt: p, newAt: 0, id, bytes: body });
    p += 16 + size;
  }
  // The buffer section: page-aligned CPU data, each CPU's chunks recompressed.
  const buffer = sections.find((x) => x.oldAt === bufferOld)!;
  let newAt = head.length;
  for (const x of sections) {
    if (x === buffer) break;
    x.newAt = newAt;
    newAt += 16 + x.bytes.length;
  }
  buffer.newAt = newAt;
  const cpuMap = new Map<number, { at: number; size: number }>();
  const parts: Uint8Array[] = [];
  let at = newAt + 16;
  // Find the CPU entries through the BUFFER option, which lives in an options section.
  const buffersOpt: { cpu: number; off: number; size: number }[] = [];
  for (let o = optionsAt; o !== 0; ) {
    const size = Number(v.getBigUint64(o + 8, true));
    let q = o + 16;
    let next = 0;
    while (q < o + 16 + size) {
      const id = v.getUint16(q, true);
      const len = v.getUint32(q + 2, true);
      if (id === 0) next = Number(v.getBigUint64(q + 6, true));
      if (id === 3) {
        let r = src.indexOf(0, src.indexOf(0, q + 14) + 1) + 1 + 4; // name, clock, page size
        const count = v.getUint32(r, true);
        r += 4;
        for (let i = 0; i < count; i++, r += 20) buffersOpt.push({ cpu: v.getUint32(r, true), off: Number(v.getBigUint64(r + 4, true)), size: Number(v.getBigUint64(r + 12, true)) });
      }
      q += 6 + len;
    }
    o = next;
  }
  for (const c of buffersOpt) {
    if (c.size === 0) continue;
    const pad = (pageSize - (at % pageSize)) % pageSize;
    parts.push(new Uint8Array(pad));
    at += pad;
    let r = c.off;
    const count = v.getUint32(r, true);
    r += 4;
    const chunks: Uint8Array[] = [le32(count)];
    for (let i = 0; i < count; i++) {
      const comp = v.getUint32(r, true);
      const size = v.getUint32(r + 4, true);
      chunks.push(recompress(src.subarray(r + 8, r + 8 + comp), size));
      r += 8 + comp;
    }
    const data = u8cat(chunks);
    cpuMap.set(c.off, { at, size: data.length - 4 });
    parts.push(data);
    at += data.length;
  }
  buffer.bytes = u8cat(parts);
  newAt = at;
  for (const x of sections.slice(sections.indexOf(buffer) + 1)) {
    x.newAt = newAt;
    newAt += 16 + x.bytes.length;
  }
  const map = (old: number) => {
    if (old === 0) return 0;
    const s = sections.find((x) => x.oldAt === old);
    if (!s) throw new Error(`no section at ${old}`);
    return s.newAt;
  };
  // Pass 2: write, patching the offsets inside options sections.
  const out = u8cat([head, ...sections.flatMap((s) => [src.slice(s.oldAt, s.oldAt + 16), s.bytes])]);
  const ov = new DataView(out.buffer);
  ov.setBigUint64(head.length - 8, BigInt(map(optionsAt)), true);
  for (const s of sections) {
    ov.setBigUint64(s.newAt + 8, BigInt(s.bytes.length), true);
    if (s.id !== 0) continue;
    let q = s.newAt + 16;
    while (q < s.newAt + 16 + s.bytes.length) {
      const id = ov.getUint16(q, true);
      const len = ov.getUint32(q + 2, true);
      if (id === 0 || (id >= 16 && id <= 21)) ov.setBigUint64(q + 6, BigInt(map(Number(ov.getBigUint64(q + 6, true)))), true);
      if (id === 3) {
        ov.setBigUint64(q + 6, BigInt(map(Number(ov.getBigUint64(q + 6, true)))), true);
        let r = out.indexOf(0, out.indexOf(0, q + 14) + 1) + 1 + 4;
        const count = ov.getUint32(r, true);
        r += 4;
        for (let i = 0; i < count; i++, r += 20) {
          const m = cpuMap.get(Number(ov.getBigUint64(r + 4, true)));
          if (m) {
            ov.setBigUint64(r + 4, BigInt(m.at), true);
            ov.setBigUint64(r + 12, BigInt(m.size), true);
          }
        }
      }
      q += 6 + len;
    }
  }
  return out;
}
