// What the web app's pages need from the registry: pages of programs (search, tag, newest
// version) and versions, a version's spec for the annotated disassembly; each tenant-scoped.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, type Harness, openHarness, skipReason } from './harness.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const switchCount = readFileSync(`${root}examples/sched-switch-count.s`);
const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64');
const variant = (i: number) => b64(`${switchCount.toString()}\n# variant ${i}\n`);

describe.each(backends)('web pages on %s', (backend) => {
  const skip = skipReason(backend);
  let h: Harness;
  beforeAll(async () => {
    if (!skip) h = await openHarness(backend);
  });
  afterAll(async () => {
    await h?.close();
  });

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
