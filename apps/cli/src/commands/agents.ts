import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { callRegistry, parseOptions, registryClient, resolveTarget, table, targetOptions } from '../registry.js';

const help = `usage: probeyard agents enroll-token [--label k=v ...] [--expires-minutes N] [--json]
       probeyard agents list [--json]
       probeyard agents label ID k=v ... [k- ...] [--replace] [--json]
       probeyard agents revoke ID [--json]

The tenant's node agents (\`probeyard-agent\`). \`enroll-token\` makes a one-time enrolment token
(admin role), printed once as the last line, for \`probeyard-agent enroll --token T\`; its labels
are given to the agent that spends it (and win over the agent's own). \`list\` shows every agent
with its labels, kernel profile and when it was last seen. \`label\` sets labels (k=v) and removes
them (k-) on top of the agent's current ones, or with --replace sets exactly the given ones;
deployments whose selector it now matches get a target for it, those it no longer matches are
stopped by the agent. \`revoke\` stops the agent's credential from working (the node must enrol
again). Registry and token: --registry URL --token T, PROBEYARD_REGISTRY / PROBEYARD_TOKEN, or
\`probeyard login\`.`;

const idPattern = /^[0-9a-f-]{36}$/i;
/**
 * Label keys as the registry checks them (apps/registry `src/schemas.ts`, Kubernetes' rule): an
 * optional DNS prefix (lowercase, up to 253 characters) and `/`, then a name of 1 to 63 letters,
 * digits, `-`, `_` and `.` that starts and ends with a letter or digit.
 */
