// A script pinning providers on the node's own kernel (`resolveThroughProviders`, what the target
// manager runs): the build relocated where its implementation applies, compiled through another
// where the kernel needs it (relocated, saying which), refused where none applies (each
// implementation's reason), and a broken artifact refused in words, never a crash.
import { type KernelProfile, parseProvider, profileOfFiles } from '@probeyard/compat';
import { parseEventFormat } from '@probeyard/formats';
import { loadForProfile } from '@probeyard/runtime';
import { compileScript, providerResolver, targetOfFormats } from '@probeyard/script';
import { describe, expect, it } from 'vitest';
import { completeText, io as ioText } from '../../test/support/block-io.js';
import { resolveThroughProviders } from './target-manager.js';

const io = (version: string, withError: boolean) => parseProvider(ioText(version, withError));
const kernel = (text: string): Promise<KernelProfile> => profileOfFiles([{ path: 'block/block_rq_complete/format', text }], { release: 'test' });

async function artifact(): Promise<Uint8Array> {
  const r = await compileScript('io:::done /args.error != 0/ { @[args.error] = count(); }', {
    target: targetOfFormats([parseEventFormat(completeText('errors'), { system: 'block' })]),
    providers: providerResolver([io('1.0.0', false)]),
  });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('; '));
  return r.artifact;
}

describe('resolveThroughProviders', () => {
  it.each([
    ['the build’s kernel', completeText('errors'), '1.0.0', { ok: true, status: 'compatible', via: ['io:::done via io@1.0.0, implementation for errors (before 4.20)'] }],
    ['errors moved', completeText('errors', 32), '1.0.0', { ok: true, status: 'relocated', via: ['io:::done via io@1.0.0, implementation for errors (before 4.20)'] }],
    ['error, through the fix', completeText('error'), '1.1.0', { ok: true, status: 'relocated', via: ['io:::done via io@1.1.0, implementation for error'] }],
  ] as const)('runs on %s', async (_name, format, version, want) => {
    const k = await kernel(format);
    const r = await resolveThroughProviders(await artifact(), [io(version, version !== '1.0.0')], k);
    expect(r).toMatchObject(want);
    if (!r.ok) return;
    // what /metrics says of it (probeyard_agent_target_provider_info): the same, as data
    expect(r.providers).toEqual([{ probe: 'io:::done', provider: 'io', version, implementation: want.via[0].split(', implementation for ')[1] }]);
    // what runs is the verdict's spec: it loads on this kernel as it is
    const loaded = loadForProfile(r.spec, k);
    expect(loaded).toMatchObject({ ok: true, status: 'compatible' });
  });

  it('refuses where no implementation applies, with the reason of each', async () => {
    const r = await resolveThroughProviders(await artifact(), [io('1.0.0', false)], await kernel(completeText('error')));
    expect(r).toEqual({
      ok: false,
      status: 'incompatible',
      reasons: [
        {
          kind: 'provider-unresolved',
          program: 'io:::done',
          event: '',
          text: 'io:::done: io@1.0.0 cannot implement io:::done here: implementation for errors (before 4.20): block/block_rq_complete has no field errors',
        },
      ],
    });
  });

  it.each([
    ['no release of the pinned provider', [], "no provider 'io' is known here"],
    ['an artifact that is not a script', null, 'not a script artifact'],
  ] as const)('refuses %s in words', async (_name, providers, text) => {
    const bytes = providers === null ? new TextEncoder().encode('{"kind":"elf"}') : await artifact();
    const r = await resolveThroughProviders(bytes, providers ?? [io('1.0.0', false)], await kernel(completeText('errors')));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reasons.map((x) => x.text).join('\n')).toContain(text);
  });
});
