import { readFile } from 'node:fs/promises';

/** Where a command reads and writes: the process by default, buffers in tests. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Reads all of standard input. */
  readStdin: () => Promise<Uint8Array>;
  readFile: (path: string) => Promise<Uint8Array>;
  writeFile: (path: string, data: Uint8Array | string) => Promise<void>;
}

export const processIo: CliIo = {
  stdout: (text) => {
    process.stdout.write(text);
  },
  stderr: (text) => {
    process.stderr.write(text);
  },
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return new Uint8Array(Buffer.concat(chunks));
  },
  readFile: async (path) => new Uint8Array(await readFile(path)),
  writeFile: async (path, data) => {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(path, data);
  },
};

/** Exit codes a script can rely on. */
export const ExitCode = {
  /** The command did what was asked. */
  ok: 0,
  /** The input was understood and refused (a rejected program, a missing object). */
  refused: 1,
  /** The input or the command line could not be used. */
  usage: 2,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** An error that ends a command with a message and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.usage,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CliError';
  }
}
