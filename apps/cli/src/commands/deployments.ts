import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { callRegistry, parseOptions, registryClient, resolveTarget, table, targetOptions } from '../registry.js';

const help = `usage: probeyard deployments [list] [--state running|stopped] [--json]
       probeyard deployments show ID [--json]
       probeyard deployments stop ID [--json]

Deployments of the tenant of the current token. \`list\` (the default) shows each with its version,
selector, desired state and its targets by status; \`show\` one deployment with every target (agent,
status, desired state, reason, counters; for a program pinning providers, which implementation
each agent runs: \`via\`); \`stop\` sets its desired state to stopped (publisher role):
agents stop it at their next poll.
Registry and token: --registry URL --token T, PROBEYARD_REGISTRY / PROBEYARD_TOKEN, or \`probeyard login\`.`;

const idPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function oneId(verb: string, rest: string[]): string {
  if (rest.length !== 1 || !rest[0]) throw new CliError(`${verb}: expected one ID`);
  if (!idPattern.test(rest[0])) throw new CliError(`${verb}: not a deployment id: ${rest[0]}`);
  return rest[0];
}

function targetsSummary(t: { total: number; pending: number; running: number; refused: number; failed: number; stopped: number }): string {
  const parts = (['running', 'pending', 'refused', 'failed', 'stopped'] as const).filter((k) => t[k] > 0).map((k) => `${t[k]} ${k}`);
  return `${t.total}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

export const deploymentsCommand: Command = {
  name: 'deployments',
  summary: 'list, show and stop deployments',
  help,
  async run(args: string[], io: CliIo) {
    const { values, positionals } = parseOptions(args, { ...targetOptions, state: { type: 'string' }, json: { type: 'boolean' } });
    const [verb = 'list', ...rest] = positionals;
    if (!['list', 'show', 'stop'].includes(verb)) throw new CliError(`unknown subcommand '${verb}' (list, show, stop)`);
    if (values.state !== undefined && (verb !== 'list' || !['running', 'stopped'].includes(values.state))) {
      throw new CliError('--state is running or stopped, for list');
    }
    const id = verb === 'list' ? undefined : oneId(verb, rest);
    if (verb === 'list' && rest.length > 0) throw new CliError(`list: unexpected argument '${rest[0]}'`);
    const { url, token } = resolveTarget(values);
    if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
    const api = registryClient(url, token);
    const json = (v: unknown) => io.stdout(`${JSON.stringify(v, null, 2)}\n`);

    if (verb === 'list') {
      const state = values.state as 'running' | 'stopped' | undefined;
      const r = await callRegistry(url, () => api.deployment.list.query(state ? { state } : {}));
      if (values.json) {
        json(r.deployments);
        return ExitCode.ok;
      }
      const rows = [['ID', 'PROGRAM', 'SELECTOR', 'DESIRED', 'TARGETS', 'CREATED']];
      for (const d of r.deployments) rows.push([d.id, `${d.program.name}@${d.program.version}`, d.selectorText, d.desiredState, targetsSummary(d.targets), d.createdAt.slice(0, 19)]);
      io.stdout(`${table(rows)}\n`);
      return ExitCode.ok;
    }
    if (verb === 'show') {
      const r = await callRegistry(url, () => api.deployment.get.query({ id: id ?? '' }));
      if (values.json) {
        json(r);
        return ExitCode.ok;
      }
      const d = r.deployment;
      io.stdout(`deployment ${d.id}\n`);
      io.stdout(`program   ${d.program.name}@${d.program.version} (sha256 ${d.digest})\n`);
      const options = Object.entries(d.options).map(([k, v]) => `${k}=${v}`);
      if (options.length > 0) io.stdout(`options   ${options.join(' ')}\n`);
      io.stdout(`selector  ${d.selectorText}\ndesired   ${d.desiredState}\ntargets   ${targetsSummary(d.targets)}\n\n`);
      const rows = [['TARGET', 'AGENT', 'STATUS', 'DESIRED', 'EVENTS', 'LOST', 'REASON']];
      for (const t of r.targets) {
        rows.push([t.id, t.hostname, t.status, t.desiredState, String(t.counters?.eventsSeen ?? '-'), String(t.counters?.eventsLost ?? '-'), t.reason ?? '']);
      }
      io.stdout(`${table(rows)}\n`);
      // a program pinning providers: which implementation each agent runs for each provider probe
      const via = r.targets.filter((t) => t.via.length > 0);
      if (via.length > 0) {
        io.stdout('\nvia (provider implementations each agent runs)\n');
        for (const t of via) for (const v of t.via) io.stdout(`  ${t.hostname} ${t.id}: ${v}\n`);
      }
      return ExitCode.ok;
    }
    const r = await callRegistry(url, () => api.deployment.stop.mutate({ id: id ?? '' }));
    if (values.json) {
      json(r);
      return ExitCode.ok;
    }
    io.stdout(r.changed ? `stopped deployment ${r.deployment.id}\n` : `deployment ${r.deployment.id} was already stopped\n`);
    return ExitCode.ok;
  },
};
