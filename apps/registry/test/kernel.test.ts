// kernel.upload / list / get on PGlite and PostgreSQL: profiles from real tracefs `events/` trees
// (packages/formats' fixtures), formats stored once by content hash, tenant isolation, bad uploads.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { backends, useHarness } from './harness.js';

const fixtures = fileURLToPath(new URL('../../../packages/formats/test/fixtures/formats/', import.meta.url));

/** A gzipped tarball of one fixture tree, base64, made with the system's tar. */
function tarball(tree: string): string {
  return execFileSync('tar', ['-C', `${fixtures}${tree}`, '-czf', '-', '.']).toString('base64');
}

describe.each(backends)('kernel profiles on %s', (backend) => {
  const { skip, h } = useHarness(backend);
  let linux: string;
  let android: string;
  beforeAll(async () => {
    if (skip) return;
    linux = tarball('linux-6.18');
    android = tarball('android-5.10.43');
  });

  it.skipIf(skip)('uploads a profile, stores each format once, and shows it only to its tenant', async () => {
    const a = await h.tenant('kern-a');
    const b = await h.tenant('kern-b');
    const up = await a.owner.kernel.upload({ name: 'linux-6.18', release: '6.18.0', tarball: linux });
    expect(up.errors).toEqual([]);
    expect(up.profile.source).toBe('events_tree');
    expect(up.profile.formats).toBeGreaterThan(5);
    expect(up.profile.contentHash).toMatch(/^[0-9a-f]{64}$/);
    const got = await a.owner.kernel.get({ name: 'linux-6.18' });
    expect(got.events.map((e) => `${e.system}/${e.event}`)).toContain('sched/sched_switch');
    const stored = await h.db.prisma.eventFormat.findUniqueOrThrow({ where: { hash: got.events.find((e) => e.event === 'sched_switch')?.formatHash ?? '' } });
    expect(stored.text).toMatch(/^name: sched_switch\nID: \d+\nformat:/);

    // The same tree in another tenant: a profile of its own, no new format rows, and `newFormats`
    // counted for B alone (it says nothing of what A uploaded).
    const rowsBefore = await h.db.prisma.eventFormat.count();
    const again = await b.owner.kernel.upload({ name: 'linux-6.18', tarball: linux });
    expect(await h.db.prisma.eventFormat.count()).toBe(rowsBefore);
    expect(again.newFormats).toBe(up.newFormats);
    expect(again.profile.contentHash).toBe(up.profile.contentHash);

    await expect(b.owner.kernel.get({ name: 'linux-6.18' })).resolves.toMatchObject({ profile: { id: again.profile.id } });
    await h.db.prisma.kernelProfile.delete({ where: { id: again.profile.id } });
    await expect(b.owner.kernel.get({ name: 'linux-6.18' })).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'kernel profile not found: linux-6.18' });
    expect((await b.owner.kernel.list()).profiles).toEqual([]);
    expect((await a.owner.kernel.list()).profiles.map((p) => p.name)).toEqual(['linux-6.18']);
  });

  it.skipIf(skip)('refuses the same formats under another name, and a taken name, with CONFLICT', async () => {
    const t = await h.tenant('kern-c');
    await t.owner.kernel.upload({ name: 'first', tarball: android });
    const before = await h.counts();
    await expect(t.owner.kernel.upload({ name: 'second', tarball: android })).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('profile first has the same formats') });
    await expect(t.owner.kernel.upload({ name: 'first', tarball: linux })).rejects.toMatchObject({ code: 'CONFLICT', message: 'kernel upload: a profile named first exists' });
    expect(await h.counts()).toEqual(before);
  });

  it.skipIf(skip).each([
    ['not base64', '%%%not base64%%%'],
    ['not a tarball', Buffer.from('hello, this is not a tar archive at all').toString('base64')],
    ['a tarball without format files', execFileSync('tar', ['-C', fixtures, '-czf', '-', 'README.md']).toString('base64')],
  ])('refuses %s with BAD_REQUEST and writes nothing', async (_, data) => {
    const t = await h.tenant('kern-d');
    const before = await h.counts();
    const formats = await h.db.prisma.eventFormat.count();
    await expect(t.owner.kernel.upload({ name: 'bad', tarball: data })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    expect(await h.counts()).toEqual(before);
    expect(await h.db.prisma.eventFormat.count()).toBe(formats);
  });

  it.skipIf(skip)('links agents to the profile their node reports, one profile per kernel per tenant', async () => {
    const a = await h.tenant('kern-agents-a');
    const b = await h.tenant('kern-agents-b');
    const enrol = async (owner: typeof a.owner, hostname: string) => {
      const { enrollmentToken } = await owner.agent.createEnrollmentToken();
      const r = await (await h.caller()).agent.enroll({ enrollmentToken, hostname });
      return { id: r.agent.id, caller: await h.caller(r.credential) };
    };
    const n1 = await enrol(a.owner, 'node-1');
    const n2 = await enrol(a.owner, 'node-2');
    const first = await n1.caller.agent.reportProfile({ release: '6.18.0-1-generic', machine: 'x86_64', tarball: linux });
    expect(first.created).toBe(true);
    expect(first.profile).toMatchObject({ source: 'agent', release: '6.18.0-1-generic' });
    expect(first.profile.name).toBe(`6.18.0-1-generic-${first.profile.contentHash.slice(0, 12)}`);
    const second = await n2.caller.agent.reportProfile({ release: '6.18.0-1-generic', tarball: linux });
    expect(second).toMatchObject({ created: false, profile: { id: first.profile.id, agents: 2 } });
    expect((await a.owner.agent.list()).agents.map((x) => x.kernelProfileId)).toEqual([first.profile.id, first.profile.id]);
    // Tenant B's node of the same kernel gets B's own profile.
    const nb = await enrol(b.owner, 'node-b');
    const other = await nb.caller.agent.reportProfile({ tarball: linux });
    expect(other.created).toBe(true);
    expect(other.profile.id).not.toBe(first.profile.id);
    expect((await a.owner.kernel.list()).profiles).toHaveLength(1);
    // Only agents report profiles.
    await expect(a.owner.agent.reportProfile({ tarball: linux })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it.skipIf(skip)('needs the publisher role', async () => {
    const t = await h.tenant('kern-e');
    const v = await h.member(t.owner, 'viewer');
    await expect(v.caller.kernel.upload({ name: 'nope', tarball: linux })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const p = await h.member(t.owner, 'publisher');
    await expect(p.caller.kernel.upload({ name: 'yes', tarball: linux })).resolves.toMatchObject({ profile: { name: 'yes' } });
  });
});
