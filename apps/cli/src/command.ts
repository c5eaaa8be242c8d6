import type { CliIo } from './io.js';

/** One `probeyard` subcommand. */
export interface Command {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** The full `--help` text. */
  help: string;
  run: (args: string[], io: CliIo) => Promise<number>;
}
