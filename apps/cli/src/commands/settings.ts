import type { Command } from '../command.js';
import { CliError, ExitCode } from '../io.js';
import { callRegistry, parseOptions, registryClient, resolveTarget, targetOptions } from '../registry.js';

const help = `usage: probeyard settings [--strict-char-sign on|off] [--json]

Shows the tenant's compatibility settings, or changes them (admin). A change recomputes the
tenant's whole matrix in the background; the old verdicts stay visible until it has.

  --strict-char-sign on|off  also refuse a read of a plain char field whose signedness changed
                             (signedness-changed). Off by default: char is text, and its
                             signedness is the architecture's. A signedness change of any other
                             field is refused always.
  --json                     print the settings as JSON

Exit codes: 0 shown or changed, 1 refused (no permission), 2 unusable input.`;

/** `on`/`off` (and the usual spellings of each) → a boolean; anything else is unusable input. */
export function parseSwitch(name: string, value: string): boolean {
  const v = value.trim().toLowerCase();
  if (['on', 'true', 'yes', '1'].includes(v)) return true;
  if (['off', 'false', 'no', '0'].includes(v)) return false;
  throw new CliError(`--${name}: on or off, not '${value}'`);
}

export const settingsCommand: Command = {
  name: 'settings',
  summary: "show or change the tenant's compatibility settings (--strict-char-sign on|off)",
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { ...targetOptions, 'strict-char-sign': { type: 'string' }, json: { type: 'boolean' } });
    if (positionals.length !== 0) throw new CliError(`unexpected argument ${positionals[0]}\n\n${help}`);
    const change = values['strict-char-sign'] === undefined ? undefined : parseSwitch('strict-char-sign', values['strict-char-sign']);
    const { url, token } = resolveTarget(values);
    if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
    const client = registryClient(url, token);
    if (change === undefined) {
      const r = await callRegistry(url, () => client.compat.settings.query());
      io.stdout(values.json ? `${JSON.stringify(r.settings, null, 2)}\n` : `strict-char-sign  ${r.settings.strictCharSign ? 'on' : 'off'}\nengine            ${r.settings.engine}\n`);
      return ExitCode.ok;
    }
    const r = await callRegistry(url, () => client.compat.setSettings.mutate({ strictCharSign: change }));
    if (values.json) {
      io.stdout(`${JSON.stringify({ ...r.settings, compatJobId: r.compatJobId }, null, 2)}\n`);
    } else if (r.compatJobId === null) {
      io.stdout(`strict-char-sign is already ${change ? 'on' : 'off'}: nothing to recompute\n`);
    } else {
      io.stdout(`strict-char-sign ${change ? 'on' : 'off'}: the matrix is being computed again (compat job ${r.compatJobId}; see \`probeyard compat NAME\`)\n`);
    }
    return ExitCode.ok;
  },
};
