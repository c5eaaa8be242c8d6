// Complete and partial kernel profiles, their names, and the tenant's compat settings, through
// createCaller on PGlite and PostgreSQL: an uploaded events/ tree is complete unless marked
// partial, a trace.dat is partial, an agent's report is complete (and completes a partial profile
// of the same formats); a missing event is incompatible on a complete profile and unknown on a
// partial one; `compat.setSettings` (admin) recomputes the tenant's matrix with strictCharSign,
// and no other tenant's.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { enqueueStaleCompatJobs } from '../src/data/compat.js';
import { drainCompatJobs } from '../src/jobs/compat-runner.js';
import { backends, useHarness } from './harness.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const compatFormats = `${root}packages/compat/test/fixtures/formats/`;
const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64');
const tarballOf = (dir: string) => execFileSync('tar', ['-C', dir, '-czf', '-', '.']).toString('base64');
const syscount = readFileSync(`${root}examples/c/syscount.o`);
/** Reads sched_switch's prev_comm[0], built for a format where it is `signed:1` (apps/cli/test/fixtures). */
const signedChar = readFileSync(`${root}apps/cli/test/fixtures/signed-char.s`);
const signedCharTree = `${root}apps/cli/test/fixtures/signed-char`;

describe.each(backends)('profile completeness on %s', (backend) => {
  const { skip, h } = useHarness(backend);
  const tmp = mkdtempSync(join(tmpdir(), 'probeyard-completeness-'));
  afterAll(() => {
    rmSync(tmp, { recursive: true, force: true });
  });

  // android-3.4.0 has no raw_syscalls/sys_enter (nor has the whole corpus dump of that kernel)
  const android34 = () => tarballOf(`${compatFormats}android-3.4.0`);

  it.skipIf(skip)('a missing event: incompatible on a complete upload, unknown on one marked partial; every view says which', async () => {
    const a = await h.tenant('complete');
    const b = await h.tenant('partial');
    const up = await a.owner.kernel.upload({ name: 'nexus5', tarball: android34() });
    const upPartial = await b.owner.kernel.upload({ name: 'nexus5', tarball: android34(), partial: true });
    expect([up.profile.complete, upPartial.profile.complete]).toEqual([true, false]);
    await a.owner.program.publish({ name: 'syscount', version: '1.0.0', artifact: b64(syscount) });
    await b.owner.program.publish({ name: 'syscount', version: '1.0.0', artifact: b64(syscount) });
    await drainCompatJobs(h.db.prisma);
    const ma = await a.owner.compat.matrix();
    const mb = await b.owner.compat.matrix();
    expect(ma.profiles.map((p) => [p.name, p.complete])).toEqual([['nexus5', true]]);
    expect(mb.profiles.map((p) => [p.name, p.complete])).toEqual([['nexus5', false]]);
    expect(ma.cells.map((c) => [c.verdict, c.reasons.map((r) => [r.kind, r.event, r.text])])).toEqual([
      ['incompatible', [['event-missing', 'raw_syscalls/sys_enter', 'count_syscalls: event raw_syscalls/sys_enter does not exist on this kernel (complete profile)']]],
    ]);
    expect(mb.cells.map((c) => [c.verdict, c.reasons.map((r) => r.kind)])).toEqual([['unknown', ['event-missing']]]);
    expect(ma.cells[0]!.engine).toBe('probeyard-compat/2');
    // list, get, grid and cell carry it too
    expect((await a.owner.kernel.list()).profiles.map((p) => p.complete)).toEqual([true]);
    expect((await b.owner.kernel.get({ name: 'nexus5' })).profile.complete).toBe(false);
    const grid = await b.owner.compat.grid();
    expect([grid.profiles.map((p) => p.complete), grid.verdicts]).toEqual([[false], ['u']]);
    const cell = await a.owner.compat.cell({ versionId: ma.versions[0]!.id, profileId: ma.profiles[0]!.id });
    expect([cell.profile.complete, cell.cell?.verdict]).toEqual([true, 'incompatible']);
    const audit = await h.db.prisma.auditEntry.findFirstOrThrow({ where: { tenantId: b.id, action: 'kernel.upload' } });
    expect(audit.detail).toMatchObject({ complete: false });
  });

  it.skipIf(skip)('a trace.dat is partial even if not marked; a tarball is named by its kernel_version.txt unless release is given', async () => {
    const t = await h.tenant('names');
    const dat = await t.owner.kernel.upload({ name: 'recording', traceDat: b64(readFileSync(`${root}examples/recordings/sched-small.dat`)) });
    expect([dat.profile.source, dat.profile.complete]).toEqual(['trace_dat', false]);
    const dump = join(tmp, 'dump');
    cpSync(`${compatFormats}linux-6.18`, join(dump, 'events'), { recursive: true });
    writeFileSync(join(dump, 'kernel_version.txt'), '6.18.44-fc-v782\n');
    const named = await t.owner.kernel.upload({ name: 'dump', tarball: tarballOf(dump) });
    expect([named.profile.release, named.profile.complete]).toEqual(['6.18.44-fc-v782', true]);
    await h.db.prisma.kernelProfile.delete({ where: { id: named.profile.id } });
    const given = await t.owner.kernel.upload({ name: 'dump', tarball: tarballOf(dump), release: 'mine' });
    expect(given.profile.release).toBe('mine');
  });

  it.skipIf(skip)("an agent's report is complete, and completes a partial profile of the same formats (its cells computed again)", async () => {
    const t = await h.tenant('agent-completes');
    const up = await t.owner.kernel.upload({ name: 'nexus5', tarball: android34(), partial: true });
    await t.owner.program.publish({ name: 'syscount', version: '1.0.0', artifact: b64(syscount) });
    await drainCompatJobs(h.db.prisma);
    expect((await t.owner.compat.matrix()).cells.map((c) => c.verdict)).toEqual(['unknown']);
    const { enrollmentToken } = await t.owner.agent.createEnrollmentToken();
    const enrolled = await (await h.caller()).agent.enroll({ enrollmentToken, hostname: 'nexus' });
    const node = await h.caller(enrolled.credential);
    // a node that replays a recording reports partial formats: that proves nothing
    const replay = await node.agent.reportProfile({ release: '3.4.0', tarball: android34(), partial: true });
    expect(replay).toMatchObject({ created: false, profile: { id: up.profile.id, complete: false } });
    expect(await h.db.prisma.compatJob.count({ where: { tenantId: t.id, status: 'queued' } })).toBe(0);
    const r = await node.agent.reportProfile({ release: '3.4.0', tarball: android34() });
    expect(r).toMatchObject({ created: false, profile: { id: up.profile.id, complete: true } });
    // the old verdict stays visible until the job has computed it again
    expect((await t.owner.compat.matrix()).cells.map((c) => [c.verdict, c.engine])).toEqual([['unknown', '']]);
    await drainCompatJobs(h.db.prisma);
    expect((await t.owner.compat.matrix()).cells.map((c) => [c.verdict, c.engine])).toEqual([['incompatible', 'probeyard-compat/2']]);
    const again = await node.agent.reportProfile({ release: '3.4.0', tarball: android34() });
    expect(again.profile.complete).toBe(true);
    expect(await h.db.prisma.compatJob.count({ where: { tenantId: t.id, status: 'queued' } })).toBe(0);
    // a node's new profile is complete from the start, unless it replays a recording
    const other = await node.agent.reportProfile({ tarball: tarballOf(`${compatFormats}linux-6.18`) });
    expect([other.created, other.profile.complete]).toEqual([true, true]);
    const recorded = await node.agent.reportProfile({ tarball: tarballOf(`${compatFormats}android-3.10.49`), partial: true });
    expect([recorded.created, recorded.profile.complete]).toEqual([true, false]);
  });

  it.skipIf(skip)('at start-up, results of an older engine get a job that computes them again (once)', async () => {
    const t = await h.tenant('old-engine');
    await t.owner.kernel.upload({ name: 'nexus5', tarball: android34() });
    await t.owner.program.publish({ name: 'syscount', version: '1.0.0', artifact: b64(syscount) });
    await drainCompatJobs(h.db.prisma);
    // as an instance upgraded from before profiles knew their completeness left it
    await h.db.prisma.compatResult.updateMany({ where: { tenantId: t.id }, data: { engine: 'probeyard-compat/1', verdict: 'unknown' } });
    expect(await enqueueStaleCompatJobs(h.db.prisma)).toBeGreaterThanOrEqual(1);
    const queued = await h.db.prisma.compatJob.count({ where: { tenantId: t.id, status: 'queued', profileId: null } });
    expect(queued).toBe(1);
    await enqueueStaleCompatJobs(h.db.prisma);
    expect(await h.db.prisma.compatJob.count({ where: { tenantId: t.id, status: 'queued', profileId: null } })).toBe(1);
    await drainCompatJobs(h.db.prisma);
    expect((await t.owner.compat.matrix()).cells.map((c) => [c.verdict, c.engine])).toEqual([['incompatible', 'probeyard-compat/2']]);
    await enqueueStaleCompatJobs(h.db.prisma);
    expect(await h.db.prisma.compatJob.count({ where: { tenantId: t.id, status: 'queued' } })).toBe(0);
  });

  it.skipIf(skip)('compat.setSettings (admin) recomputes the tenant matrix with strictCharSign, and no other tenant', async () => {
    const setUp = async (prefix: string) => {
      const t = await h.tenant(prefix);
      await t.owner.kernel.upload({ name: 'x86-old', tarball: tarballOf(signedCharTree), partial: true });
      await t.owner.kernel.upload({ name: 'linux', tarball: tarballOf(`${compatFormats}linux-6.18`) });
      await t.owner.program.publish({ name: 'firstchar', version: '1.0.0', artifact: b64(signedChar), builtAgainst: 'x86-old' });
      await drainCompatJobs(h.db.prisma);
      return t;
    };
    const a = await setUp('strict-a');
    const b = await setUp('strict-b');
    const onLinux = async (t: typeof a) => {
      const m = await t.owner.compat.matrix({ profile: 'linux' });
      return m.cells.map((c) => [c.verdict, c.reasons.map((r) => r.kind)]);
    };
    expect(await onLinux(a)).toEqual([['compatible', []]]);
    expect(await a.owner.compat.settings()).toEqual({ settings: { strictCharSign: false, engine: 'probeyard-compat/2' } });

    const viewer = await h.member(a.owner, 'viewer');
    const publisher = await h.member(a.owner, 'publisher');
    await expect(viewer.caller.compat.setSettings({ strictCharSign: true })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(publisher.caller.compat.setSettings({ strictCharSign: true })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(viewer.caller.compat.settings()).resolves.toMatchObject({ settings: { strictCharSign: false } });
    await expect(a.owner.compat.setSettings({ strictCharSign: 'yes' } as never)).rejects.toMatchObject({ code: 'BAD_REQUEST' });

    const set = await a.owner.compat.setSettings({ strictCharSign: true });
    expect(set.settings).toEqual({ strictCharSign: true, engine: 'probeyard-compat/2+strict-char-sign' });
    expect(set.compatJobId).not.toBeNull();
    await drainCompatJobs(h.db.prisma);
    expect(await onLinux(a)).toEqual([['incompatible', ['signedness-changed']]]);
    // the other tenant: its setting, its matrix, untouched
    expect((await b.owner.compat.settings()).settings.strictCharSign).toBe(false);
    expect(await onLinux(b)).toEqual([['compatible', []]]);
    // setting the same value again changes nothing and queues nothing
    expect((await a.owner.compat.setSettings({ strictCharSign: true })).compatJobId).toBeNull();
    expect(await h.db.prisma.auditEntry.count({ where: { tenantId: a.id, action: 'compat.setSettings' } })).toBe(1);
    await a.owner.compat.setSettings({ strictCharSign: false });
    await drainCompatJobs(h.db.prisma);
    expect(await onLinux(a)).toEqual([['compatible', []]]);
  });
});
