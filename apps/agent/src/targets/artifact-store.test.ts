// The artifact store with a script pinning providers: the releases come with the artifact, are
// parsed and checked against what they claim to be; a kept copy is used while the assignment names
// the same releases and fetched again when a provider release or yank changed them; a provider
// text that does not parse (or is another release than it says) is refused for good, in words.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { specToJson } from '@probeyard/compat';
import { parseEventFormat } from '@probeyard/formats';
import { parseProvider } from '@probeyard/compat';
import { compileScript, providerResolver, targetOfFormats } from '@probeyard/script';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentApi, ArtifactAnswer, Assignment } from '../client.js';
import { ArtifactStore } from './artifact-store.js';

const format = `name: block_rq_complete\nID: 392\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:int errors;\toffset:8;\tsize:4;\tsigned:1;\n\nprint fmt: "%d", REC->errors\n`;
const ioText = (version: string) =>
  JSON.stringify({
    provider: 'io',
    version,
    probes: { done: { args: { error: 'int' }, implementations: [{ for: 'errors', tracepoint: 'block/block_rq_complete', when: [{ field: 'errors', kind: 'int' }], args: { error: 'args.errors' } }] } },
  });

async function published(): Promise<{ bytes: Uint8Array; digest: string; spec: unknown }> {
  const r = await compileScript('io:::done { @[args.error] = count(); }', { target: targetOfFormats([parseEventFormat(format, { system: 'block' })]), providers: providerResolver([parseProvider(ioText('1.0.0'))]) });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('; '));
  return { bytes: r.artifact, digest: r.spec.digest, spec: specToJson(r.spec) };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A store over a registry that answers `answers` in turn (and counts the calls). */
function storeOf(answers: ArtifactAnswer[]) {
  const dir = mkdtempSync(join(tmpdir(), 'probeyard-artifacts-'));
  dirs.push(dir);
  const calls = { n: 0 };
  const api = { artifact: async () => answers[Math.min(calls.n++, answers.length - 1)]! } as unknown as AgentApi;
  return { store: new ArtifactStore(dir, api), calls };
}

describe('ArtifactStore with providers', () => {
  it('keeps the releases with the artifact, and fetches again when the assignment names others', async () => {
    const p = await published();
    const answer = (versions: string[]): ArtifactAnswer => ({
      versionId: 'v1',
      program: { name: 'ioerr', version: '1.0.0' },
      artifactKind: 'script',
      artifact: Buffer.from(p.bytes).toString('base64'),
      digest: p.digest,
      spec: p.spec,
      manifest: {},
      providers: versions.map((v) => ({ name: 'io', version: v, text: ioText(v) })),
    });
    const { store, calls } = storeOf([answer(['1.0.0']), answer(['1.1.0'])]);
    const a: Assignment = { targetId: 't1', deploymentId: 'd1', program: { name: 'ioerr', version: '1.0.0' }, versionId: 'v1', digest: p.digest, size: p.bytes.length, artifactKind: 'script', desiredState: 'running', providers: ['io@1.0.0'] };
    const first = await store.get(a);
    expect(first.providers?.definitions.map((d) => `${d.name}@${d.version}`)).toEqual(['io@1.0.0']);
    expect(Buffer.from(first.providers!.bytes).equals(Buffer.from(p.bytes))).toBe(true);
    await store.get(a);
    expect(calls.n).toBe(1); // the kept copy
    const again = await store.get({ ...a, providers: ['io@1.1.0'] });
    expect(calls.n).toBe(2);
    expect(again.providers?.definitions.map((d) => d.version)).toEqual(['1.1.0']);
  });

  it.each([
    ['a text that does not parse', { name: 'io', version: '1.0.0', text: '{' }, 'provider io@1.0.0: provider: not JSON'],
    ['another release than it says', { name: 'io', version: '1.0.0', text: ioText('9.9.9') }, 'provider io@1.0.0: its text is io@9.9.9'],
  ])('refuses %s for good', async (_name, provider, message) => {
    const p = await published();
    const { store } = storeOf([
      { versionId: 'v1', program: { name: 'ioerr', version: '1.0.0' }, artifactKind: 'script', artifact: Buffer.from(p.bytes).toString('base64'), digest: p.digest, spec: p.spec, manifest: {}, providers: [provider] },
    ]);
    const err = await store
      .get({ targetId: 't1', deploymentId: 'd1', program: { name: 'ioerr', version: '1.0.0' }, versionId: 'v1', digest: p.digest, size: p.bytes.length, artifactKind: 'script', desiredState: 'running', providers: ['io@1.0.0'] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ refusal: 'malformed-provider' });
    expect((err as Error).message).toContain(message);
  });
});
