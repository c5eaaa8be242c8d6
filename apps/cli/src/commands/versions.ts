import type { Command } from '../command.js';
import { CliError, ExitCode } from '../io.js';
import { callRegistry, parseOptions, registryClient, resolveTarget, table, targetOptions } from '../registry.js';

const help = `usage: probeyard versions NAME [--json]

The versions of a program in the registry, newest first: digest, kind (elf or asm), size, when
and by whom published, and whether it is yanked (with the reason). Yanked versions stay listed.

Exit codes: 0 listed, 1 no such program, 2 unusable input.`;

export const versionsCommand: Command = {
  name: 'versions',
  summary: 'list the versions of a program in the registry',
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { ...targetOptions, json: { type: 'boolean' } });
    if (positionals.length !== 1) throw new CliError(`expected one NAME, got ${positionals.length}\n\n${help}`);
    const { url, token } = resolveTarget(values);
    if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
    const r = await callRegistry(url, () => registryClient(url, token).version.list.query({ name: positionals[0] ?? '' }));
    if (values.json) {
      io.stdout(`${JSON.stringify(r.versions, null, 2)}\n`);
      return ExitCode.ok;
    }
    const rows = [['VERSION', 'SHA256', 'KIND', 'SIZE', 'PUBLISHED', 'YANKED']];
    for (const v of r.versions) {
      rows.push([v.version, v.digest.slice(0, 12), v.artifactKind, String(v.size), v.publishedAt.slice(0, 19), v.yanked ? `${v.yanked.at.slice(0, 19)}: ${v.yanked.reason}` : '-']);
    }
    io.stdout(`${table(rows)}\n`);
    return ExitCode.ok;
  },
};
