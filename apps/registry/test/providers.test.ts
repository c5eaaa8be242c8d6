// Providers (issue 19, item 4) through createCaller on PGlite and PostgreSQL: publishing
// (immutable semver versions, yank, audit), per tenant and instance-wide, programs pinning a
// provider major, and "fix the provider" end to end — a cell incompatible on a kernel turns
// compatible when a new minor version adds an implementation, without the program republished.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drainCompatJobs } from '../src/jobs/compat-runner.js';
import { backends, type Harness, openHarness, skipReason } from './harness.js';
import { blockProvider, blockScriptArtifact, tarballOf } from './support/block-provider.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

const io = (version: string, withError: boolean) => blockProvider('io', version, withError);
/** The script (counts by error, and bytes) compiled against the `errors` kernel through io@1.0.0: the artifact a user publishes. */
const scriptArtifact = () => blockScriptArtifact('io', { bytes: true });

/** The script against a provider named `name` (the `io` definition renamed): for instance-wide providers of a unique name. */
const scriptArtifactOf = (name: string) => blockScriptArtifact(name, { bytes: true });

describe.each(backends)('providers on %s', (backend) => {
  const skip = skipReason(backend);
  let h: Harness;
  beforeAll(async () => {
    if (!skip) h = await openHarness(backend);
  });
  afterAll(async () => {
    await h?.close();
  });

  describe.skipIf(skip)('provider.publish, get, list, yank', () => {
    it('publishes immutable versions with an audit row; the same text again is a no-op, another text a conflict', async () => {
      const t = await h.tenant('prov-pub');
      const r = await t.owner.provider.publish({ text: io('1.0.0', false) });
      expect(r).toMatchObject({ provider: 'io', created: true, version: { version: '1.0.0', yankedAt: null }, recomputedTenants: 0 });
      expect((await t.owner.provider.publish({ text: io('1.0.0', false) })).created).toBe(false);
      await expect(t.owner.provider.publish({ text: io('1.0.0', true) })).rejects.toMatchObject({ code: 'CONFLICT' });
      await t.owner.provider.publish({ text: io('1.1.0', true) });
      const got = await t.owner.provider.get({ name: 'io' });
      expect(got.version.version).toBe('1.1.0');
      expect(got.provider).toMatchObject({ name: 'io', scope: 'tenant', versions: [{ version: '1.1.0' }, { version: '1.0.0' }] });
      expect(got.probes[0]!.implementations.map((i) => [i.for, i.tracepoint, i.args.error])).toEqual([
        ['errors (before 4.20)', 'block/block_rq_complete', 'args.errors'],
        ['error', 'block/block_rq_complete', 'args.error'],
      ]);
      expect((await t.owner.provider.get({ name: 'io', version: '1.0.0' })).probes[0]!.implementations).toHaveLength(1);
      const audit = await t.owner.audit.list({});
      expect(audit.entries.filter((e) => e.action === 'provider.publish').map((e) => (e.detail as { version: string }).version)).toEqual(['1.1.0', '1.0.0']);
    });

    it.each([
      ['not JSON', '{', 'provider: not JSON'],
      ['no implementations', JSON.stringify({ provider: 'x', version: '1.0.0', probes: { p: { args: {}, implementations: [] } } }), 'implementations: want a non-empty array'],
      ['a bad version', JSON.stringify({ provider: 'x', version: 'one', probes: { p: {} } }), 'version: want semver'],
    ])('refuses %s with BAD_REQUEST and writes nothing', async (_name, text, message) => {
      const t = await h.tenant('prov-bad');
      const before = await h.counts();
      const err = await t.owner.provider.publish({ text }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'BAD_REQUEST' });
      expect((err as Error).message).toContain(message);
      expect(await h.counts()).toEqual(before);
    });

    it('a viewer reads but does not publish or yank', async () => {
      const t = await h.tenant('prov-role');
      await t.owner.provider.publish({ text: io('1.0.0', false) });
      const viewer = await h.member(t.owner, 'viewer');
      expect((await viewer.caller.provider.list()).providers.map((p) => p.name)).toEqual(['io']);
      await expect(viewer.caller.provider.publish({ text: io('1.1.0', true) })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      await expect(viewer.caller.provider.yank({ name: 'io', version: '1.0.0', reason: 'no' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    });

    it("another tenant's provider is NOT_FOUND to get, yank, and to compile against", async () => {
      const a = await h.tenant('prov-a');
      const b = await h.tenant('prov-b');
      await a.owner.provider.publish({ text: io('1.0.0', false) });
      await expect(b.owner.provider.get({ name: 'io' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(b.owner.provider.yank({ name: 'io', version: '1.0.0', reason: 'mine now' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(b.owner.provider.coverage({ name: 'io' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect((await b.owner.provider.list()).providers).toEqual([]);
      const err = await b.owner.program.publish({ name: 'iodone', version: '1.0.0', artifact: await scriptArtifact() }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'BAD_REQUEST' });
      expect((err as Error).message).toContain("no provider 'io' is known here");
      expect((await a.owner.provider.get({ name: 'io' })).version.yankedAt).toBeNull();
    });

    it('instance-wide providers: the admin publishes, every tenant sees them, a tenant’s own of the same name shadows it, and a tenant cannot yank it', async () => {
      const admin = await h.admin();
      const name = `lib${Date.now().toString(36)}`;
      await admin.provider.publishInstance({ text: io('1.0.0', false).replace('"io"', `"${name}"`) });
      await expect((await h.tenant('prov-anon')).owner.provider.publishInstance({ text: io('1.0.0', false) })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      const t = await h.tenant('prov-inst');
      expect((await t.owner.provider.get({ name })).provider).toMatchObject({ scope: 'instance', versions: [{ version: '1.0.0' }] });
      await expect(t.owner.provider.yank({ name, version: '1.0.0', reason: 'no' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await t.owner.provider.publish({ text: io('2.0.0', true).replace('"io"', `"${name}"`) });
      expect((await t.owner.provider.get({ name })).provider).toMatchObject({ scope: 'tenant', versions: [{ version: '2.0.0' }] });
      expect((await (await h.tenant('prov-other')).owner.provider.get({ name })).provider.scope).toBe('instance');
    });
  });

  describe.skipIf(skip)('provider.pinnedBy', () => {
    it("lists the caller's tenant's versions pinning a provider, never another tenant's pins of the same instance-wide provider", async () => {
      const admin = await h.admin();
      const name = `pin${Date.now().toString(36)}`;
      await admin.provider.publishInstance({ text: io('1.0.0', false).replace('"io"', `"${name}"`) });
      const a = await h.tenant('pin-a');
      const b = await h.tenant('pin-b');
      const c = await h.tenant('pin-c');
      const artifact = await scriptArtifactOf(name);
      expect((await a.owner.program.publish({ name: 'iodone', version: '1.0.0', artifact })).version.providerPins).toEqual({ [name]: 1 });
      await a.owner.program.publish({ name: 'iodone', version: '1.2.0', artifact });
      await a.owner.version.yank({ name: 'iodone', version: '1.0.0', reason: 'superseded' });
      await b.owner.program.publish({ name: 'theirs', version: '3.0.0', artifact });
      // a program of A pinning another provider (its own) is not listed
      await a.owner.provider.publish({ text: io('1.0.0', false).replace('"io"', '"mineonly"') });
      await a.owner.program.publish({ name: 'own', version: '1.0.0', artifact: await scriptArtifactOf('mineonly') });

      const mine = await a.owner.provider.pinnedBy({ name });
      expect(mine).toMatchObject({ provider: name, more: false });
      expect(mine.versions.map((v) => [v.program, v.version, v.major, v.yanked])).toEqual([
        ['iodone', '1.2.0', 1, false],
        ['iodone', '1.0.0', 1, true],
      ]);
      // B sees its own only, C (pinning nothing) sees none; a viewer reads
      expect((await b.owner.provider.pinnedBy({ name })).versions.map((v) => [v.program, v.version])).toEqual([['theirs', '3.0.0']]);
      expect((await c.owner.provider.pinnedBy({ name })).versions).toEqual([]);
      const viewer = await h.member(a.owner, 'viewer');
      expect((await viewer.caller.provider.pinnedBy({ name })).versions).toHaveLength(2);
      // a tenant's own provider is NOT_FOUND to another; bad input is a 400
      await expect(b.owner.provider.pinnedBy({ name: 'mineonly' })).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'provider not found: mineonly' });
      expect((await a.owner.provider.pinnedBy({ name: 'mineonly' })).versions.map((v) => [v.program, v.version])).toEqual([['own', '1.0.0']]);
      await expect(a.owner.provider.pinnedBy({ name: 'Not A Slug' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(a.owner.provider.pinnedBy({ name, extra: 1 } as never)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    });
  });

  describe.skipIf(skip)('compiled objects with provider probes (docs/PROVIDERS-C.md)', () => {
    const ioprov = () => readFileSync(join(root, 'examples/c/ioprov.o')).toString('base64');

    it("pins the provider its probe names, refuses a provider not seen here (another tenant's) or a probe it lacks, and computes its cells through it", async () => {
      const a = await h.tenant('prov-c-a');
      const b = await h.tenant('prov-c-b');
      await a.owner.provider.publish({ text: io('1.0.0', false) });
      // B does not see A's io
      const before = await h.counts();
      await expect(b.owner.program.publish({ name: 'ioprov', version: '1.0.0', artifact: ioprov() })).rejects.toMatchObject({
        code: 'BAD_REQUEST',
        // (other tests of this file publish instance-wide providers, which the message lists)
        message: expect.stringContaining("publish: program on_done attaches to io:::done, but no provider 'io' is known here ("),
      });
      // an io without `done`
      await b.owner.provider.publish({ text: JSON.stringify({ ...JSON.parse(io('1.0.0', false)), probes: { start: JSON.parse(io('1.0.0', false)).probes.done } }) });
      await expect(b.owner.program.publish({ name: 'ioprov', version: '1.0.0', artifact: ioprov() })).rejects.toThrow("publish: program on_done attaches to io:::done, but io@1.0.0 has no probe 'done' (its probes: start)");
      expect((await h.counts()).versions).toBe(before.versions);

      await a.owner.kernel.upload({ name: 'old', release: '4.4.88', tarball: tarballOf('errors') });
      await a.owner.kernel.upload({ name: 'new', release: '5.10.43', tarball: tarballOf('error') });
      const pub = await a.owner.program.publish({ name: 'ioprov', version: '1.0.0', artifact: ioprov() });
      expect(pub.version.providerPins).toEqual({ io: 1 });
      await drainCompatJobs(h.db.prisma);
      const cells = async () => {
        const m = await a.owner.compat.matrix({ name: 'ioprov' });
        return Object.fromEntries(m.cells.map((c) => [m.profiles.find((p) => p.id === c.profileId)!.name, { verdict: c.verdict, via: (c.programs as { via?: string }[]).map((p) => p.via ?? ''), diffs: c.fieldDiffs.length }]));
      };
      // relocated on both: the object was built with the library's io (a `sector` argument this io lacks)
      expect(await cells()).toMatchObject({ old: { verdict: 'relocated', via: ['io:::done via io@1.0.0, implementation for errors (before 4.20)'], diffs: 0 }, new: { verdict: 'incompatible' } });
      await a.owner.provider.publish({ text: io('1.1.0', true) });
      await drainCompatJobs(h.db.prisma);
      expect((await cells()).new).toEqual({ verdict: 'relocated', via: ['io:::done via io@1.1.0, implementation for error'], diffs: 0 });
    });
  });

  describe.skipIf(skip)('fix the provider', () => {
    it('a cell incompatible through io@1.0.0 turns relocated when io@1.1.0 adds an implementation, without republishing; a yank turns it back', async () => {
      const t = await h.tenant('prov-fix');
      await t.owner.provider.publish({ text: io('1.0.0', false) });
      await t.owner.kernel.upload({ name: 'old', release: '4.4.88', tarball: tarballOf('errors') });
      await t.owner.kernel.upload({ name: 'new', release: '5.10.43', tarball: tarballOf('error') });
      const pub = await t.owner.program.publish({ name: 'iodone', version: '1.0.0', artifact: await scriptArtifact() });
      expect(pub.version.providerPins).toEqual({ io: 1 });
      await drainCompatJobs(h.db.prisma);

      const cells = async () => {
        const m = await t.owner.compat.matrix({ name: 'iodone' });
        return Object.fromEntries(
          m.cells.map((c) => [
            m.profiles.find((p) => p.id === c.profileId)!.name,
            { verdict: c.verdict, via: (c.programs as { via?: string }[]).map((p) => p.via ?? ''), reasons: c.reasons.map((r) => `${r.kind}: ${r.text}`) },
          ]),
        );
      };
      expect(await cells()).toEqual({
        old: { verdict: 'compatible', via: ['io:::done via io@1.0.0, implementation for errors (before 4.20)'], reasons: [] },
        new: {
          verdict: 'incompatible',
          via: [''],
          reasons: ['provider-unresolved: io:::done: io@1.0.0 cannot implement io:::done here: implementation for errors (before 4.20): block/block_rq_complete has no field errors'],
        },
      });

      // the fix: a minor version with an implementation for `error`
      const fix = await t.owner.provider.publish({ text: io('1.1.0', true) });
      expect(fix.recomputedTenants).toBe(1);
      await drainCompatJobs(h.db.prisma);
      expect(await cells()).toEqual({
        old: { verdict: 'compatible', via: ['io:::done via io@1.1.0, implementation for errors (before 4.20)'], reasons: [] },
        new: { verdict: 'relocated', via: ['io:::done via io@1.1.0, implementation for error'], reasons: [] },
      });
      const coverage = await t.owner.provider.coverage({ name: 'io', version: '1.1.0' });
      expect(coverage.kernels.map((k) => [k.profile, k.probes.map((p) => [p.probe, p.status, p.implementation])])).toEqual([
        ['new', [['done', 'resolved', 'error']]],
        ['old', [['done', 'resolved', 'errors (before 4.20)']]],
      ]);
      expect((await t.owner.provider.coverage({ name: 'io', version: '1.0.0' })).kernels[0]!.probes[0]).toMatchObject({ status: 'incompatible', implementation: null });
      const versions = await t.owner.version.list({ name: 'iodone' });
      expect(versions.versions.map((v) => [v.version, v.digest])).toEqual([['1.0.0', pub.version.digest]]);

      // a new major does not reach programs pinned to 1
      await t.owner.provider.publish({ text: io('2.0.0', false) });
      await drainCompatJobs(h.db.prisma);
      expect((await cells()).new!.verdict).toBe('relocated');

      // yanking the fix recomputes through 1.0.0 again
      await t.owner.provider.yank({ name: 'io', version: '1.1.0', reason: 'bad expression' });
      await drainCompatJobs(h.db.prisma);
      expect((await cells()).new!.verdict).toBe('incompatible');
      const audit = await t.owner.audit.list({});
      expect(audit.entries.some((e) => e.action === 'provider.yank')).toBe(true);
    });
  });
});
