// Providers and agents (issue 19) through createCaller on PGlite and PostgreSQL: `agent.poll`
// lists the release each pin of a program resolves to, so a provider release or yank changes the
// answer (and the ETag) of exactly the agents running programs that pin its major — never another
// tenant's, and for an instance-wide provider every tenant's that uses it (not one whose own
// provider shadows it); `agent.artifact` hands the releases' texts over; the agent's report of
// which implementation runs (`via`) is stored and shown by `deployment.get`.
import { describe, expect, it } from 'vitest';
import { backends, type Caller, useHarness } from './harness.js';
import { blockProvider as provider, blockScriptArtifact as scriptArtifact } from './support/block-provider.js';
import { insertVersion } from './support/fleet.js';

describe.each(backends)('providers and agents on %s', (backend) => {
  const { skip, h } = useHarness(backend);

  async function enrol(owner: Caller, hostname: string, labels: Record<string, string>) {
    const { enrollmentToken } = await owner.agent.createEnrollmentToken({ labels });
    const r = await (await h.caller()).agent.enroll({ enrollmentToken, hostname });
    return { id: r.agent.id, credential: r.credential, caller: await h.caller(r.credential) };
  }

  /** A tenant with its own provider NAME@1.0.0 (unless `own` is false), a script pinning it deployed to one agent, and one agent running a plain program. */
  async function tenantWith(name: string, own = true) {
    const t = await h.tenant();
    if (own) await t.owner.provider.publish({ text: provider(name, '1.0.0', false) });
    await t.owner.program.publish({ name: 'ioerr', version: '1.0.0', artifact: await scriptArtifact(name) });
    await insertVersion(h.db.prisma, t.id, 'plain', '1.0.0');
    const pinning = await enrol(t.owner, 'pinning', { role: 'io' });
    const plain = await enrol(t.owner, 'plain', { role: 'plain' });
    const d = await t.owner.deployment.create({ name: 'ioerr', version: '1.0.0', selector: 'role=io' });
    await t.owner.deployment.create({ name: 'plain', version: '1.0.0', selector: 'role=plain' });
    const first = async (a: { caller: Caller }) => {
      const r = await a.caller.agent.poll();
      if (r.notModified) throw new Error('expected assignments');
      return r;
    };
    return { t, pinning, plain, deploymentId: d.deployment.id, polls: { pinning: await first(pinning), plain: await first(plain) } };
  }

  describe.skipIf(skip)("agent.poll carries the tenant's compat setting", () => {
    it('strict-char-sign on: every agent of the tenant gets it (a new answer), another tenant none; off again: the first answer', async () => {
      const a = await tenantWith('io');
      const b = await tenantWith('io');
      expect(a.polls.plain.assignments.map((x) => Object.hasOwn(x, 'strictCharSign'))).toEqual([false]);
      await a.t.owner.compat.setSettings({ strictCharSign: true });
      for (const agent of ['pinning', 'plain'] as const) {
        const r = await a[agent].caller.agent.poll({ etag: a.polls[agent].etag });
        expect(r.notModified).toBe(false);
        expect(r.notModified === false && r.assignments.map((x) => x.strictCharSign)).toEqual([true]);
      }
      expect((await b.plain.caller.agent.poll({ etag: b.polls.plain.etag })).notModified).toBe(true);
      await a.t.owner.compat.setSettings({ strictCharSign: false });
      const off = await a.plain.caller.agent.poll();
      expect(off.etag).toBe(a.polls.plain.etag);
    });
  });

  describe.skipIf(skip)('agent.poll follows provider releases', () => {
    it("lists the release a pin resolves to; a tenant's release or yank changes only its pinning agents' answers", async () => {
      const a = await tenantWith('io');
      const b = await tenantWith('io');
      expect(a.polls.pinning.assignments.map((x) => x.providers)).toEqual([['io@1.0.0']]);
      expect(a.polls.plain.assignments.map((x) => Object.hasOwn(x, 'providers'))).toEqual([false]);
      const bFirst = b.polls.pinning;

      // the artifact carries the pinned releases' texts, as resolved now
      const targetId = a.polls.pinning.assignments[0]!.targetId;
      const art = await a.pinning.caller.agent.artifact({ targetId });
      expect(art.providers).toEqual([{ name: 'io', version: '1.0.0', text: provider('io', '1.0.0', false) }]);
      expect(Object.hasOwn(await a.plain.caller.agent.artifact({ targetId: a.polls.plain.assignments[0]!.targetId }), 'providers')).toBe(false);
      // another tenant's agent: not its target
      await expect(b.pinning.caller.agent.artifact({ targetId })).rejects.toMatchObject({ code: 'NOT_FOUND' });

      await a.t.owner.provider.publish({ text: provider('io', '1.1.0', true) });
      const after = await a.pinning.caller.agent.poll({ etag: a.polls.pinning.etag });
      expect(after.notModified).toBe(false);
      expect(after.notModified === false && after.assignments.map((x) => x.providers)).toEqual([['io@1.1.0']]);
      expect((await a.pinning.caller.agent.artifact({ targetId })).providers?.map((p) => p.version)).toEqual(['1.1.0']);
      // the plain agent of the same tenant and the other tenant's agents keep their answers
      expect((await a.plain.caller.agent.poll({ etag: a.polls.plain.etag })).notModified).toBe(true);
      expect((await b.pinning.caller.agent.poll({ etag: bFirst.etag })).notModified).toBe(true);
      expect((await b.pinning.caller.agent.artifact({ targetId: bFirst.assignments[0]!.targetId })).providers?.map((p) => p.version)).toEqual(['1.0.0']);

      // a new major does not reach programs pinned to 1
      await a.t.owner.provider.publish({ text: provider('io', '2.0.0', true) });
      expect((await a.pinning.caller.agent.poll({ etag: after.etag })).notModified).toBe(true);

      // yanking 1.1.0: back to 1.0.0; yanking that too: the pin resolves to nothing, and says so
      await a.t.owner.provider.yank({ name: 'io', version: '1.1.0', reason: 'bad expression' });
      const back = await a.pinning.caller.agent.poll({ etag: after.etag });
      expect(back.notModified === false && back.assignments.map((x) => x.providers)).toEqual([['io@1.0.0']]);
      expect(back.etag).toBe(a.polls.pinning.etag);
      await a.t.owner.provider.yank({ name: 'io', version: '1.0.0', reason: 'also bad' });
      const none = await a.pinning.caller.agent.poll({ etag: back.etag });
      expect(none.notModified === false && none.assignments.map((x) => x.providers)).toEqual([['io@1.x: none']]);
      expect((await a.pinning.caller.agent.artifact({ targetId })).providers).toEqual([]);
    });

    it('an instance-wide release reaches every tenant pinning it, not one whose own provider shadows it, nor one that does not use it', async () => {
      const admin = await h.admin();
      const name = `lib${Date.now().toString(36)}`;
      await admin.provider.publishInstance({ text: provider(name, '1.0.0', false) });
      const user1 = await tenantWith(name, false);
      const user2 = await tenantWith(name, false);
      const shadow = await tenantWith(name, true);
      const other = await tenantWith('io');
      for (const u of [user1, user2, shadow]) expect(u.polls.pinning.assignments.map((x) => x.providers)).toEqual([[`${name}@1.0.0`]]);

      const r = await admin.provider.publishInstance({ text: provider(name, '1.1.0', true) });
      expect(r.recomputedTenants).toBeGreaterThanOrEqual(2);
      for (const u of [user1, user2]) {
        const p = await u.pinning.caller.agent.poll({ etag: u.polls.pinning.etag });
        expect(p.notModified === false && p.assignments.map((x) => x.providers)).toEqual([[`${name}@1.1.0`]]);
        expect((await u.plain.caller.agent.poll({ etag: u.polls.plain.etag })).notModified).toBe(true);
      }
      expect((await shadow.pinning.caller.agent.poll({ etag: shadow.polls.pinning.etag })).notModified).toBe(true);
      expect((await other.pinning.caller.agent.poll({ etag: other.polls.pinning.etag })).notModified).toBe(true);
    });

    it("another replica picks up a provider release from the audit log: a tenant's touches that tenant, an instance-wide one every tenant", async () => {
      const { createContextFactory, createDeps } = await import('../src/context.js');
      const { FleetState } = await import('../src/fleet/fleet-state.js');
      const { createCaller } = await import('../src/router.js');
      const replica = createDeps(h.db.prisma, { fleet: new FleetState(h.db.prisma, { syncMs: 0, lastSeenFlushMs: 0 }) });
      const context = createContextFactory(replica);
      const on = async (secret: string) => createCaller(await context({ authorization: `Bearer ${secret}` }));

      const admin = await h.admin();
      const name = `rep${Date.now().toString(36)}`;
      await admin.provider.publishInstance({ text: provider(name, '1.0.0', false) });
      const a = await tenantWith('io');
      const inst = await tenantWith(name, false);
      await replica.fleet.syncFromAudit();
      const etag = async (x: { credential: string }, tag?: string) => {
        const r = await (await on(x.credential)).agent.poll(tag ? { etag: tag } : undefined);
        return r.etag;
      };
      const aTag = await etag(a.pinning);
      const instTag = await etag(inst.pinning);

      await a.t.owner.provider.publish({ text: provider('io', '1.1.0', true) });
      expect(await etag(a.pinning, aTag)).toBe(aTag); // from memory until it syncs
      await replica.fleet.syncFromAudit();
      const aNew = await etag(a.pinning, aTag);
      expect(aNew).not.toBe(aTag);
      expect(aNew).toBe((await a.pinning.caller.agent.poll()).etag); // the same answer on both replicas
      expect(await etag(inst.pinning, instTag)).toBe(instTag);

      await admin.provider.publishInstance({ text: provider(name, '1.1.0', true) });
      await replica.fleet.syncFromAudit();
      const instNew = await etag(inst.pinning, instTag);
      expect(instNew).not.toBe(instTag);
      expect(instNew).toBe((await inst.pinning.caller.agent.poll()).etag);
      await replica.fleet.close();
    });
  });

  describe.skipIf(skip)('which implementation runs', () => {
    it('stores the via of a status report and shows it in deployment.get; a via too long is BAD_REQUEST', async () => {
      const a = await tenantWith('io');
      const targetId = a.polls.pinning.assignments[0]!.targetId;
      const via = ['io:::done via io@1.0.0, implementation for errors (before 4.20)'];
      await a.pinning.caller.agent.reportStatus({ targets: [{ targetId, status: 'running', message: 'compatible', detail: { code: 'compatible', verdict: 'compatible', via } }] });
      const got = await a.t.owner.deployment.get({ id: a.deploymentId });
      expect(got.targets.map((x) => [x.status, x.via, x.statusDetail?.via])).toEqual([['running', via, via]]);
      await expect(a.pinning.caller.agent.reportStatus({ targets: [{ targetId, status: 'running', detail: { code: 'compatible', via: ['x'.repeat(501)] } }] })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      // a plain program's target has none
      const plain = await a.t.owner.deployment.list();
      const plainId = plain.deployments.find((d) => d.program.name === 'plain')!.id;
      expect((await a.t.owner.deployment.get({ id: plainId })).targets.map((x) => x.via)).toEqual([[]]);
    });
  });
});
