import { isCompatError, parseRodataAssignment } from '@probeyard/compat';
import type { Command } from '../command.js';
import { isLabelKey, keyRule } from './agents.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { callRegistry, parseOptions, registryClient, resolveTarget, targetOptions } from '../registry.js';

const help = `usage: probeyard deploy NAME@VERSION --selector k=v[,k=v…] [--set NAME=VALUE]... [--json]

Deploys a published version to every agent of the tenant whose labels include every k=v pair of the
selector (exact match); agents that enrol or are relabelled later join it. Needs the publisher role.
A yanked version is refused. Prints the deployment id and how many agents it targets.

  --set NAME=VAL   a .rodata option (\`const volatile\` variable) of the object, as a libbpf tool's
                   command line sets it before load (repeatable): --set filter_pid=1234
                   --set filter_failed=true. The registry checks each names a read-only variable
                   of the version and fits its size; every agent sets them before load, and its
                   verdict is for the object with them (a disabled option prunes branches).
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

/** `--set NAME=VALUE`s → `{ NAME: "VALUE" }` (decimal text or true/false), or a usage error (exit 2) before any request. */
export function parseSetOptions(sets: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const text of sets) {
    let name: string;
    let value: bigint | number | boolean;
    try {
      [name, value] = parseRodataAssignment(text);
    } catch (err) {
      if (isCompatError(err)) throw new CliError(`--set: ${err.message.replace(/^rodata: /, '')}`);
      throw err;
    }
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name)) throw new CliError(`--set: '${name}' is not a C variable name`);
    if (name in out) throw new CliError(`--set: ${name} given twice`);
    out[name] = String(value);
  }
  return out;
}

export const deployCommand: Command = {
  name: 'deploy',
  summary: 'deploy a version to the agents matching a label selector',
  help,
  async run(args: string[], io: CliIo) {
    const { values, positionals } = parseOptions(args, { ...targetOptions, selector: { type: 'string' }, set: { type: 'string', multiple: true }, json: { type: 'boolean' } });
    if (positionals.length !== 1 || !positionals[0]) throw new CliError('expected one NAME@VERSION');
    const { name, version } = parseNameAtVersion(positionals[0]);
    if (values.selector === undefined) throw new CliError('--selector k=v is required');
    const selector = checkSelector(values.selector);
    const options = parseSetOptions(values.set ?? []);
    const { url, token } = resolveTarget(values);
    if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
    const api = registryClient(url, token);
    const { deployment } = await callRegistry(url, () => api.deployment.create.mutate({ name, version, selector, ...(Object.keys(options).length > 0 ? { options } : {}) }));
    if (values.json) io.stdout(`${JSON.stringify(deployment, null, 2)}\n`);
    else {
      const n = deployment.targets.total;
      const set = Object.entries(deployment.options).map(([k, v]) => `${k}=${v}`);
      io.stdout(`deployed ${deployment.program.name}@${deployment.program.version} to ${n} agent${n === 1 ? '' : 's'} matching ${deployment.selectorText}${set.length ? ` with ${set.join(' ')}` : ''}\n`);
      io.stdout(`${deployment.id}\n`);
    }
    return ExitCode.ok;
  },
};
