import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { checkRange, type ByteSource } from '../trace-dat/byte-source.js';

/**
 * A {@link ByteSource} over an open file: every `read` is one bounded `pread` of exactly the
 * bytes asked for, so a reader touches only the parts of a trace.dat it decodes (one CPU's
 * pages, not the others'). Call {@link close} when done.
 */
export class FileByteSource implements ByteSource {
  readonly path: string;
  readonly byteLength: number;
  private fd: number | undefined;

  constructor(path: string) {
    this.path = path;
    this.fd = openSync(path, 'r');
    try {
      this.byteLength = fstatSync(this.fd).size;
    } catch (e) {
      closeSync(this.fd);
      throw e;
    }
  }

  read(byteOffset: number, length: number): Uint8Array {
    checkRange(this.byteLength, byteOffset, length);
    if (this.fd === undefined) throw new Error(`read ${this.path}: file is closed`);
    const out = new Uint8Array(length);
    let done = 0;
    while (done < length) {
      const n = readSync(this.fd, out, done, length - done, byteOffset + done);
      if (n === 0) throw new Error(`read ${this.path}: file shrank at ${byteOffset + done}`);
      done += n;
    }
    return out;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
