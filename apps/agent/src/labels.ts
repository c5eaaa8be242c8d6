// An agent's labels (what deployment selectors match): automatic ones from the node, then a
// config file's, then `--label k=v` flags (each later source wins). The enrolment token's labels
// are added by the registry and win over all of these.
import { readFileSync } from 'node:fs';
import { hostname as osHostname, machine, release } from 'node:os';
import { AgentError } from './errors.js';

export type Labels = Record<string, string>;

/**
 * Label keys as the registry checks them (apps/registry `src/schemas.ts`, Kubernetes' rule): an
 * optional DNS prefix (lowercase, up to 253 characters) and `/`, then a name of 1 to 63 letters,
 * digits, `-`, `_` and `.` that starts and ends with a letter or digit.
 */
const keyPattern = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\/)?[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const isLabelKey = (key: string) => {
  const slash = key.indexOf('/');
  return keyPattern.test(key) && slash <= 253 && key.length - slash - 1 <= 63;
};
const keyRule = 'an optional DNS prefix and /, then 1 to 63 letters, digits, -, _ and . starting and ending with a letter or digit';

/** Checks one label as the registry does (the key rule above; value up to 63, no control characters, `,` or `=`). */
export function checkLabel(key: string, value: string, where: string): void {
  if (!isLabelKey(key)) throw new AgentError('usage', `${where}: label key '${key}' is not ${keyRule}`);
  if (value.length > 63) throw new AgentError('usage', `${where}: label ${key}: value has ${value.length} characters, the limit is 63`);
  if (/[\u0000-\u001f\u007f-\u009f,=]/.test(value)) throw new AgentError('usage', `${where}: label ${key}: value has control characters, ',' or '=' (a selector could not match it)`);
}

/** `--label k=v` flags into labels. */
export function parseLabelFlags(flags: readonly string[]): Labels {
  const out: Labels = {};
  for (const f of flags) {
    const eq = f.indexOf('=');
    if (eq <= 0) throw new AgentError('usage', `--label: '${f}' is not k=v`);
    const key = f.slice(0, eq).trim();
    const value = f.slice(eq + 1).trim();
    checkLabel(key, value, '--label');
    out[key] = value;
  }
  return out;
}

/** The `labels` object of a JSON config file (`{ "labels": { "env": "prod" } }`). */
export function readConfigLabels(path: string): Labels {
  let config: unknown;
  try {
    config = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new AgentError('usage', `config ${path}: ${(e as Error).message}`, { path, cause: e });
  }
  const labels = (config as { labels?: unknown } | null)?.labels;
  if (labels === undefined) return {};
  if (labels === null || typeof labels !== 'object' || Array.isArray(labels)) throw new AgentError('usage', `config ${path}: labels: not an object of strings`, { path });
  const out: Labels = {};
  for (const [k, v] of Object.entries(labels)) {
    if (typeof v !== 'string') throw new AgentError('usage', `config ${path}: labels.${k}: not a string`, { path });
    checkLabel(k, v, `config ${path}`);
    out[k] = v;
  }
  return out;
}

/** A label value cut to the registry's 63 characters. */
const fit = (v: string) => v.slice(0, 63);

/**
 * The node's automatic labels. For a replay feed the node is the recording's kernel: its release
 * and architecture come from the recording (`kernel`), not from this machine.
 */
export function automaticLabels(kernel: { release: string; machine: string } = { release: release(), machine: machine() }): Labels {
  const out: Labels = { os: process.platform, hostname: fit(osHostname()) };
  if (kernel.release) out['kernel.release'] = fit(kernel.release);
  if (kernel.machine) out.arch = fit(kernel.machine);
  return out;
}
