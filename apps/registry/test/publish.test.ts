// program.publish, version.list/get/yank, compat jobs and the matrix, kernel.diff and trace.dat
// uploads through createCaller on PGlite and PostgreSQL: real objects (examples/c, committed with
// their C source), real assembly, real format files; roles, tenant isolation and bad input.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { claimCompatJob, compatJobLeaseMs, requeueRunningJobs, runCompatJob } from '../src/data/compat.js';
import { drainCompatJobs } from '../src/jobs/compat-runner.js';
import { backends, useHarness } from './harness.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const compatFormats = `${root}packages/compat/test/fixtures/formats/`;
const read = (path: string) => readFileSync(`${root}${path}`);
const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64');
const tarball = (tree: string) => execFileSync('tar', ['-C', `${compatFormats}${tree}`, '-czf', '-', '.']).toString('base64');

const runqlat = read('examples/c/runqlat.o');
const forkcomm = read('examples/c/forkcomm.o');
const switchCount = read('examples/sched-switch-count.s');
/** Reads through an uninitialised register: the verifier refuses it at instruction 0. */
const unsafe = '.license "GPL"\n.section tracepoint/sched/sched_switch\nbad:\n    r0 = *(u64 *)(r2 + 0)\n    exit\n';

describe.each(backends)('publishing on %s', (backend) => {
  const { skip, h } = useHarness(backend);

  describe.skipIf(skip)('program.publish', () => {
    it('stores an ELF object: bytes, digest, spec, manifest, verifier report, the ABI tag, a compat job and an audit row', async () => {
      const t = await h.tenant('pub');
      const r = await t.owner.program.publish({ name: 'runqlat', version: '1.0.0', artifact: b64(runqlat), description: 'run queue latency', tags: ['sched'] });
      expect(r.created).toBe(true);
      expect(r.program).toMatchObject({ name: 'runqlat', description: 'run queue latency', tags: ['sched'], versions: 1 });
      const digest = createHash('sha256').update(runqlat).digest('hex');
      expect(r.version).toMatchObject({ version: '1.0.0', digest, size: runqlat.length, artifactKind: 'elf', abi: 'module-like, no ABI', yanked: null, program: 'runqlat' });
      expect(r.version.manifest).toMatchObject({ tag: 'module-like, no ABI', attachPoints: ['sched/sched_wakeup', 'sched/sched_switch'] });
      expect(r.version.verifierReport).toMatchObject({ ok: true, programs: [{ program: 'on_wakeup', ok: true }, { program: 'on_switch', ok: true }] });
      const row = await h.db.prisma.programVersion.findUniqueOrThrow({ where: { id: r.version.id } });
      expect(Buffer.from(row.artifact).equals(runqlat)).toBe(true);
      expect(row).toMatchObject({ major: 1, minor: 0, patch: 0, prerelease: '', publishedById: t.ownerId });
      expect((row.spec as { sourceKind: string }).sourceKind).toBe('elf');
      expect(await h.db.prisma.compatJob.findUniqueOrThrow({ where: { id: r.compatJobId ?? '' } })).toMatchObject({ tenantId: t.id, profileId: null, status: 'queued' });
      const audit = await h.db.prisma.auditEntry.findMany({ where: { tenantId: t.id, action: 'program.publish' } });
      expect(audit.map((a) => [a.targetId, a.actorId])).toEqual([[r.version.id, t.ownerId]]);
    });

    it('stores a script artifact compiled again here: sourceKind script, fields named by the script; a script that does not compile is bad input', async () => {
      const { compileScript, targetOfFormats } = await import('@probeyard/script');
      const { parseEventFormat } = await import('@probeyard/formats');
      const wakeup = parseEventFormat(read('packages/compat/test/fixtures/formats/linux-6.18/sched/sched_wakeup/format').toString(), { system: 'sched' });
      const compiled = await compileScript('tracepoint:sched:sched_wakeup { @[args.pid] = count(); } END { printf("bye\\n"); }', { target: targetOfFormats([wakeup]) });
      if (!compiled.ok) throw new Error('does not compile');
      const t = await h.tenant('pub-script');
      const r = await t.owner.program.publish({ name: 'wakeups', version: '1.0.0', artifact: b64(compiled.artifact) });
      expect(r.version).toMatchObject({ artifactKind: 'script', digest: compiled.spec.digest, manifest: { attachPoints: ['sched/sched_wakeup'], fields: [{ field: 'pid', source: 'script' }] } });
      expect(r.version.verifierReport).toMatchObject({ ok: true, programs: [{ program: 'sched_wakeup_0', ok: true }, { program: 'end_1', ok: true }] });
      const broken = new TextEncoder().encode(new TextDecoder().decode(compiled.artifact).replace('args.pid', 'args.nope'));
      await expect(t.owner.program.publish({ name: 'wakeups', version: '1.0.1', artifact: b64(broken) })).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining("args.nope: sched/sched_wakeup has no field 'nope'") });
    });

    it('stores Probeyard assembly, and a second version of the same program', async () => {
      const t = await h.tenant('pub-asm');
      await t.owner.program.publish({ name: 'switches', version: '0.1.0', artifact: b64(switchCount) });
      const r = await t.owner.program.publish({ name: 'switches', version: '0.2.0-rc.1', artifact: b64(`${switchCount.toString()}\n# again\n`) });
      expect(r.version).toMatchObject({ artifactKind: 'asm', version: '0.2.0-rc.1' });
      expect(r.version.manifest).toMatchObject({ fields: [{ event: 'sched/sched_switch', field: 'next_pid', source: 'asm' }] });
      // Symbolic fields have no build-time offsets: verified against a raw record until relocated per kernel.
      expect(r.version.verifierReport).toMatchObject({ ok: true, programs: [{ program: 'count_switch', context: 'raw' }] });
      expect((await t.owner.version.list({ name: 'switches' })).versions.map((v) => v.version)).toEqual(['0.2.0-rc.1', '0.1.0']);
    });

    it('resolves assembly symbols against the kernel profile it was built against', async () => {
      const t = await h.tenant('pub-built');
      await t.owner.kernel.upload({ name: 'linux', tarball: tarball('linux-6.18') });
      await t.owner.kernel.upload({ name: 'android', tarball: tarball('android-3.10.49') });
      const r = await t.owner.program.publish({ name: 'switches', version: '1.0.0', artifact: b64(switchCount), builtAgainst: 'linux' });
      expect(r.version.manifest).toMatchObject({ fields: [{ event: 'sched/sched_switch', field: 'next_pid', source: 'asm', byteOffset: 56, size: 4 }] });
      expect(r.version.verifierReport).toMatchObject({ ok: true, programs: [{ program: 'count_switch', context: 'tracepoint' }] });
      await drainCompatJobs(h.db.prisma);
      const got = await t.owner.version.get({ name: 'switches', version: '1.0.0' });
      // Same layout as built: compatible; the 32-bit kernel moved next_pid: relocated.
      expect(got.compat.map((c) => [c.profile, c.verdict])).toEqual([
        ['android', 'relocated'],
        ['linux', 'compatible'],
      ]);
      const other = await h.tenant('pub-built-b');
      const before = await h.counts();
      await expect(t.owner.program.publish({ name: 'switches', version: '1.0.1', artifact: b64(switchCount), builtAgainst: 'nope' })).rejects.toMatchObject({
        code: 'NOT_FOUND',
        message: 'kernel profile not found: nope',
      });
      await expect(other.owner.program.publish({ name: 'switches', version: '1.0.0', artifact: b64(switchCount), builtAgainst: 'linux' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await h.counts()).toEqual(before);
    });

    it('answers the same bytes again as a no-op and other bytes as CONFLICT, writing nothing', async () => {
      const t = await h.tenant('pub-again');
      const first = await t.owner.program.publish({ name: 'forkcomm', version: '2.0.0', artifact: b64(forkcomm) });
      const before = await h.counts();
      const again = await t.owner.program.publish({ name: 'forkcomm', version: '2.0.0', artifact: b64(forkcomm) });
      expect(again).toMatchObject({ created: false, compatJobId: null, version: { id: first.version.id, digest: first.version.digest } });
      await expect(t.owner.program.publish({ name: 'forkcomm', version: '2.0.0', artifact: b64(runqlat) })).rejects.toMatchObject({
        code: 'CONFLICT',
        message: expect.stringContaining('forkcomm@2.0.0 exists with other bytes'),
      });
      expect(await h.counts()).toEqual(before);
    });

    it('refuses a program the verifier rejects with its diagnostics, and stores nothing', async () => {
      const t = await h.tenant('pub-bad');
      const before = await h.counts();
      const err = await t.owner.program.publish({ name: 'unsafe', version: '1.0.0', artifact: b64(unsafe) }).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: 'UNPROCESSABLE_CONTENT',
        message: 'publish: verifier rejected program bad: insn 0 (r0 = *(u64 *)(r2 + 0)): R2 !read_ok',
        cause: { code: 'program_rejected', context: { diagnostics: [{ program: 'bad', insnIndex: 0, insnText: 'r0 = *(u64 *)(r2 + 0)', message: 'R2 !read_ok' }] } },
      });
      expect(await h.counts()).toEqual(before);
      await expect(t.owner.program.get({ name: 'unsafe' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it.each([
      ['invalid semver', { version: '1.0' }],
      ['a v-prefixed version', { version: 'v1.0.0' }],
      ['a leading zero', { version: '01.0.0' }],
      ['a part past 2^31', { version: '1.99999999999.0' }],
      ['an unknown field', { license: 'GPL' }],
      ['not base64', { artifact: '%%% not base64 %%%' }],
      ['garbage bytes', { artifact: b64(new Uint8Array([0, 1, 2, 0xff, 0xfe, 0x80, 7])) }],
      ['text that is not assembly', { artifact: b64('hello, this is not a program') }],
      ['a truncated ELF object', { artifact: b64(runqlat.subarray(0, 200)) }],
      ['an empty artifact', { artifact: '' }],
      ['an oversized artifact', { artifact: 'A'.repeat(6 * 1024 * 1024) }],
      ['a SQL-ish name', { name: "x'; DROP TABLE \"Program\"; --" }],
    ])('refuses %s with BAD_REQUEST and writes nothing', async (_, patch) => {
      const t = await h.tenant('pub-input');
      const before = await h.counts();
      const input = { name: 'prog', version: '1.0.0', artifact: b64(switchCount), ...patch };
      await expect(t.owner.program.publish(input as never)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      expect(await h.counts()).toEqual(before);
    });

    it('needs the publisher role to publish and to yank', async () => {
      const t = await h.tenant('pub-roles');
      const viewer = await h.member(t.owner, 'viewer');
      const publisher = await h.member(t.owner, 'publisher');
      const before = await h.counts();
      await expect(viewer.caller.program.publish({ name: 'p', version: '1.0.0', artifact: b64(switchCount) })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      expect(await h.counts()).toEqual(before);
      await publisher.caller.program.publish({ name: 'p', version: '1.0.0', artifact: b64(switchCount) });
      const afterPublish = await h.counts();
      await expect(viewer.caller.version.yank({ name: 'p', version: '1.0.0', reason: 'no' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      expect(await h.counts()).toEqual(afterPublish);
      // Viewers read.
      await expect(viewer.caller.version.get({ name: 'p', version: '1.0.0' })).resolves.toMatchObject({ version: { version: '1.0.0' } });
      await expect(publisher.caller.version.yank({ name: 'p', version: '1.0.0', reason: 'bad build' })).resolves.toMatchObject({ version: { yanked: { reason: 'bad build' } } });
    });
  });

  describe.skipIf(skip)('versions', () => {
    it('lists, shows and yanks: a yanked version stays readable and marked', async () => {
      const t = await h.tenant('ver');
      await t.owner.program.publish({ name: 'forkcomm', version: '1.0.0', artifact: b64(forkcomm) });
      await t.owner.program.publish({ name: 'forkcomm', version: '1.1.0', artifact: b64(runqlat) });
      const got = await t.owner.version.get({ name: 'forkcomm', version: '1.0.0' });
      expect(got.version.manifest).toMatchObject({ fields: [{ field: 'parent_comm', source: 'core' }] });
      expect(got.compat).toEqual([]);
      const y = await t.owner.version.yank({ name: 'forkcomm', version: '1.0.0', reason: 'reads parent_comm inline' });
      expect(y.version.yanked).toMatchObject({ reason: 'reads parent_comm inline' });
      const listed = await t.owner.version.list({ name: 'forkcomm' });
      expect(listed.versions.map((v) => [v.version, v.yanked?.reason ?? null])).toEqual([
        ['1.1.0', null],
        ['1.0.0', 'reads parent_comm inline'],
      ]);
      expect((await t.owner.version.get({ name: 'forkcomm', version: '1.0.0' })).version.yanked?.at).toBe(y.version.yanked?.at);
      const before = await h.counts();
      await expect(t.owner.version.yank({ name: 'forkcomm', version: '1.0.0', reason: 'again' })).rejects.toMatchObject({ code: 'CONFLICT' });
      await expect(t.owner.version.yank({ name: 'forkcomm', version: '9.9.9', reason: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'version not found: forkcomm@9.9.9' });
      await expect(t.owner.version.get({ name: 'nope', version: '1.0.0' })).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'program not found: nope' });
      await expect(t.owner.version.yank({ name: 'forkcomm', version: '1.1.0', reason: '' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      expect(await h.counts()).toEqual(before);
      expect(await h.db.prisma.auditEntry.count({ where: { tenantId: t.id, action: 'version.yank' } })).toBe(1);
    });
  });

  describe.skipIf(skip)('compatibility', () => {
    it('computes the matrix in jobs after a publish and after a profile upload, with reasons and field diffs', async () => {
      const t = await h.tenant('compat');
      const linux = await t.owner.kernel.upload({ name: 'linux-6-18', release: '6.18.44', tarball: tarball('linux-6.18') });
      await t.owner.program.publish({ name: 'runqlat', version: '1.0.0', artifact: b64(runqlat) });
      const fc = await t.owner.program.publish({ name: 'forkcomm', version: '1.0.0', artifact: b64(forkcomm) });
      await t.owner.program.publish({ name: 'switches', version: '1.0.0', artifact: b64(switchCount) });
      const pending = await t.owner.compat.matrix();
      expect(pending.pendingJobs).toBe(4);
      expect(pending.cells).toEqual([]);
      expect(await drainCompatJobs(h.db.prisma)).toBeGreaterThanOrEqual(4);

      // The profile's job ran first and computed every pair; the version jobs found nothing missing.
      const job = await t.owner.compat.job({ id: fc.compatJobId ?? '' });
      expect(job.job).toMatchObject({ status: 'done', profile: null, error: null });
      expect(job.job.done).toBe(job.job.total);
      const uploadJob = (await t.owner.compat.jobs()).jobs.find((j) => j.id === linux.compatJobId);
      expect(uploadJob).toMatchObject({ status: 'done', profile: 'linux-6-18' });

      const android = await t.owner.kernel.upload({ name: 'android-3-10-49', tarball: tarball('android-3.10.49') });
      expect((await t.owner.compat.jobs({ active: true })).jobs.map((j) => j.id)).toEqual([android.compatJobId]);
      await drainCompatJobs(h.db.prisma);
      expect((await t.owner.compat.job({ id: android.compatJobId })).job).toMatchObject({ status: 'done', total: 3, done: 3 });

      const m = await t.owner.compat.matrix();
      expect(m.pendingJobs).toBe(0);
      expect(m.profiles.map((p) => p.name)).toEqual(['android-3-10-49', 'linux-6-18']);
      const verdict = (program: string, profile: string) => {
        const v = m.versions.find((x) => x.program === program)!;
        const p = m.profiles.find((x) => x.name === profile)!;
        return m.cells.find((c) => c.versionId === v.id && c.profileId === p.id);
      };
      // The README verdict table of packages/compat, through the registry.
      expect(verdict('runqlat', 'linux-6-18')?.verdict).toBe('relocated');
      expect(verdict('runqlat', 'android-3-10-49')?.verdict).toBe('relocated');
      expect(verdict('forkcomm', 'android-3-10-49')?.verdict).toBe('compatible');
      expect(verdict('switches', 'linux-6-18')?.verdict).toBe('relocated');
      const refused = verdict('forkcomm', 'linux-6-18');
      expect(refused?.verdict).toBe('incompatible');
      expect(refused?.reasons).toMatchObject([{ kind: 'became-dynamic', program: 'count_forks', event: 'sched/sched_process_fork', field: 'parent_comm' }]);
      expect(refused?.fieldDiffs).toMatchObject([
        { event: 'sched/sched_process_fork', field: 'parent_comm', changes: ['became-dynamic'], built: { dataLoc: false }, kernel: { name: 'parent_comm', dynamic: 'data_loc' } },
      ]);
      // runqlat on 3.10.49 (32-bit): next_pid moved from 56 to 52.
      expect(verdict('runqlat', 'android-3-10-49')?.fieldDiffs).toContainEqual(expect.objectContaining({ field: 'next_pid', changes: ['moved'], text: expect.stringContaining('offset 56 → 52') }));

      // One version, one profile; and version.get shows the same cells.
      const one = await t.owner.compat.matrix({ name: 'forkcomm', version: '1.0.0', profile: 'linux-6-18' });
      expect(one.cells.map((c) => c.verdict)).toEqual(['incompatible']);
      const got = await t.owner.version.get({ name: 'forkcomm', version: '1.0.0' });
      expect(got.compat.map((c) => [c.profile, c.verdict])).toEqual([
        ['android-3-10-49', 'compatible'],
        ['linux-6-18', 'incompatible'],
      ]);
      // Jobs write no audit rows of their own; the results are all there is.
      expect(await h.db.prisma.compatResult.count({ where: { tenantId: t.id } })).toBe(6);
    });

    it('picks up a job a stopped process left running, and computes only what is missing', async () => {
      const t = await h.tenant('compat-resume');
      await t.owner.kernel.upload({ name: 'linux', tarball: tarball('linux-6.18') });
      await drainCompatJobs(h.db.prisma);
      const r = await t.owner.program.publish({ name: 'runqlat', version: '1.0.0', artifact: b64(runqlat) });
      expect((await t.owner.compat.matrix()).cells).toEqual([]);
      // As if a runner had claimed it and died: its lease still holds, so no other runner takes it.
      const id = r.compatJobId ?? '';
      const claimedAt = new Date();
      await h.db.prisma.compatJob.update({ where: { id }, data: { status: 'running', leaseUntil: new Date(claimedAt.getTime() + compatJobLeaseMs) } });
      expect(await drainCompatJobs(h.db.prisma)).toBe(0);
      expect(await drainCompatJobs(h.db.prisma, undefined, { now: () => new Date(claimedAt.getTime() + compatJobLeaseMs - 1000) })).toBe(0);
      // Once the lease lapsed, any runner (of any replica) takes it over.
      expect(await drainCompatJobs(h.db.prisma, undefined, { now: () => new Date(claimedAt.getTime() + compatJobLeaseMs + 1000) })).toBe(1);
      expect((await t.owner.compat.job({ id })).job).toMatchObject({ status: 'done', total: 1, done: 1 });
      expect((await h.db.prisma.compatJob.findUniqueOrThrow({ where: { id } })).leaseUntil).toBeNull();
      const audit = await h.db.prisma.auditEntry.findMany({ where: { tenantId: t.id, action: 'compat.job', targetId: id } });
      expect(audit.map((e) => [e.actorKind, e.detail])).toEqual([['system', { profileId: null, total: 1, computed: 1 }]]);
      expect((await t.owner.compat.matrix()).cells.map((c) => c.verdict)).toEqual(['relocated']);
    });

    it('hands a job back when its runner stops mid-way, renews the lease per step, and requeues leftovers of the only process', async () => {
      const t = await h.tenant('compat-handback');
      await t.owner.kernel.upload({ name: 'linux', tarball: tarball('linux-6.18') });
      await t.owner.kernel.upload({ name: 'android', tarball: tarball('android-3.10.49') });
      await drainCompatJobs(h.db.prisma);
      const r = await t.owner.program.publish({ name: 'runqlat', version: '1.0.0', artifact: b64(runqlat) });
      const id = r.compatJobId ?? '';
      const start = new Date();
      let now = start;
      const clock = { now: () => now, leaseMs: 10_000 };
      expect(await claimCompatJob(h.db.prisma, clock)).toBe(id);
      expect((await h.db.prisma.compatJob.findUniqueOrThrow({ where: { id } })).leaseUntil).toEqual(new Date(start.getTime() + 10_000));
      // Asked before the version and before each of its two profiles: stops before the second.
      let asked = 0;
      now = new Date(start.getTime() + 5_000);
      expect(await runCompatJob(h.db.prisma, id, () => asked++ >= 2, clock)).toBe('stopped');
      const handed = await h.db.prisma.compatJob.findUniqueOrThrow({ where: { id } });
      expect([handed.status, handed.done, handed.total, handed.leaseUntil]).toEqual(['queued', 1, 2, null]);
      // Another runner finishes it, computing only the missing pair.
      expect(await drainCompatJobs(h.db.prisma)).toBe(1);
      const audit = await h.db.prisma.auditEntry.findMany({ where: { tenantId: t.id, action: 'compat.job', targetId: id } });
      expect(audit.map((e) => e.detail)).toEqual([{ profileId: null, total: 2, computed: 1 }]);
      expect((await t.owner.compat.matrix()).cells).toHaveLength(2);

      // The only process on its database (PGlite) requeues what it left running, lease or not.
      await h.db.prisma.compatJob.update({ where: { id }, data: { status: 'running', leaseUntil: new Date(Date.now() + compatJobLeaseMs) } });
      expect(await requeueRunningJobs(h.db.prisma)).toBeGreaterThanOrEqual(1);
      expect(await h.db.prisma.compatJob.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: 'queued', leaseUntil: null });
    });

    it("computes every version on the kernel an agent reports, once per new profile", async () => {
      const t = await h.tenant('compat-agent');
      await t.owner.program.publish({ name: 'runqlat', version: '1.0.0', artifact: b64(runqlat) });
      await drainCompatJobs(h.db.prisma);
      const enrol = async (hostname: string) => {
        const { enrollmentToken } = await t.owner.agent.createEnrollmentToken();
        const r = await (await h.caller()).agent.enroll({ enrollmentToken, hostname });
        return h.caller(r.credential);
      };
      const first = await (await enrol('node-1')).agent.reportProfile({ release: '3.10.49', tarball: tarball('android-3.10.49') });
      await (await enrol('node-2')).agent.reportProfile({ release: '3.10.49', tarball: tarball('android-3.10.49') });
      const jobs = (await t.owner.compat.jobs({ active: true })).jobs;
      expect(jobs.map((j) => j.profile)).toEqual([first.profile.name]);
      await drainCompatJobs(h.db.prisma);
      const m = await t.owner.compat.matrix({ profile: first.profile.name });
      expect(m.cells.map((c) => c.verdict)).toEqual(['relocated']);
    });

    it('refuses bad matrix queries', async () => {
      const t = await h.tenant('compat-bad');
      await expect(t.owner.compat.matrix({ version: '1.0.0' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(t.owner.compat.matrix({ name: 'nope' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(t.owner.compat.matrix({ profile: 'nope' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(t.owner.compat.job({ id: 'not-a-uuid' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    });
  });

  describe.skipIf(skip)('kernel profiles', () => {
    it('diffs two profiles: events only in one, and field changes', async () => {
      const t = await h.tenant('kdiff');
      await t.owner.kernel.upload({ name: 'new', tarball: tarball('linux-6.18') });
      await t.owner.kernel.upload({ name: 'old', tarball: tarball('android-3.10.49') });
      const d = await t.owner.kernel.diff({ a: 'old', b: 'new' });
      expect(d.added.length + d.removed.length + d.changed.length).toBeGreaterThan(0);
      const sw = d.changed.find((c) => c.event === 'sched/sched_switch');
      expect(sw?.changes).toContainEqual(expect.objectContaining({ kind: 'moved', field: 'next_pid', before: expect.objectContaining({ byteOffset: 52 }), after: expect.objectContaining({ byteOffset: 56 }) }));
      const only = await t.owner.kernel.diff({ a: 'old', b: 'new', event: 'sched_switch' });
      expect(only.changed.map((c) => c.event)).toEqual(['sched/sched_switch']);
      expect(await t.owner.kernel.diff({ a: 'new', b: 'new' })).toMatchObject({ added: [], removed: [], changed: [], same: 6 });
      await expect(t.owner.kernel.diff({ a: 'old', b: 'missing' })).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'kernel profile not found: missing' });
    });

    it('uploads the formats of a trace.dat as a profile', async () => {
      const t = await h.tenant('kdat');
      const up = await t.owner.kernel.upload({ name: 'recorded', traceDat: b64(read('examples/recordings/sched-small.dat')) });
      expect(up.profile).toMatchObject({ source: 'trace_dat', release: '6.18.44-fc-v782', machine: 'x86_64', formats: 2 });
      expect((await t.owner.kernel.get({ name: 'recorded' })).events.map((e) => `${e.system}/${e.event}`)).toEqual(['sched/sched_switch', 'sched/sched_wakeup']);
      const before = await h.counts();
      await expect(t.owner.kernel.upload({ name: 'bad', traceDat: b64('not a trace.dat at all, just text') })).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('trace.dat') });
      await expect(t.owner.kernel.upload({ name: 'both', traceDat: b64('x'), tarball: tarball('linux-6.18') })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(t.owner.kernel.upload({ name: 'none' } as never)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      expect(await h.counts()).toEqual(before);
    });
  });

  describe.skipIf(skip)('tenant isolation', () => {
    it("answers tenant B's token on A's programs, versions, jobs and profiles with NOT_FOUND, and changes nothing", async () => {
      const a = await h.tenant('iso-a');
      const b = await h.tenant('iso-b');
      await a.owner.kernel.upload({ name: 'k1', tarball: tarball('linux-6.18') });
      await a.owner.kernel.upload({ name: 'k2', tarball: tarball('android-3.10.49') });
      const pub = await a.owner.program.publish({ name: 'secret', version: '1.0.0', artifact: b64(runqlat) });
      await drainCompatJobs(h.db.prisma);
      const before = await h.counts();
      const nf = { code: 'NOT_FOUND' };
      await expect(b.owner.version.list({ name: 'secret' })).rejects.toMatchObject(nf);
      await expect(b.owner.version.get({ name: 'secret', version: '1.0.0' })).rejects.toMatchObject(nf);
      await expect(b.owner.version.yank({ name: 'secret', version: '1.0.0', reason: 'mine now' })).rejects.toMatchObject(nf);
      await expect(b.owner.compat.matrix({ name: 'secret' })).rejects.toMatchObject(nf);
      await expect(b.owner.compat.matrix({ profile: 'k1' })).rejects.toMatchObject(nf);
      await expect(b.owner.compat.job({ id: pub.compatJobId ?? '' })).rejects.toMatchObject(nf);
      await expect(b.owner.kernel.diff({ a: 'k1', b: 'k2' })).rejects.toMatchObject(nf);
      const own = await b.owner.compat.matrix();
      expect(own).toEqual({ versions: [], profiles: [], cells: [], pendingJobs: 0 });
      expect((await b.owner.compat.jobs()).jobs).toEqual([]);
      expect(await h.counts()).toEqual(before);
      // The same name in B is B's own program; A's is untouched.
      const mine = await b.owner.program.publish({ name: 'secret', version: '1.0.0', artifact: b64(forkcomm) });
      expect(mine.created).toBe(true);
      expect(mine.version.id).not.toBe(pub.version.id);
      await drainCompatJobs(h.db.prisma);
      expect((await b.owner.compat.matrix()).cells).toEqual([]);
      const aVersion = await a.owner.version.get({ name: 'secret', version: '1.0.0' });
      expect(aVersion.version).toMatchObject({ id: pub.version.id, digest: pub.version.digest, yanked: null });
      expect(aVersion.compat).toHaveLength(2);
    });
  });
});
