// What the web app's pages need from the registry: pages of programs (search, tag, newest
// version) and versions, a version's spec for the annotated disassembly; each tenant-scoped.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { backends, useHarness } from './harness.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const switchCount = readFileSync(`${root}examples/sched-switch-count.s`);
const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64');
const tarball = (tree: string) => execFileSync('tar', ['-C', `${root}packages/compat/test/fixtures/formats/${tree}`, '-czf', '-', '.']).toString('base64');
const variant = (i: number) => b64(`${switchCount.toString()}\n# variant ${i}\n`);

describe.each(backends)('web pages on %s', (backend) => {
  const { skip, h } = useHarness(backend);

  describe.skipIf(skip)('program.list, version.list, version.spec', () => {
    it('pages programs by name with search and tag, each with its newest version', async () => {
      const t = await h.tenant('pages');
      for (const name of ['alpha', 'beta', 'gamma', 'delta']) {
        await t.owner.program.publish({ name, version: '1.0.0', artifact: variant(0), description: `${name} counter`, tags: name === 'beta' ? ['net'] : ['sched'] });
      }
      await t.owner.program.publish({ name: 'beta', version: '1.10.0', artifact: variant(1) });
      await t.owner.program.publish({ name: 'beta', version: '1.9.0', artifact: variant(2) });
      await t.owner.program.publish({ name: 'beta', version: '1.10.0-rc.1', artifact: variant(3) });
      const first = await t.owner.program.list({ limit: 2 });
      expect(first.programs.map((p) => p.name)).toEqual(['alpha', 'beta']);
      expect(first.programs[1]?.latest?.version).toBe('1.10.0');
      expect(first.nextCursor).toBe('beta');
      const second = await t.owner.program.list({ limit: 2, cursor: first.nextCursor! });
      expect(second.programs.map((p) => p.name)).toEqual(['delta', 'gamma']);
      const last = await t.owner.program.list({ limit: 2, cursor: second.nextCursor! });
      expect(last).toEqual({ programs: [], nextCursor: null });
      expect((await t.owner.program.list({ q: 'GAM' })).programs.map((p) => p.name)).toEqual(['gamma']);
      expect((await t.owner.program.list({ q: 'counter', tag: 'net' })).programs.map((p) => p.name)).toEqual(['beta']);
      const v1 = await t.owner.version.list({ name: 'beta', limit: 2 });
      expect(v1).toMatchObject({ total: 4, versions: [{ version: '1.10.0' }, { version: '1.10.0-rc.1' }] });
      const v2 = await t.owner.version.list({ name: 'beta', limit: 2, offset: 2 });
      expect(v2.versions.map((v) => v.version)).toEqual(['1.9.0', '1.0.0']);
    });

    it('gives a version’s spec and manifest: instructions, field relocations, maps', async () => {
      const t = await h.tenant('spec');
      await t.owner.program.publish({ name: 'sw', version: '1.0.0', artifact: variant(0) });
      const r = await t.owner.version.spec({ name: 'sw', version: '1.0.0' });
      const spec = r.spec as { programs: { name: string; instructions: string; fieldRelocations: { field: string }[] }[]; maps: { name: string }[] };
      expect(spec.programs[0]?.name).toBe('count_switch');
      expect(spec.programs[0]?.instructions).toMatch(/^[0-9a-f]+$/);
      expect(spec.programs[0]?.fieldRelocations.map((f) => f.field)).toEqual(['next_pid']);
      expect(spec.maps.map((m) => m.name)).toEqual(['counts']);
      expect(r.manifest).toMatchObject({ fields: [{ field: 'next_pid', source: 'asm' }] });
      // no hint in the artifact: the convention's, said to be one (what the web's "Shown as" prints)
      expect(r.displays).toEqual({ counts: { kind: 'counts', source: 'convention' } });
    });

    it('keeps each tenant to its own: another tenant’s program and version are NOT_FOUND, lists are its own', async () => {
      const a = await h.tenant('mine');
      const b = await h.tenant('theirs');
      await a.owner.program.publish({ name: 'private', version: '1.0.0', artifact: variant(0) });
      expect((await b.owner.program.list()).programs).toEqual([]);
      expect((await b.owner.program.list({ q: 'private' })).programs).toEqual([]);
      await expect(b.owner.version.list({ name: 'private' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(b.owner.version.spec({ name: 'private', version: '1.0.0' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(b.owner.version.spec({ name: 'missing', version: '1.0.0' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it('refuses bad paging input with BAD_REQUEST', async () => {
      const t = await h.tenant('bad-paging');
      await expect(t.owner.program.list({ limit: 0 })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(t.owner.program.list({ q: 'a\u0000b' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(t.owner.version.list({ name: 'x', offset: -1 })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    });
  });
});

describe.each(backends)('matrix and formats on %s', (backend) => {
  const { skip, h } = useHarness(backend);

  describe.skipIf(skip)('compat.grid, compat.cell, kernel.list, kernel.events, kernel.format', () => {
    it('draws the matrix as letters, filters by release and architecture, and opens one cell', async () => {
      const { drainCompatJobs } = await import('../src/jobs/compat-runner.js');
      const t = await h.tenant('grid');
      await t.owner.kernel.upload({ name: 'linux-6-18', release: '6.18.44', machine: 'x86_64', tarball: tarball('linux-6.18') });
      await t.owner.kernel.upload({ name: 'android-3-10-49', release: '3.10.49', machine: 'armv7l', tarball: tarball('android-3.10.49') });
      await t.owner.program.publish({ name: 'forkcomm', version: '1.0.0', artifact: b64(readFileSync(`${root}examples/c/forkcomm.o`)) });
      const before = await t.owner.compat.grid();
      expect(before.verdicts).toEqual(['..']);
      expect(before.pendingJobs).toBeGreaterThan(0);
      await drainCompatJobs(h.db.prisma);
      const g = await t.owner.compat.grid();
      expect(g.profiles.map((p) => p.name)).toEqual(['android-3-10-49', 'linux-6-18']);
      expect(g.machines).toEqual(['armv7l', 'x86_64']);
      expect(g).toMatchObject({ verdicts: ['ci'], totalVersions: 1, pendingJobs: 0 });
      expect((await t.owner.compat.grid({ machine: 'x86_64' })).verdicts).toEqual(['i']);
      expect((await t.owner.compat.grid({ release: '3.10' })).profiles.map((p) => p.name)).toEqual(['android-3-10-49']);
      const cell = await t.owner.compat.cell({ versionId: g.versions[0]!.id, profileId: g.profiles[1]!.id });
      expect(cell.cell).toMatchObject({ verdict: 'incompatible', fieldDiffs: [{ field: 'parent_comm', changes: ['became-dynamic'] }] });
      const kernels = await t.owner.kernel.list({ limit: 1 });
      expect(kernels).toMatchObject({ profiles: [{ name: 'android-3-10-49' }], nextCursor: 'android-3-10-49' });
      expect((await t.owner.kernel.list({ limit: 1, cursor: 'android-3-10-49' })).profiles.map((p) => p.name)).toEqual(['linux-6-18']);
      const events = await t.owner.kernel.events({ profile: 'linux-6-18', q: 'fork', limit: 5 });
      expect(events.events.map((e) => `${e.system}/${e.event}`)).toContain('sched/sched_process_fork');
      const f = await t.owner.kernel.format({ profile: 'linux-6-18', event: 'sched/sched_process_fork' });
      expect(f.event?.fields.find((x) => x.name === 'parent_comm')).toMatchObject({ dynamic: 'data_loc', size: 4 });
      expect((await t.owner.kernel.format({ profile: 'linux-6-18', event: 'nope/none' })).event).toBeNull();
    });

    it('keeps each tenant to its own: another tenant’s versions, profiles and cells are NOT_FOUND or absent', async () => {
      const a = await h.tenant('grid-a');
      const b = await h.tenant('grid-b');
      await a.owner.kernel.upload({ name: 'mine', tarball: tarball('linux-6.18') });
      await a.owner.program.publish({ name: 'p', version: '1.0.0', artifact: variant(0) });
      const ga = await a.owner.compat.grid();
      const gb = await b.owner.compat.grid();
      expect(gb).toMatchObject({ versions: [], profiles: [], verdicts: [], machines: [] });
      await expect(b.owner.compat.cell({ versionId: ga.versions[0]!.id, profileId: ga.profiles[0]!.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(b.owner.kernel.events({ profile: 'mine' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(b.owner.kernel.format({ profile: 'mine', event: 'sched/sched_switch' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect((await b.owner.kernel.list()).profiles).toEqual([]);
      await expect(b.owner.compat.grid({ limit: 0 })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    });
  });
});
