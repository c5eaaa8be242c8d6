// Runs the `probeyard` command in-process (apps/cli's run) and keeps what it printed.
import { readFile, writeFile } from 'node:fs/promises';
import { type CliIo, run } from '@probeyard/cli';

export async function probeyard(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      err += t;
    },
    readStdin: async () => new Uint8Array(0),
    readFile: async (path) => new Uint8Array(await readFile(path)),
    writeFile: (path, data) => writeFile(path, data),
  };
  const code = await run(args, io);
  return { code, out, err };
}
