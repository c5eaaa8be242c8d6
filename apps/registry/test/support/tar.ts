// A minimal ustar writer for tests and benches (paths under 100 bytes, regular files only), gzipped:
// big `events/` trees without writing thousands of files to disk.
import { gzipSync } from 'node:zlib';

function header(path: string, size: number): Uint8Array {
  const h = new Uint8Array(512);
  const put = (text: string, at: number) => h.set(Buffer.from(text, 'utf8'), at);
  if (Buffer.byteLength(path) > 99) throw new Error(`tar: path longer than 99 bytes: ${path}`);
  put(path, 0);
  put('0000644\0', 100);
  put('0000000\0', 108);
  put('0000000\0', 116);
  put(`${size.toString(8).padStart(11, '0')}\0`, 124);
  put('00000000000\0', 136);
  put('        ', 148);
  put('0', 156);
  put('ustar\0', 257);
  put('00', 263);
  let sum = 0;
  for (const b of h) sum += b;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

/** A `.tar.gz` of `files`. */
export function tarGz(files: Iterable<{ path: string; text: string }>): Buffer {
  const parts: Uint8Array[] = [];
  for (const f of files) {
    const body = Buffer.from(f.text, 'utf8');
    parts.push(header(f.path, body.length), body, new Uint8Array((512 - (body.length % 512)) % 512));
  }
  parts.push(new Uint8Array(1024));
  return gzipSync(Buffer.concat(parts));
}

/** An `events/` tree of `count` small, distinct, valid format files; `tag` makes trees differ; base64 of its `.tar.gz`. */
export function eventsTree(count: number, tag: string, body?: (i: number) => string): string {
  const files = Array.from({ length: count }, (_, i) => ({
    path: `events/s${i % 50}/${tag}${i}/format`,
    text:
      body?.(i) ??
      `name: ${tag}${i}\nID: ${i + 1}\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int x;\toffset:8;\tsize:4;\tsigned:1;\n\nprint fmt: "x=%d", REC->x\n`,
  }));
  return tarGz(files).toString('base64');
}
