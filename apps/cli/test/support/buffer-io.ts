// The CliIo that CLI tests pass to run(argv, io): output into strings, files from a map (and from
// disk when asked), standard input from a string or bytes.
import { readFile } from 'node:fs/promises';
import type { CliIo } from '../../src/io.js';

export interface BufferIo extends CliIo {
  out: string;
  err: string;
  /** In-memory files: what the command may read, and what it wrote. */
  files: Map<string, Uint8Array | string>;
}

export interface BufferIoOptions {
  files?: Record<string, string | Uint8Array>;
  stdin?: string | Uint8Array;
  /** Read paths that are not in `files` from disk (default: such paths are ENOENT). */
  disk?: boolean;
}

const encode = (data: string | Uint8Array): Uint8Array => (typeof data === 'string' ? new TextEncoder().encode(data) : data);

export function bufferIo(options: BufferIoOptions = {}): BufferIo {
  const io: BufferIo = {
    out: '',
    err: '',
    files: new Map(Object.entries(options.files ?? {})),
    stdout: (t) => {
      io.out += t;
    },
    stderr: (t) => {
      io.err += t;
    },
    readStdin: async () => encode(options.stdin ?? ''),
    readFile: async (path) => {
      const f = io.files.get(path);
      if (f !== undefined) return encode(f);
      if (options.disk) return new Uint8Array(await readFile(path));
      throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' });
    },
    writeFile: async (path, data) => {
      io.files.set(path, data);
    },
  };
  return io;
}