const keyPattern = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\/)?[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
export const isLabelKey = (key: string) => {
  const slash = key.indexOf('/');
  return keyPattern.test(key) && slash <= 253 && key.length - slash - 1 <= 63;
};
export const keyRule = 'an optional DNS prefix and /, then 1 to 63 letters, digits, -, _ and . starting and ending with a letter or digit';

/** `k=v` words into labels (values up to 63 characters), as the registry checks them. */
export function parseLabelArgs(words: readonly string[], what: string): { set: Record<string, string>; remove: string[] } {
  const set: Record<string, string> = {};
  const remove: string[] = [];
  for (const w of words) {
    if (w.endsWith('-') && !w.includes('=')) {
      const key = w.slice(0, -1);
      if (!isLabelKey(key)) throw new CliError(`${what}: '${w}': label key '${key}' is not ${keyRule}`);
      remove.push(key);
      continue;
    }
    const eq = w.indexOf('=');
    if (eq <= 0) throw new CliError(`${what}: '${w}' is not k=v (or k- to remove)`);
    const key = w.slice(0, eq);
    const value = w.slice(eq + 1);
    if (!isLabelKey(key)) throw new CliError(`${what}: label key '${key}' is not ${keyRule}`);
    if (value.length > 63) throw new CliError(`${what}: label ${key}: value has ${value.length} characters, the limit is 63`);
    if (key in set) throw new CliError(`${what}: label ${key} given twice`);
    set[key] = value;
  }
  return { set, remove };
}

const labelText = (labels: Record<string, string>) =>
  Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

function ago(iso: string | null, now: number): string {
  if (!iso) return 'never';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 120) return `${s}s ago`;
  if (s < 7200) return `${Math.round(s / 60)}m ago`;
  if (s < 172_800) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86_400)}d ago`;
}

export const agentsCommand: Command = {
  name: 'agents',
  summary: 'enrolment tokens, list, label and revoke node agents',
  help,
  async run(args: string[], io: CliIo) {
    const { values, positionals } = parseOptions(args, {
      ...targetOptions,
      label: { type: 'string', multiple: true },
      'expires-minutes': { type: 'string' },
      replace: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const [verb, ...rest] = positionals;
    if (verb === undefined) throw new CliError('expected enroll-token, list, label or revoke');
    if (!['enroll-token', 'list', 'label', 'revoke'].includes(verb)) throw new CliError(`unknown subcommand '${verb}' (enroll-token, list, label, revoke)`);
    if (verb !== 'enroll-token' && values.label !== undefined) throw new CliError(`${verb}: --label belongs to enroll-token (label takes k=v words)`);
    const { url, token } = resolveTarget(values);
    if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
    const api = registryClient(url, token);

    if (verb === 'enroll-token') {
      if (rest.length > 0) throw new CliError(`enroll-token: unexpected argument '${rest[0]}'`);
      const { set: labels } = parseLabelArgs(values.label ?? [], '--label');
      const minutes = values['expires-minutes'] === undefined ? undefined : Number(values['expires-minutes']);
      if (minutes !== undefined && !(Number.isInteger(minutes) && minutes >= 1 && minutes <= 7 * 24 * 60)) {
        throw new CliError(`enroll-token: --expires-minutes takes 1 to ${7 * 24 * 60}, not ${values['expires-minutes']}`);
      }
      const r = await callRegistry(url, () => api.agent.createEnrollmentToken.mutate({ labels, ...(minutes ? { expiresInMinutes: minutes } : {}) }));
      if (values.json) io.stdout(`${JSON.stringify(r, null, 2)}\n`);
      else {
        io.stdout(`enrolment token ${r.id}${Object.keys(labels).length ? ` with labels ${labelText(labels)}` : ''}, one use, expires ${r.expiresAt}\n`);
        io.stdout(`use it once: probeyard-agent enroll --registry ${url} --token <the token> --state DIR\n`);
        io.stdout('the token is shown once:\n');
        io.stdout(`${r.enrollmentToken}\n`);
      }
      return ExitCode.ok;
    }

    if (verb === 'list') {
      if (rest.length > 0) throw new CliError(`list: unexpected argument '${rest[0]}'`);
      const { agents } = await callRegistry(url, () => api.agent.list.query({}));
      if (values.json) {
        io.stdout(`${JSON.stringify(agents, null, 2)}\n`);
        return ExitCode.ok;
      }
      const now = Date.now();
      const rows = [['ID', 'HOSTNAME', 'LABELS', 'KERNEL PROFILE', 'VERSION', 'LAST SEEN', 'STATE']];
      for (const a of agents) {
        rows.push([a.id, a.hostname, labelText(a.labels) || '-', a.kernelProfileId ?? '-', a.agentVersion || '-', ago(a.lastSeenAt, now), a.revokedAt ? 'revoked' : 'active']);
      }
      io.stdout(`${table(rows)}\n`);
      return ExitCode.ok;
    }

    const id = rest[0];
    if (!id || !idPattern.test(id)) throw new CliError(`${verb}: expected an agent ID${id ? `, got '${id}'` : ''}`);

    if (verb === 'revoke') {
      if (rest.length > 1) throw new CliError(`revoke: unexpected argument '${rest[1]}'`);
      const { agent } = await callRegistry(url, () => api.agent.revoke.mutate({ agentId: id }));
      io.stdout(values.json ? `${JSON.stringify(agent, null, 2)}\n` : `revoked agent ${agent.id} (${agent.hostname}): its credential no longer works\n`);
      return ExitCode.ok;
    }

    // label
    const { set, remove } = parseLabelArgs(rest.slice(1), 'label');
    if (Object.keys(set).length === 0 && remove.length === 0) throw new CliError('label: expected k=v (set) or k- (remove) words');
    if (values.replace && remove.length > 0) throw new CliError('label: --replace sets exactly the given labels; k- has nothing to remove');
    let labels: Record<string, string>;
    if (values.replace) labels = set;
    else {
      const { agents } = await callRegistry(url, () => api.agent.list.query({}));
      const current = agents.find((a) => a.id === id);
      if (!current) throw new CliError(`agent not found: ${id}`, ExitCode.refused);
      labels = { ...current.labels, ...set };
      for (const k of remove) delete labels[k];
    }
    const { agent } = await callRegistry(url, () => api.agent.setLabels.mutate({ agentId: id, labels }));
    io.stdout(values.json ? `${JSON.stringify(agent, null, 2)}\n` : `agent ${agent.id} (${agent.hostname}) labels: ${labelText(agent.labels) || '(none)'}\n`);
    return ExitCode.ok;
  },
};
