/** A minimal ustar writer for tests: regular files only. */
export function writeTar(files: { path: string; text: string | Uint8Array }[]): Uint8Array {
  const blocks: Uint8Array[] = [];
  const enc = new TextEncoder();
  for (const f of files) {
    const data = typeof f.text === 'string' ? enc.encode(f.text) : f.text;
    const h = new Uint8Array(512);
    const put = (s: string, at: number, len: number) => h.set(enc.encode(s).subarray(0, len), at);
    let name = f.path;
    let prefix = '';
    if (name.length > 100) {
      const cut = name.lastIndexOf('/', name.length - 101 >= 0 ? 155 : name.length);
      prefix = name.slice(0, cut);
      name = name.slice(cut + 1);
    }
    put(name, 0, 100);
    put('0000644\0', 100, 8);
    put('0000000\0', 108, 8);
    put('0000000\0', 116, 8);
    put(`${data.length.toString(8).padStart(11, '0')}\0`, 124, 12);
    put('00000000000\0', 136, 12);
    put('        ', 148, 8);
    h[156] = 0x30;
    put('ustar\x0000', 257, 8);
    put(prefix, 345, 155);
    let sum = 0;
    for (const b of h) sum += b;
    put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
    blocks.push(h);
    const padded = new Uint8Array(Math.ceil(data.length / 512) * 512);
    padded.set(data);
    blocks.push(padded);
  }
  blocks.push(new Uint8Array(1024));
  const out = new Uint8Array(blocks.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of blocks) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}
