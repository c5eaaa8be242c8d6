// An agent's labels (what deployment selectors match): automatic ones from the node, then a
// config file's, then `--label k=v` flags (each later source wins). The enrolment token's labels
// are added by the registry and win over all of these.
import { readFileSync } from 'node:fs';
import { hostname as osHostname, machine, release } from 'node:os';
import { AgentError } from './errors.js';

export type Labels = Record<string, string>;

const keyPattern = /^[A-Za-z0-9._/-]{1,63}$/;

/** Checks one label as the registry does (key: letters, digits, `._/-`, up to 63; value up to 63, no control characters). */
export function checkLabel(key: string, value: string, where: string): void {
  if (!keyPattern.test(key)) throw new AgentError('usage', `${where}: label key '${key}' is not letters, digits and ._/- (1 to 63)`);
  if (value.length > 63) throw new AgentError('usage', `${where}: label ${key}: value has ${value.length} characters, the limit is 63`);
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new AgentError('usage', `${where}: label ${key}: value has control characters`);
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
