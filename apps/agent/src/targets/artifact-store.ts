// The artifacts of the agent's targets: fetched once per digest, checked, kept in the state
// folder (so a restart during a registry outage runs what ran before), and checked again when
// read back. The bytes must hash to the digest the assignment names, and the spec must be the one
// of those bytes: a node runs exactly the version it was told to, or nothing. A script pinning
// providers comes with the provider releases the registry resolves now; a kept copy whose
// releases are not the ones the assignment lists (a provider was released or yanked) is fetched
// again.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ProgramSpec, parseProvider, type ProviderDefinition, specFromJson } from '@probeyard/compat';
import type { AgentApi, ArtifactAnswer, Assignment } from '../client.js';
import { AgentError } from '../errors.js';
import { writeFileAtomic } from '../state/state-dir.js';

/** A checked artifact: the spec the agent relocates for its node. */
export interface Artifact {
  digest: string;
  versionId: string;
  program: { name: string; version: string };
  artifactKind: string;
  spec: ProgramSpec;
  /**
   * A script pinning providers: the releases the registry resolved when it was fetched, and the
   * published bytes (the script artifact the agent compiles for its own kernel through them).
   */
  providers?: { definitions: ProviderDefinition[]; bytes: Uint8Array };
}

/** Why an artifact is refused for good (not worth fetching again). */
export type ArtifactRefusal = 'digest-mismatch' | 'malformed-spec' | 'malformed-provider';

export class ArtifactRefused extends AgentError {
  constructor(
    readonly refusal: ArtifactRefusal,
    message: string,
    targetId: string,
  ) {
    super('artifact', message, { targetId, retryable: false });
  }
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

function check(a: Assignment, answer: ArtifactAnswer): Artifact {
  const bytes = Buffer.from(answer.artifact, 'base64');
  const actual = sha256(bytes);
  if (actual !== a.digest) {
    throw new ArtifactRefused('digest-mismatch', `artifact of ${a.program.name}@${a.program.version}: sha256 ${actual} of its ${bytes.length} bytes does not match the assignment's digest ${a.digest}`, a.targetId);
  }
  if (answer.digest !== a.digest) {
    throw new ArtifactRefused('digest-mismatch', `artifact of ${a.program.name}@${a.program.version}: the registry names digest ${answer.digest}, the assignment ${a.digest}`, a.targetId);
  }
  let spec: ProgramSpec;
  try {
    spec = specFromJson(answer.spec);
  } catch (e) {
    throw new ArtifactRefused('malformed-spec', `artifact of ${a.program.name}@${a.program.version}: spec: ${(e as Error).message}`, a.targetId);
  }
  if (spec.digest !== a.digest) {
    throw new ArtifactRefused('digest-mismatch', `artifact of ${a.program.name}@${a.program.version}: its spec is of digest ${spec.digest}, not ${a.digest}`, a.targetId);
  }
  const out: Artifact = { digest: a.digest, versionId: answer.versionId, program: answer.program, artifactKind: answer.artifactKind, spec };
  if (answer.providers !== undefined) {
    const definitions: ProviderDefinition[] = [];
    for (const p of answer.providers) {
      let def: ProviderDefinition;
      try {
        def = parseProvider(p.text);
      } catch (e) {
        throw new ArtifactRefused('malformed-provider', `artifact of ${a.program.name}@${a.program.version}: provider ${p.name}@${p.version}: ${(e as Error).message}`, a.targetId);
      }
      if (def.name !== p.name || def.version !== p.version) {
        throw new ArtifactRefused('malformed-provider', `artifact of ${a.program.name}@${a.program.version}: provider ${p.name}@${p.version}: its text is ${def.name}@${def.version}`, a.targetId);
      }
      definitions.push(def);
    }
    out.providers = { definitions, bytes };
  }
  return out;
}

/** The provider releases of an artifact answer as an assignment lists them (`io@1.1.0`, sorted). */
export function providerReleases(answer: Pick<ArtifactAnswer, 'providers'>): string[] {
  return (answer.providers ?? []).map((p) => `${p.name}@${p.version}`).sort();
}

/** Whether a kept answer still has the releases the assignment names (a provider release or yank since: fetch again). */
function sameProviders(a: Assignment, answer: ArtifactAnswer): boolean {
  if (a.providers === undefined) return answer.providers === undefined;
  // a pin with no release left is listed as `io@1.x: none`; the registry hands nothing for it
  const want = a.providers.filter((p) => !p.endsWith(': none'));
  return JSON.stringify(providerReleases(answer)) === JSON.stringify(want);
}

export class ArtifactStore {
  constructor(
    private readonly dir: string,
    private readonly api: AgentApi,
  ) {}

  private path(digest: string): string {
    return join(this.dir, `${digest}.json`);
  }

  /** The checked artifact of an assignment: from the folder, else from the registry. */
  async get(a: Assignment): Promise<Artifact> {
    if (!/^[0-9a-f]{64}$/.test(a.digest)) throw new ArtifactRefused('digest-mismatch', `artifact: '${a.digest}' is not a sha256 digest`, a.targetId);
    let cached: ArtifactAnswer | undefined;
    try {
      cached = JSON.parse(readFileSync(this.path(a.digest), 'utf8')) as ArtifactAnswer;
    } catch {
      cached = undefined;
    }
    if (cached && sameProviders(a, cached)) {
      try {
        return check(a, cached);
      } catch {
        // a damaged copy: fetch it again
      }
    }
    const answer = await this.api.artifact(a.targetId);
    const artifact = check(a, answer);
    writeFileAtomic(this.path(a.digest), JSON.stringify(answer), 0o600);
    return artifact;
  }
}
