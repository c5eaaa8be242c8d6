// `probeyard-agent enroll`: trades a one-time enrolment token for the agent's credential, which is
// stored in the state folder with mode 0600 and never printed or logged.
import { readFileSync, rmSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { AgentApi, type AgentApiOptions } from './client.js';
import { AgentError } from './errors.js';
import { automaticLabels, type Labels, readConfigLabels } from './labels.js';
import { readTraceDatProfile } from './profile/node-profile.js';
import { type Credential, StateDir } from './state/state-dir.js';

export const agentVersion = '0.1.0';

export interface EnrollOptions {
  registry: string;
  /** The one-time enrolment token. */
  token: string;
  state: string;
  /** `--label k=v` flags (win over the config file and the automatic labels). */
  labels?: Labels;
  /** A JSON config file with `labels`. */
  configPath?: string;
  hostname?: string;
  /** `live` or a trace.dat: a replay node's automatic labels are the recording's kernel. */
  feed?: string;
  /** Enrol again although the folder holds a credential. */
  force?: boolean;
  api?: AgentApiOptions;
}

export interface EnrollResult {
  agentId: string;
  hostname: string;
  labels: Labels;
  credentialPath: string;
}

/** Reads an enrolment token from a file (first line), so it never shows in a process list. */
export function readTokenFile(path: string): string {
  try {
    return readFileSync(path, 'utf8').split('\n')[0]!.trim();
  } catch (e) {
    throw new AgentError('usage', `--token-file ${path}: ${(e as Error).message}`, { path, cause: e });
  }
}

export async function enroll(options: EnrollOptions): Promise<EnrollResult> {
  if (!options.token) throw new AgentError('usage', 'enroll: an enrolment token is needed (--token, --token-file or PROBEYARD_ENROLL_TOKEN)');
  let url: URL;
  try {
    url = new URL(options.registry);
  } catch {
    throw new AgentError('usage', `enroll: --registry '${options.registry}' is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new AgentError('usage', `enroll: --registry '${options.registry}' is not http(s)`);
  const state = StateDir.open(options.state, { create: true });
  state.lock();
  try {
    const existing = state.readCredential();
    if (existing && !options.force) {
      throw new AgentError('state', `enroll: ${state.path} already holds the credential of agent ${existing.agentId} of ${existing.registry} (--force enrols again)`, { path: state.path });
    }
    const kernel = options.feed && options.feed !== 'live' ? await readTraceDatProfile(options.feed) : undefined;
    const labels: Labels = {
      ...automaticLabels(kernel ? { release: kernel.release, machine: kernel.machine } : undefined),
      ...(options.configPath ? readConfigLabels(options.configPath) : {}),
      ...(options.labels ?? {}),
    };
    const hostname = (options.hostname ?? osHostname()).slice(0, 100);
    const api = new AgentApi(url.href, undefined, options.api);
    const answer = await api.enroll({ enrollmentToken: options.token, hostname, labels, agentVersion });
    const credential: Credential = {
      registry: url.href.replace(/\/+$/, ''),
      agentId: answer.agent.id,
      credential: answer.credential,
      hostname,
      enrolledAt: answer.agent.enrolledAt,
    };
    if (existing) {
      // What the old agent spooled and was assigned belongs to it: the new credential cannot
      // upload it (another agent's targets), so it goes with the old credential.
      for (const name of ['spool', 'assignments.json', 'artifacts']) rmSync(state.file(name), { recursive: true, force: true });
    }
    state.writeCredential(credential);
    return { agentId: answer.agent.id, hostname, labels: answer.agent.labels, credentialPath: state.file('credential.json') };
  } finally {
    state.unlock();
  }
}
