// The API through createCaller (real context creation, router, data layer), on PGlite and on
// PostgreSQL: procedures, roles, cross-tenant isolation, bad input and the audit log.
import { beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../src/auth/secrets.js';
import { backends, type Harness, unique, useHarness } from './harness.js';

const password = 'correct horse battery staple';

describe.each(backends)('api on %s', (backend) => {
  const { skip, h } = useHarness(backend);

  describe.skipIf(skip)('tenant.create', () => {
    it('makes the tenant, its owner and an owner token, with an audit row', async () => {
      const name = unique('made').toLowerCase();
      const r = await (await h.admin()).tenant.create({ name, ownerEmail: 'Owner@Example.COM' });
      expect(r.tenant.name).toBe(name);
      expect(r.owner.email).toBe('owner@example.com');
      expect(r.ownerToken).toMatch(/^pyt_[A-Za-z0-9_-]{43}$/);
      const stored = await h.db.prisma.apiToken.findUniqueOrThrow({ where: { id: r.ownerTokenId } });
      expect(stored.hash).toBe(hashSecret(r.ownerToken));
      expect(JSON.stringify(stored)).not.toContain(r.ownerToken);
      const audit = await h.db.prisma.auditEntry.findMany({ where: { tenantId: r.tenant.id } });
      expect(audit.map((a) => [a.action, a.actorKind])).toEqual([['tenant.create', 'admin']]);
    });

    it('refuses a duplicate name with CONFLICT and writes nothing', async () => {
      const t = await h.tenant();
      const before = await h.counts();
      await expect((await h.admin()).tenant.create({ name: t.name, ownerEmail: 'x@example.com' })).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(await h.counts()).toEqual(before);
    });

    it.each([
      ['anonymous', undefined],
      ['a user token', 'owner'],
      ['an unknown secret', 'pyi_not-a-real-credential'],
    ])('refuses %s with UNAUTHORIZED', async (_, who) => {
      const t = await h.tenant();
      const secret = who === 'owner' ? t.ownerToken : who;
      const before = await h.counts();
      await expect((await h.caller(secret)).tenant.create({ name: unique('x'), ownerEmail: 'x@example.com' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      expect(await h.counts()).toEqual(before);
    });

    it.each([
      ['SQL-ish name', { name: "acme'; DROP TABLE \"Tenant\"; --", ownerEmail: 'a@example.com' }],
      ['upper case name', { name: 'ACME', ownerEmail: 'a@example.com' }],
      ['empty name', { name: '', ownerEmail: 'a@example.com' }],
      ['bad email', { name: 'fine-name', ownerEmail: "a' OR '1'='1" }],
      ['unknown field', { name: 'fine-name-2', ownerEmail: 'a@example.com', plan: 'enterprise' }],
      ['short password', { name: 'fine-name-3', ownerEmail: 'a@example.com', ownerPassword: 'short' }],
    ])('refuses %s with BAD_REQUEST and writes nothing', async (_, input) => {
      const before = await h.counts();
      await expect((await h.admin()).tenant.create(input as never)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      expect(await h.counts()).toEqual(before);
    });
  });

  describe.skipIf(skip)('auth.login', () => {
    it('trades email and password for a session token of the member role', async () => {
      const t = await h.tenant();
      const m = await h.member(t.owner, 'publisher', password);
      const r = await (await h.caller()).auth.login({ email: m.email.toUpperCase(), password, tenant: t.name });
      expect(r.role).toBe('publisher');
      expect(r.token).toMatch(/^pys_/);
      expect(new Date(r.expiresAt).getTime()).toBeGreaterThan(Date.now() + 11 * 3_600_000);
      const me = await (await h.caller(r.token)).whoami();
      expect(me).toMatchObject({ role: 'publisher', tenant: { name: t.name }, user: { email: m.email } });
      const audit = await h.db.prisma.auditEntry.count({ where: { tenantId: t.id, action: 'auth.login', targetId: r.tokenId } });
      expect(audit).toBe(1);
    });

    it('answers a wrong password, an unknown user and a foreign tenant alike, and writes nothing', async () => {
      const a = await h.tenant();
      const b = await h.tenant();
      const m = await h.member(a.owner, 'viewer', password);
      const anon = await h.caller(undefined, '10.9.9.1');
      const before = await h.counts();
      for (const input of [
        { email: m.email, password: 'wrong password!!', tenant: a.name },
        { email: 'nobody@example.com', password, tenant: a.name },
        { email: m.email, password, tenant: b.name },
      ]) {
        await expect(anon.auth.login(input)).rejects.toMatchObject({ code: 'UNAUTHORIZED', message: 'login: invalid email, password or tenant' });
      }
      expect(await h.counts()).toEqual(before);
    });

    it('limits failures per email and client address', async () => {
      const t = await h.tenant();
      const m = await h.member(t.owner, 'viewer', password);
      const attacker = await h.caller(undefined, '203.0.113.7');
      for (let i = 0; i < 5; i++) {
        await expect(attacker.auth.login({ email: m.email, password: `guess number ${i}` })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      }
      // Now even the right password is refused from that address …
      await expect(attacker.auth.login({ email: m.email, password })).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS' });
      // … but not from another one.
      const elsewhere = await h.caller(undefined, '198.51.100.2');
      await expect(elsewhere.auth.login({ email: m.email, password })).resolves.toMatchObject({ role: 'viewer' });
    });
  });

  describe.skipIf(skip)('tokens', () => {
    it('creates a token shown once, lists it without the secret, and revokes it', async () => {
      const t = await h.tenant();
      const { token, secret } = await t.owner.token.create({ name: 'ci', role: 'publisher', expiresInDays: 30 });
      expect(token.role).toBe('publisher');
      expect(secret.startsWith(token.prefix)).toBe(true);
      const me = await (await h.caller(secret)).whoami();
      expect(me.role).toBe('publisher');
      const listed = await t.owner.token.list();
      expect(listed.tokens.map((x) => x.name)).toContain('ci');
      expect(JSON.stringify(listed)).not.toContain(secret);
      const revoked = await t.owner.token.revoke({ id: token.id });
      expect(revoked.token.revokedAt).not.toBeNull();
      await expect((await h.caller(secret)).whoami()).rejects.toMatchObject({ code: 'UNAUTHORIZED', message: 'unauthorized: token revoked' });
    });

    it.each(['revoked', 'expired'] as const)('lets a %s token write nothing', async (state) => {
      const t = await h.tenant();
      const { token, secret } = await t.owner.token.create({ name: state });
      await h.db.prisma.apiToken.update({
        where: { id: token.id },
        data: state === 'revoked' ? { revokedAt: new Date() } : { expiresAt: new Date(Date.now() - 1000) },
      });
      const c = await h.caller(secret);
      const before = await h.counts();
      await expect(c.token.create({ name: 'more' })).rejects.toMatchObject({ code: 'UNAUTHORIZED', message: `unauthorized: token ${state}` });
      await expect(c.member.invite({ email: 'x@example.com', role: 'viewer' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      await expect(c.agent.createEnrollmentToken()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      expect(await h.counts()).toEqual(before);
    });

    it('refuses an expired token', async () => {
      const t = await h.tenant();
      const { token, secret } = await t.owner.token.create({ name: 'short', expiresInDays: 1 });
      await h.db.prisma.apiToken.update({ where: { id: token.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
      await expect((await h.caller(secret)).whoami()).rejects.toMatchObject({ code: 'UNAUTHORIZED', message: 'unauthorized: token expired' });
    });

    it('refuses a token stronger than the caller with FORBIDDEN and writes nothing', async () => {
      const t = await h.tenant();
      const p = await h.member(t.owner, 'publisher');
      const before = await h.counts();
      await expect(p.caller.token.create({ name: 'escalate', role: 'admin' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      await expect(p.caller.token.create({ name: 'escalate', role: 'owner' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      expect(await h.counts()).toEqual(before);
      await expect(p.caller.token.create({ name: 'same' })).resolves.toMatchObject({ token: { role: 'publisher' } });
    });

    it('shows non-admins only their own tokens, and hides others from revoke as NOT_FOUND', async () => {
      const t = await h.tenant();
      const v = await h.member(t.owner, 'viewer');
      const { token } = await t.owner.token.create({ name: 'owner-only' });
      const seen = await v.caller.token.list();
      expect(seen.tokens.every((x) => x.user.email === v.email)).toBe(true);
      await expect(v.caller.token.revoke({ id: token.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect((await h.db.prisma.apiToken.findUniqueOrThrow({ where: { id: token.id } })).revokedAt).toBeNull();
    });

    it("caps a token's role by its user's current membership", async () => {
      const t = await h.tenant();
      const a = await h.member(t.owner, 'admin');
      await t.owner.member.setRole({ userId: a.userId, role: 'viewer' });
      expect((await (await h.caller(a.token)).whoami()).role).toBe('viewer');
      await t.owner.member.remove({ userId: a.userId });
      await expect((await h.caller(a.token)).whoami()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    });
  });

  describe.skipIf(skip)('members', () => {
    it('invites, lists, changes and removes members, one audit row each', async () => {
      const t = await h.tenant();
      const auditBefore = await h.db.prisma.auditEntry.count({ where: { tenantId: t.id } });
      const { secret } = await t.owner.member.invite({ email: 'dev@example.com', role: 'publisher' });
      await (await h.caller()).auth.acceptInvitation({ secret, password: 'a password of my own' });
      const member = (await t.owner.member.list()).members.find((m) => m.email === 'dev@example.com');
      if (!member) throw new Error('the invited member is not listed');
      await t.owner.member.setRole({ userId: member.userId, role: 'admin' });
      const listed = await t.owner.member.list();
      expect(listed.members.map((m) => [m.email, m.role])).toEqual([
        [`owner@${t.name}.example`, 'owner'],
        ['dev@example.com', 'admin'],
      ]);
      await t.owner.member.remove({ userId: member.userId });
      expect((await t.owner.member.list()).members).toHaveLength(1);
      const actions = (await h.db.prisma.auditEntry.findMany({ where: { tenantId: t.id }, orderBy: { id: 'asc' }, skip: auditBefore })).map((a) => a.action);
      expect(actions).toEqual(['member.invite', 'auth.acceptInvitation', 'member.setRole', 'member.remove']);
    });

    it('keeps the last owner', async () => {
      const t = await h.tenant();
      await expect(t.owner.member.remove({ userId: t.ownerId })).rejects.toMatchObject({ code: 'CONFLICT' });
      await expect(t.owner.member.setRole({ userId: t.ownerId, role: 'admin' })).rejects.toMatchObject({ code: 'CONFLICT' });
    });

    it('lets an admin neither make nor touch an owner', async () => {
      const t = await h.tenant();
      const a = await h.member(t.owner, 'admin');
      const before = await h.counts();
      await expect(a.caller.member.invite({ email: 'boss@example.com', role: 'owner' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      await expect(a.caller.member.remove({ userId: t.ownerId })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      await expect(a.caller.member.setRole({ userId: t.ownerId, role: 'viewer' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      expect(await h.counts()).toEqual(before);
    });

    it('refuses to invite a member of the tenant with CONFLICT', async () => {
      const t = await h.tenant();
      const m = await h.member(t.owner, 'viewer');
      await expect(t.owner.member.invite({ email: m.email, role: 'viewer' })).rejects.toMatchObject({ code: 'CONFLICT' });
    });
  });

  describe.skipIf(skip)('agents', () => {
    it('enrols once with a one-time token and authenticates with its credential', async () => {
      const t = await h.tenant();
      const { enrollmentToken } = await t.owner.agent.createEnrollmentToken({ labels: { env: 'prod' } });
      const anon = await h.caller();
      const r = await anon.agent.enroll({ enrollmentToken, hostname: 'node-1', labels: { env: 'dev', zone: 'a' } });
      expect(r.agent.labels).toEqual({ env: 'prod', zone: 'a' });
      expect(r.credential).toMatch(/^pya_/);
      const before = await h.counts();
      await expect(anon.agent.enroll({ enrollmentToken, hostname: 'node-2' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      expect(await h.counts()).toEqual(before);
      const self = await (await h.caller(r.credential)).agent.self();
      expect(self.agent.id).toBe(r.agent.id);
      expect((await t.owner.agent.list()).agents.map((a) => a.hostname)).toEqual(['node-1']);
      // An agent credential is not a user token, and a user token is not an agent credential.
      await expect((await h.caller(r.credential)).whoami()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      await expect(t.owner.agent.self()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    });

    it('relabels and revokes an agent; a revoked credential answers UNAUTHORIZED', async () => {
      const t = await h.tenant();
      const { enrollmentToken } = await t.owner.agent.createEnrollmentToken({ labels: { env: 'dev' } });
      const r = await (await h.caller()).agent.enroll({ enrollmentToken, hostname: 'node-r' });
      const relabelled = await t.owner.agent.setLabels({ agentId: r.agent.id, labels: { env: 'prod', zone: 'b' } });
      expect(relabelled.agent.labels).toEqual({ env: 'prod', zone: 'b' });
      await t.owner.agent.revoke({ agentId: r.agent.id });
      await expect((await h.caller(r.credential)).agent.self()).rejects.toMatchObject({ code: 'UNAUTHORIZED', message: 'unauthorized: agent credential revoked' });
      const actions = (await h.db.prisma.auditEntry.findMany({ where: { tenantId: t.id, targetId: r.agent.id }, orderBy: { id: 'asc' } })).map((a) => a.action);
      expect(actions).toEqual(['agent.enroll', 'agent.setLabels', 'agent.revoke']);
    });

    it('refuses an expired enrolment token', async () => {
      const t = await h.tenant();
      const { id, enrollmentToken } = await t.owner.agent.createEnrollmentToken();
      await h.db.prisma.enrollmentToken.update({ where: { id }, data: { expiresAt: new Date(Date.now() - 1) } });
      await expect((await h.caller()).agent.enroll({ enrollmentToken, hostname: 'late' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    });

    it('enrols exactly one agent when two use the same token at once', async () => {
      const t = await h.tenant();
      const { enrollmentToken } = await t.owner.agent.createEnrollmentToken();
      const anon = await h.caller();
      const results = await Promise.allSettled([
        anon.agent.enroll({ enrollmentToken, hostname: 'racer-1' }),
        anon.agent.enroll({ enrollmentToken, hostname: 'racer-2' }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(await h.db.prisma.agent.count({ where: { tenantId: t.id } })).toBe(1);
    });
  });

  describe.skipIf(skip)('programs and kernels (read-only)', () => {
    it('lists programs and shows versions newest first, without artifact bytes', async () => {
      const t = await h.tenant();
      const program = await h.db.prisma.program.create({ data: { tenantId: t.id, name: 'sched-latency', description: 'run queue latency', tags: ['sched'] } });
      for (const [version, major, minor, patch, prerelease] of [
        ['1.0.0', 1, 0, 0, ''],
        ['1.10.0', 1, 10, 0, ''],
        ['1.2.0', 1, 2, 0, ''],
      ] as const) {
        await h.db.prisma.programVersion.create({
          data: {
            tenantId: t.id,
            programId: program.id,
            version,
            major,
            minor,
            patch,
            prerelease,
            artifactKind: 'asm',
            artifact: new Uint8Array([1, 2, 3]),
            digest: 'ab'.repeat(32),
            size: 3,
            spec: {},
            manifest: {},
            verifierReport: {},
          },
        });
      }
      expect((await t.owner.program.list()).programs.map((p) => [p.name, p.versions])).toEqual([['sched-latency', 3]]);
      expect((await t.owner.program.list({ tag: 'net' })).programs).toEqual([]);
      const got = await t.owner.program.get({ name: 'sched-latency' });
      expect(got.versions.map((v) => v.version)).toEqual(['1.10.0', '1.2.0', '1.0.0']);
      expect(got.versions[0]?.abi).toBe('module-like, no ABI');
      expect(Object.keys(got.versions[0] ?? {})).not.toContain('artifact');
      expect((await t.owner.kernel.list()).profiles).toEqual([]);
    });
  });

  describe.skipIf(skip)('audit.list', () => {
    it('pages through the log newest first', async () => {
      const t = await h.tenant();
      for (const name of ['one', 'two', 'three']) await t.owner.token.create({ name });
      const first = await t.owner.audit.list({ limit: 2 });
      expect(first.entries.map((e) => [e.action, (e.detail as { name?: string }).name])).toEqual([
        ['token.create', 'three'],
        ['token.create', 'two'],
      ]);
      expect(first.entries[0]?.actor).toEqual({ kind: 'user', id: t.ownerId });
      const rest = await t.owner.audit.list({ limit: 2, cursor: first.nextCursor ?? undefined });
      expect(rest.entries.map((e) => e.action)).toEqual(['token.create', 'tenant.create']);
      const end = await t.owner.audit.list({ limit: 2, cursor: rest.nextCursor ?? undefined });
      expect(end).toEqual({ entries: [], nextCursor: null });
    });
  });

  describe.skipIf(skip)('cross-tenant isolation: tenant B on tenant A', () => {
    let a: Awaited<ReturnType<Harness['tenant']>>;
    let b: Awaited<ReturnType<Harness['tenant']>>;
    let aTokenId: string;
    let aMember: string;
    let aAgent: string;
    beforeAll(async () => {
      if (skip) return;
      a = await h.tenant('alpha');
      b = await h.tenant('beta');
      aTokenId = (await a.owner.token.create({ name: 'a-secret' })).token.id;
      aMember = (await h.member(a.owner, 'viewer')).userId;
      await h.db.prisma.program.create({ data: { tenantId: a.id, name: 'a-program' } });
      const { enrollmentToken } = await a.owner.agent.createEnrollmentToken();
      aAgent = (await (await h.caller()).agent.enroll({ enrollmentToken, hostname: 'a-node' })).agent.id;
    });

    it.each([
      ['token.revoke', () => b.owner.token.revoke({ id: aTokenId })],
      ['member.remove', () => b.owner.member.remove({ userId: aMember })],
      ['member.setRole', () => b.owner.member.setRole({ userId: aMember, role: 'admin' })],
      ['program.get', () => b.owner.program.get({ name: 'a-program' })],
      ['agent.setLabels', () => b.owner.agent.setLabels({ agentId: aAgent, labels: { pwned: 'yes' } })],
      ['agent.revoke', () => b.owner.agent.revoke({ agentId: aAgent })],
    ])('%s answers NOT_FOUND and changes nothing', async (_, call) => {
      const before = await h.counts();
      const snapshot = await h.db.prisma.apiToken.findUniqueOrThrow({ where: { id: aTokenId } });
      const membership = await h.db.prisma.membership.findFirstOrThrow({ where: { tenantId: a.id, userId: aMember } });
      await expect(call()).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await h.counts()).toEqual(before);
      expect(await h.db.prisma.apiToken.findUniqueOrThrow({ where: { id: aTokenId } })).toEqual(snapshot);
      expect(await h.db.prisma.membership.findFirstOrThrow({ where: { tenantId: a.id, userId: aMember } })).toEqual(membership);
      expect(await h.db.prisma.agent.findUniqueOrThrow({ where: { id: aAgent } })).toMatchObject({ labels: {}, revokedAt: null });
    });

    it("answers a missing row exactly as another tenant's row", async () => {
      const missing = await b.owner.program.get({ name: 'no-such-program' }).catch((e: Error) => e);
      const foreign = await b.owner.program.get({ name: 'a-program' }).catch((e: Error) => e);
      expect((foreign as Error).message).toBe((missing as Error).message.replace('no-such-program', 'a-program'));
      expect((foreign as { code?: string }).code).toBe((missing as { code?: string }).code);
    });

    it.each([
      ['token.list', async () => JSON.stringify(await b.owner.token.list({ includeRevoked: true }))],
      ['member.list', async () => JSON.stringify(await b.owner.member.list())],
      ['agent.list', async () => JSON.stringify(await b.owner.agent.list())],
      ['program.list', async () => JSON.stringify(await b.owner.program.list())],
      ['kernel.list', async () => JSON.stringify(await b.owner.kernel.list())],
      ['audit.list', async () => JSON.stringify(await b.owner.audit.list())],
    ])("%s shows nothing of tenant A", async (_, list) => {
      const text = await list();
      for (const leak of [a.id, a.name, aTokenId, aMember, 'a-program', 'a-node', 'a-secret']) expect(text).not.toContain(leak);
    });
  });

  describe.skipIf(skip)('roles', () => {
    type RoleName = 'owner' | 'admin' | 'publisher' | 'viewer';
    const cases: [string, RoleName, (c: Awaited<ReturnType<Harness['caller']>>) => Promise<unknown>][] = [
      ['whoami', 'viewer', (c) => c.whoami()],
      ['token.list', 'viewer', (c) => c.token.list()],
      ['token.create', 'viewer', (c) => c.token.create({ name: 'role-test', role: 'viewer' })],
      ['member.list', 'viewer', (c) => c.member.list()],
      ['agent.list', 'viewer', (c) => c.agent.list()],
      ['program.list', 'viewer', (c) => c.program.list()],
      ['kernel.list', 'viewer', (c) => c.kernel.list()],
      ['member.invite', 'admin', (c) => c.member.invite({ email: `${unique('new')}@example.com`, role: 'viewer' })],
      ['member.invitations', 'admin', (c) => c.member.invitations()],
      ['audit.list', 'admin', (c) => c.audit.list()],
      ['agent.createEnrollmentToken', 'admin', (c) => c.agent.createEnrollmentToken()],
      ['agent.setLabels', 'admin', (c) => c.agent.setLabels({ agentId: roleAgent, labels: { tier: 'x' } })],
    ];
    const rank: Record<RoleName, number> = { owner: 4, admin: 3, publisher: 2, viewer: 1 };
    const rows = cases.flatMap(([proc, min, call]) =>
      (['owner', 'admin', 'publisher', 'viewer'] as const).map((role) => [proc, role, rank[role] >= rank[min], call] as const),
    );
    let t: Awaited<ReturnType<Harness['tenant']>>;
    let roleAgent = '';
    const callers = new Map<RoleName, Awaited<ReturnType<Harness['caller']>>>();
    beforeAll(async () => {
      if (skip) return;
      t = await h.tenant('roles');
      const { enrollmentToken } = await t.owner.agent.createEnrollmentToken();
      roleAgent = (await (await h.caller()).agent.enroll({ enrollmentToken, hostname: 'role-node' })).agent.id;
      callers.set('owner', t.owner);
      for (const role of ['admin', 'publisher', 'viewer'] as const) callers.set(role, (await h.member(t.owner, role)).caller);
    });
    it.each(rows)('%s as %s: allowed %s', async (_, role, allowed, call) => {
      const c = callers.get(role);
      if (!c) throw new Error('no caller');
      if (allowed) await expect(call(c)).resolves.toBeDefined();
      else {
        const before = await h.counts();
        await expect(call(c)).rejects.toMatchObject({ code: 'FORBIDDEN' });
        expect(await h.counts()).toEqual(before);
      }
    });
  });
});
