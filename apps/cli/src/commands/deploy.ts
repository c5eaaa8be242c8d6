import type { Command } from '../command.js';
import { isLabelKey, keyRule } from './agents.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { callRegistry, parseOptions, registryClient, resolveTarget, targetOptions } from '../registry.js';

const help = `usage: probeyard deploy NAME@VERSION --selector k=v[,k=v…] [--json]

Deploys a published version to every agent of the tenant whose labels include every k=v pair of the
selector (exact match); agents that enrol or are relabelled later join it. Needs the publisher role.
A yanked version is refused. Prints the deployment id and how many agents it targets.
Registry and token: --registry URL --token T, PROBEYARD_REGISTRY / PROBEYARD_TOKEN, or \`probeyard login\`.`;

/** `name@version` → its parts, or a usage error. */
export function parseNameAtVersion(text: string): { name: string; version: string } {
  const at = text.lastIndexOf('@');
  const name = text.slice(0, at);
  const version = text.slice(at + 1);
  if (at <= 0 || !version || !/^[a-z0-9][a-z0-9._-]{0,62}$/.test(name)) throw new CliError(`expected NAME@VERSION, got '${text}'`);
  return { name, version };
}

/** `k=v,k2=v2` checked on this side too, so a typo is unusable input (exit 2) before any request. */
export function checkSelector(text: string): string {
  const parts = text.split(',');
  const keys = new Set<string>();
  for (const part of parts) {
    const m = /^\s*([^=]*?)\s*=\s*([^,=]{0,63})\s*$/.exec(part);
    if (!m?.[1]) throw new CliError(`--selector: '${part}' is not k=v`);
    if (!isLabelKey(m[1])) throw new CliError(`--selector: label key '${m[1]}' is not ${keyRule}`);
    if (keys.has(m[1])) throw new CliError(`--selector: key '${m[1]}' given twice`);
    keys.add(m[1]);
  }
  return text;
}

export const deployCommand: Command = {
  name: 'deploy',
  summary: 'deploy a version to the agents matching a label selector',
  help,
  async run(args: string[], io: CliIo) {
    const { values, positionals } = parseOptions(args, { ...targetOptions, selector: { type: 'string' }, json: { type: 'boolean' } });
    if (positionals.length !== 1 || !positionals[0]) throw new CliError('expected one NAME@VERSION');
    const { name, version } = parseNameAtVersion(positionals[0]);
    if (values.selector === undefined) throw new CliError('--selector k=v is required');
    const selector = checkSelector(values.selector);
    const { url, token } = resolveTarget(values);
    if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
    const api = registryClient(url, token);
    const { deployment } = await callRegistry(url, () => api.deployment.create.mutate({ name, version, selector }));
    if (values.json) io.stdout(`${JSON.stringify(deployment, null, 2)}\n`);
    else {
      const n = deployment.targets.total;
      io.stdout(`deployed ${deployment.program.name}@${deployment.program.version} to ${n} agent${n === 1 ? '' : 's'} matching ${deployment.selectorText}\n`);
      io.stdout(`${deployment.id}\n`);
    }
    return ExitCode.ok;
  },
};
