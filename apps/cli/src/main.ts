import type { Command } from './command.js';
import { asmCommand } from './commands/asm.js';
import { conformancePluginCommand } from './commands/conformance-plugin.js';
import { demoCommand } from './commands/demo.js';
import { disasmCommand } from './commands/disasm.js';
import { reportCommand } from './commands/report.js';
import { adminCommand } from './commands/admin.js';
import { agentsCommand } from './commands/agents.js';
import { loginCommand } from './commands/login.js';
import { serveCommand } from './commands/serve.js';
import { upCommand } from './commands/up.js';
import { tokensCommand } from './commands/tokens.js';
import { membersCommand } from './commands/members.js';
import { invitationsCommand } from './commands/invitations.js';
import { deployCommand } from './commands/deploy.js';
import { deploymentsCommand } from './commands/deployments.js';
import { kernelsCommand } from './commands/kernels.js';
import { publishCommand } from './commands/publish.js';
import { versionsCommand } from './commands/versions.js';
import { providersCommand } from './commands/providers.js';
import { yankCommand } from './commands/yank.js';
import { verifyCommand } from './commands/verify.js';
import { compatCommand } from './commands/compat.js';
import { diffFormatsCommand } from './commands/diff-formats.js';
import { inspectCommand } from './commands/inspect.js';
import { runCommand } from './commands/run.js';
import { liveCommand } from './commands/live.js';
import { settingsCommand } from './commands/settings.js';
import { CliError, type CliIo, ExitCode, processIo } from './io.js';

export { CliError, type CliIo, ExitCode } from './io.js';
export type { Command } from './command.js';

/** Every subcommand, in the order `--help` lists them. */
export const commands: readonly Command[] = [asmCommand, disasmCommand, verifyCommand, reportCommand, demoCommand, conformancePluginCommand, upCommand, serveCommand, adminCommand, loginCommand, tokensCommand, membersCommand, invitationsCommand, publishCommand, versionsCommand, yankCommand, providersCommand, kernelsCommand, agentsCommand, deployCommand, deploymentsCommand, inspectCommand, compatCommand, settingsCommand, diffFormatsCommand, runCommand, liveCommand];

function usage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    'usage: probeyard <command> [options]',
    '',
    'commands:',
    ...lines,
    '',
    'Run `probeyard <command> --help` for the options of one command.',
    'Exit codes: 0 success, 1 refused or not found, 2 unusable input.',
    '',
  ].join('\n');
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function run(argv: string[], io: CliIo = processIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(usage());
    return name === undefined ? ExitCode.usage : ExitCode.ok;
  }
  if (name === '--version') {
    io.stdout('probeyard 0.1.0\n');
    return ExitCode.ok;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.stderr(`probeyard: unknown command '${name}'\n\n${usage()}`);
    return ExitCode.usage;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(command.help.endsWith('\n') ? command.help : `${command.help}\n`);
    return ExitCode.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    if (err instanceof CliError) {
      // A registry message may already name the operation (`publish: …`): said once.
      const message = err.message.startsWith(`${name}: `) ? err.message.slice(name.length + 2) : err.message;
      io.stderr(`probeyard ${name}: ${message}\n`);
      return err.exitCode;
    }
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR')) {
      io.stderr(`probeyard ${name}: ${(err as Error).message}\n`);
      return ExitCode.usage;
    }
    io.stderr(`probeyard ${name}: internal error: ${(err as Error).stack ?? String(err)}\n`);
    return ExitCode.refused;
  }
}
