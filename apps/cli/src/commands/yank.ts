import type { Command } from '../command.js';
import { CliError, ExitCode } from '../io.js';
import { callRegistry, parseOptions, registryClient, resolveTarget, targetOptions } from '../registry.js';

const help = `usage: probeyard yank NAME@VERSION --reason TEXT [--json]

Marks a version yanked: it stays listed and readable, marked with the reason, and new
deployments of it are refused. A version is yanked once.

Exit codes: 0 yanked, 1 refused (no such version, already yanked, no permission), 2 unusable input.`;

/** `name@version` → its parts. */
export function parseVersionRef(ref: string): { name: string; version: string | undefined } {
  const at = ref.indexOf('@');
  return at < 0 ? { name: ref, version: undefined } : { name: ref.slice(0, at), version: ref.slice(at + 1) };
}

export const yankCommand: Command = {
  name: 'yank',
  summary: 'mark a program version yanked, with a reason',
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { ...targetOptions, reason: { type: 'string' }, json: { type: 'boolean' } });
    if (positionals.length !== 1) throw new CliError(`expected one NAME@VERSION, got ${positionals.length}\n\n${help}`);
    const { name, version } = parseVersionRef(positionals[0] ?? '');
    if (!name || !version) throw new CliError(`expected NAME@VERSION, not ${positionals[0]}`);
    if (!values.reason) throw new CliError('--reason TEXT is needed');
    const { url, token } = resolveTarget(values);
    if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
    const r = await callRegistry(url, () => registryClient(url, token).version.yank.mutate({ name, version, reason: values.reason ?? '' }));
    io.stdout(values.json ? `${JSON.stringify(r.version, null, 2)}\n` : `yanked ${name}@${version}: ${r.version.yanked?.reason}\n`);
    return ExitCode.ok;
  },
};
