import { type ParseArgsConfig, parseArgs } from 'node:util';
import { CliError, type CliIo } from './io.js';

/** One `probeyard` subcommand. */
export interface Command {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** The full `--help` text. */
  help: string;
  run: (args: string[], io: CliIo) => Promise<number>;
}

type ParseArgsOptions = NonNullable<ParseArgsConfig['options']>;
type ParsedArgs<O extends ParseArgsOptions> = ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true }>>;

/**
 * `node:util` parseArgs with positionals allowed, where a bad option ends the command with the
 * parser's message and the command's help (exit code 2).
 */
export function parseCommandArgs<const O extends ParseArgsOptions>(args: string[], options: O, help: string): ParsedArgs<O> {
  try {
    return parseArgs({ args, options, allowPositionals: true });
  } catch (err) {
    throw new CliError(`${(err as Error).message}\n\n${help}`);
  }
}
