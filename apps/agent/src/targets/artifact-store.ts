// The artifacts of the agent's targets: fetched once per digest, checked, kept in the state
// folder (so a restart during a registry outage runs what ran before), and checked again when
// read back. The bytes must hash to the digest the assignment names, and the spec must be the one
// of those bytes: a node runs exactly the version it was told to, or nothing.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ProgramSpec, specFromJson } from '@probeyard/compat';
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
}

/** Why an artifact is refused for good (not worth fetching again). */
export type ArtifactRefusal = 'digest-mismatch' | 'malformed-spec';

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
  return { digest: a.digest, versionId: answer.versionId, program: answer.program, artifactKind: answer.artifactKind, spec };
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
    if (cached) {
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
