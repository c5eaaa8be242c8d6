// A minimal ustar writer for the kernel profile an agent reports: regular files only, paths split
// into ustar's prefix/name, mode 0644, mtime 0 (the same tree always gives the same bytes).

const blockSize = 512;
const encoder = new TextEncoder();

function writeString(block: Uint8Array, at: number, length: number, text: string): void {
  const bytes = encoder.encode(text);
  if (bytes.length > length) throw new Error(`tar: '${text}' is longer than ${length} bytes`);
  block.set(bytes, at);
}

function writeOctal(block: Uint8Array, at: number, length: number, value: number): void {
  writeString(block, at, length, `${value.toString(8).padStart(length - 1, '0')}\0`);
}

/** ustar's 100-byte name and 155-byte prefix of a path (split at a `/`). */
function splitPath(path: string): { prefix: string; name: string } {
  if (encoder.encode(path).length <= 100) return { prefix: '', name: path };
  for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (encoder.encode(name).length <= 100 && encoder.encode(prefix).length <= 155) return { prefix, name };
  }
  throw new Error(`tar: path '${path}' does not fit ustar's 255 bytes`);
}

function header(path: string, size: number): Uint8Array {
  const block = new Uint8Array(blockSize);
  const { prefix, name } = splitPath(path);
  writeString(block, 0, 100, name);
  writeOctal(block, 100, 8, 0o644);
  writeOctal(block, 108, 8, 0);
  writeOctal(block, 116, 8, 0);
  writeOctal(block, 124, 12, size);
  writeOctal(block, 136, 12, 0);
  block.fill(0x20, 148, 156); // the checksum field counts as spaces while summing
  block[156] = 0x30; // '0': regular file
  writeString(block, 257, 6, 'ustar\0');
  writeString(block, 263, 2, '00');
  writeString(block, 345, 155, prefix);
  let sum = 0;
  for (const b of block) sum += b;
  writeString(block, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return block;
}

/** A tar archive of `files` (path → UTF-8 text), in the given order, ended by two zero blocks. */
export function writeTar(files: Iterable<{ path: string; text: string }>): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  for (const f of files) {
    const data = encoder.encode(f.text);
    const padded = Math.ceil(data.length / blockSize) * blockSize;
    const h = header(f.path, data.length);
    const body = new Uint8Array(padded);
    body.set(data);
    parts.push(h, body);
    total += blockSize + padded;
  }
  parts.push(new Uint8Array(2 * blockSize));
  total += 2 * blockSize;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
