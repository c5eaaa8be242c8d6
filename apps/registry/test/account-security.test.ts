// Issue 13, findings 1, 2, 3 and 7 on PGlite and PostgreSQL, through createCaller: invitations
// instead of passwords chosen by inviters, no credential yielding more than its role, login
// attempts counted before the hash, and nothing of one tenant told to another.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PasswordGate } from '../src/auth/password-gate.js';
import { LoginLimiter } from '../src/auth/rate-limit.js';
import { hashSecret } from '../src/auth/secrets.js';
import { backends, unique, useHarness } from './harness.js';

const fixtures = fileURLToPath(new URL('../../../packages/formats/test/fixtures/formats/', import.meta.url));
const tarball = (tree: string) => execFileSync('tar', ['-C', `${fixtures}${tree}`, '-czf', '-', '.']).toString('base64');

const bPassword = 'password tenant b chose';
const carolsOwn = 'carol chose this one';

/** The shape of a value with ids, secrets, emails and times blanked: what an answer tells beyond its inputs. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)]));
  return typeof v;
}

describe.each(backends)('account security on %s', (backend) => {
  const { skip, h } = useHarness(backend);

  describe.skipIf(skip)('finding 1: invitations, not passwords chosen by an inviter', () => {
    it('answers an invitation alike whether or not the email has an account elsewhere, and adds no member before acceptance', async () => {
      const a = await h.tenant('inv-a');
      const b = await h.tenant('inv-b');
      const elsewhere = await h.member(b.owner, 'viewer', bPassword);
      const fresh = `${unique('fresh')}@example.com`.toLowerCase();
      const usersBefore = await h.db.prisma.user.count();
      const known = await a.owner.member.invite({ email: elsewhere.email, role: 'admin' });
      const unknown = await a.owner.member.invite({ email: fresh, role: 'admin' });
      expect(shape(known)).toEqual(shape(unknown));
      expect(Object.keys(known.invitation).sort()).toEqual(Object.keys(unknown.invitation).sort());
      expect(known.secret).toMatch(/^pyv_[A-Za-z0-9_-]{43}$/);
      // No user made, no membership yet; listed as pending with neither account fact.
      expect(await h.db.prisma.user.count()).toBe(usersBefore);
      expect((await a.owner.member.list()).members.map((m) => m.email)).toEqual([`owner@${a.name}.example`]);
      const pending = (await a.owner.member.invitations()).invitations;
      expect(pending.map((i) => i.email).sort()).toEqual([elsewhere.email, fresh].sort());
      expect(shape(pending[0])).toEqual(shape(pending[1]));
      // The audit rows of both say the same things.
      const rows = await h.db.prisma.auditEntry.findMany({ where: { tenantId: a.id, action: 'member.invite' }, orderBy: { id: 'asc' } });
      expect(rows.map((r) => Object.keys(r.detail as object).sort())).toEqual([
        ['email', 'expiresAt', 'role'],
        ['email', 'expiresAt', 'role'],
      ]);
      // Only the hash of the secret is stored.
      const stored = await h.db.prisma.invitation.findUniqueOrThrow({ where: { id: known.invitation.id } });
      expect(stored.hash).toBe(hashSecret(known.secret));
      expect(JSON.stringify(stored)).not.toContain(known.secret);
    });

    it("stops the takeover: tenant B's owner cannot pre-set the password of a user tenant A invites", async () => {
      const a = await h.tenant('take-a');
      const b = await h.tenant('take-b');
      const carol = `${unique('carol')}@x.example`.toLowerCase();
      // B invites carol and redeems the secret itself, choosing a password B knows.
      const bInvite = await b.owner.member.invite({ email: carol, role: 'viewer' });
      const attacker = await h.caller(undefined, '203.0.113.50');
      await expect(attacker.auth.acceptInvitation({ secret: bInvite.secret, password: bPassword })).resolves.toMatchObject({ accountCreated: true });
      // A invites carol as admin; whoever holds A's secret without carol's credential gets nowhere.
      const aInvite = await a.owner.member.invite({ email: carol, role: 'admin' });
      const holder = await h.caller(undefined, '198.51.100.60');
      const before = await h.counts();
      await expect(holder.auth.acceptInvitation({ secret: aInvite.secret })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      await expect(holder.auth.acceptInvitation({ secret: aInvite.secret, password: carolsOwn })).rejects.toMatchObject({
        code: 'FORBIDDEN',
        message: "accept invitation: the password is not the account's password",
      });
      expect(await h.counts()).toEqual(before);
      // The secret set nothing: B's password still works in B only, and never in A.
      await expect(attacker.auth.login({ email: carol, password: carolsOwn, tenant: b.name })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      await expect(attacker.auth.login({ email: carol, password: bPassword, tenant: a.name })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      await expect(attacker.auth.login({ email: carol, password: bPassword, tenant: b.name })).resolves.toMatchObject({ role: 'viewer' });
      expect((await a.owner.member.list()).members.map((m) => m.email)).not.toContain(carol);
      expect((await a.owner.member.invitations()).invitations.map((i) => i.id)).toContain(aInvite.invitation.id);
    });

    it('lets a new person choose their own password, once; the secret is single-use', async () => {
      const t = await h.tenant('inv-new');
      const email = `${unique('dana')}@example.com`.toLowerCase();
      const { secret } = await t.owner.member.invite({ email, role: 'publisher' });
      const anon = await h.caller(undefined, '192.0.2.10');
      const before = await h.counts();
      await expect(anon.auth.acceptInvitation({ secret })).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('choose a password') });
      await expect(anon.auth.acceptInvitation({ secret, password: 'short' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      expect(await h.counts()).toEqual(before);
      const r = await anon.auth.acceptInvitation({ secret, password: 'dana picked this' });
      expect(r).toEqual({ tenant: { id: t.id, name: t.name }, email, role: 'publisher', accountCreated: true });
      await expect(anon.auth.login({ email, password: 'dana picked this' })).resolves.toMatchObject({ role: 'publisher' });
      await expect(anon.auth.acceptInvitation({ secret, password: 'dana picked this' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect((await t.owner.member.invitations()).invitations).toEqual([]);
    });

    it('lets an existing account accept with its own password or its own full-role token, never with a capped one', async () => {
      const a = await h.tenant('inv-x-a');
      const b = await h.tenant('inv-x-b');
      const m = await h.member(b.owner, 'admin', carolsOwn);
      // With its password.
      const first = await a.owner.member.invite({ email: m.email, role: 'viewer' });
      await expect((await h.caller(undefined, '192.0.2.20')).auth.acceptInvitation({ secret: first.secret, password: carolsOwn })).resolves.toMatchObject({
        accountCreated: false,
        role: 'viewer',
      });
      await expect((await h.caller()).auth.login({ email: m.email, password: carolsOwn, tenant: a.name })).resolves.toMatchObject({ role: 'viewer' });
      // Signed in as it (a login session in B), no password needed; a capped token of it is refused.
      const c = await h.tenant('inv-x-c');
      const second = await c.owner.member.invite({ email: m.email, role: 'publisher' });
      const viewerToken = (await m.caller.token.create({ name: 'capped', role: 'viewer' })).secret;
      await expect((await h.caller(viewerToken)).auth.acceptInvitation({ secret: second.secret })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      // Someone else's token: refused too.
      await expect((await h.caller(b.ownerToken)).auth.acceptInvitation({ secret: second.secret })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      const session = await (await h.caller()).auth.login({ email: m.email, password: carolsOwn, tenant: b.name });
      await expect((await h.caller(session.token)).auth.acceptInvitation({ secret: second.secret })).resolves.toMatchObject({ accountCreated: false, role: 'publisher' });
      const actions = await h.db.prisma.auditEntry.findMany({ where: { tenantId: c.id, targetId: second.invitation.id }, orderBy: { id: 'asc' }, select: { action: true, actorId: true } });
      expect(actions).toEqual([
        { action: 'member.invite', actorId: c.ownerId },
        { action: 'auth.acceptInvitation', actorId: m.userId },
      ]);
    });

    it('redeems a secret once however many redeem it at once', async () => {
      const t = await h.tenant('inv-race');
      const email = `${unique('race')}@example.com`.toLowerCase();
      const { secret } = await t.owner.member.invite({ email, role: 'viewer' });
      const anon = await h.caller(undefined, '192.0.2.30');
      const results = await Promise.allSettled(Array.from({ length: 6 }, () => anon.auth.acceptInvitation({ secret, password: 'racing for it!' })));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(await h.db.prisma.membership.count({ where: { tenantId: t.id, user: { email } } })).toBe(1);
      expect(await h.db.prisma.user.count({ where: { email } })).toBe(1);
    });

    it.each(['expired', 'revoked'] as const)('refuses an %s invitation with NOT_FOUND and writes nothing', async (state) => {
      const t = await h.tenant('inv-dead');
      const { invitation, secret } = await t.owner.member.invite({ email: `${unique(state)}@example.com`.toLowerCase(), role: 'viewer' });
      if (state === 'revoked') await t.owner.member.revokeInvitation({ id: invitation.id });
      else await h.db.prisma.invitation.update({ where: { id: invitation.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
      const before = await h.counts();
      await expect((await h.caller()).auth.acceptInvitation({ secret, password: 'a fine password' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await h.counts()).toEqual(before);
      expect((await t.owner.member.invitations()).invitations).toEqual([]);
    });

    it("keeps invitations to their tenant: another tenant's is NOT_FOUND, not listed, not revocable", async () => {
      const a = await h.tenant('inv-iso-a');
      const b = await h.tenant('inv-iso-b');
      const { invitation } = await a.owner.member.invite({ email: `${unique('iso')}@example.com`.toLowerCase(), role: 'viewer' });
      await expect(b.owner.member.revokeInvitation({ id: invitation.id })).rejects.toMatchObject({ code: 'NOT_FOUND', message: `invitation not found: ${invitation.id}` });
      expect((await b.owner.member.invitations()).invitations).toEqual([]);
      expect((await a.owner.member.invitations()).invitations.map((i) => i.id)).toEqual([invitation.id]);
      // An admin can neither invite nor revoke above its role; a publisher cannot list.
      const admin = await h.member(a.owner, 'admin');
      const ownerInvite = await a.owner.member.invite({ email: `${unique('boss')}@example.com`.toLowerCase(), role: 'owner' });
      await expect(admin.caller.member.revokeInvitation({ id: ownerInvite.invitation.id })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      const publisher = await h.member(a.owner, 'publisher');
      await expect(publisher.caller.member.invitations()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    });

    it('bounds the pending invitations of a tenant (1,000), and only of that tenant', async () => {
      const a = await h.tenant('inv-cap-a');
      const b = await h.tenant('inv-cap-b');
      const expiresAt = new Date(Date.now() + 3_600_000);
      await h.db.prisma.invitation.createMany({
        data: Array.from({ length: 1000 }, (_, i) => ({ tenantId: a.id, email: `bulk-${i}@example.com`, role: 'viewer' as const, hash: `${a.id}-${i}`, prefix: 'pyv_x', expiresAt })),
      });
      await expect(a.owner.member.invite({ email: 'one-more@example.com', role: 'viewer' })).rejects.toMatchObject({
        code: 'CONFLICT',
        message: 'member invite: 1000 invitations are pending, the limit is 1000; revoke some first',
      });
      await expect(b.owner.member.invite({ email: 'one-more@example.com', role: 'viewer' })).resolves.toMatchObject({ invitation: { email: 'one-more@example.com' } });
    });

    it('tells member.remove and member.setRole callers nothing about users of other tenants', async () => {
      const a = await h.tenant('leak-a');
      const b = await h.tenant('leak-b');
      const bMember = await h.member(b.owner, 'viewer');
      const nobody = '01900000-0000-7000-8000-000000000000';
      for (const id of [bMember.userId, nobody]) {
        await expect(a.owner.member.remove({ userId: id })).rejects.toMatchObject({ code: 'NOT_FOUND', message: `member not found: ${id}` });
        await expect(a.owner.member.setRole({ userId: id, role: 'admin' })).rejects.toMatchObject({ code: 'NOT_FOUND', message: `member not found: ${id}` });
      }
    });
  });

  describe.skipIf(skip)('finding 2: no credential yields more than its role', () => {
    it('refuses a viewer-role token of a password-less owner setting the first password (and so logging in as owner)', async () => {
      const t = await h.tenant('setpw');
      const viewer = (await t.owner.token.create({ name: 'read-only', role: 'viewer' })).secret;
      const before = await h.counts();
      await expect((await h.caller(viewer)).auth.setPassword({ newPassword: 'the attacker wants this' })).rejects.toMatchObject({
        code: 'FORBIDDEN',
        message: expect.stringContaining("capped below the account's"),
      });
      expect(await h.counts()).toEqual(before);
      await expect((await h.caller()).auth.login({ email: `owner@${t.name}.example`, password: 'the attacker wants this' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      // The owner's full-role token may set it.
      await expect(t.owner.auth.setPassword({ newPassword: 'the owner chose this' })).resolves.toMatchObject({ ok: true });
      await expect((await h.caller()).auth.login({ email: `owner@${t.name}.example`, password: 'the owner chose this' })).resolves.toMatchObject({ role: 'owner' });
      // From now on the current password is needed, whatever the token.
      await expect(t.owner.auth.setPassword({ newPassword: 'without the old one' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    });

    it("revokes the account's login sessions in every tenant on a password change; API tokens and the caller's own session stay", async () => {
      const a = await h.tenant('sess-a');
      const b = await h.tenant('sess-b');
      const m = await h.member(a.owner, 'publisher', carolsOwn);
      const bInvite = await b.owner.member.invite({ email: m.email, role: 'viewer' });
      await (await h.caller()).auth.acceptInvitation({ secret: bInvite.secret, password: carolsOwn });
      const anon = await h.caller(undefined, '192.0.2.40');
      const s1 = await anon.auth.login({ email: m.email, password: carolsOwn, tenant: a.name });
      const s2 = await anon.auth.login({ email: m.email, password: carolsOwn, tenant: a.name });
      const sB = await anon.auth.login({ email: m.email, password: carolsOwn, tenant: b.name });
      const r = await (await h.caller(s1.token)).auth.setPassword({ currentPassword: carolsOwn, newPassword: 'a brand new password' });
      expect(r).toEqual({ ok: true, sessionsRevoked: 2 });
      for (const revoked of [s2.token, sB.token]) {
        await expect((await h.caller(revoked)).whoami()).rejects.toMatchObject({ code: 'UNAUTHORIZED', message: 'unauthorized: token revoked' });
      }
      await expect((await h.caller(s1.token)).whoami()).resolves.toMatchObject({ role: 'publisher' });
      await expect(m.caller.whoami()).resolves.toMatchObject({ role: 'publisher' });
      // A's audit row counts only A's sessions.
      const row = await h.db.prisma.auditEntry.findFirstOrThrow({ where: { tenantId: a.id, action: 'auth.setPassword' } });
      expect(row.detail).toEqual({ firstPassword: false, sessionsRevoked: 1 });
    });

    it('counts wrong current passwords like failed logins: a stolen token cannot guess faster', async () => {
      const t = await h.tenant('setpw-guess');
      const m = await h.member(t.owner, 'viewer', carolsOwn);
      const thief = await h.caller(m.token, '203.0.113.80');
      for (let i = 0; i < 5; i++) {
        await expect(thief.auth.setPassword({ currentPassword: `guess ${i} at it`, newPassword: 'whatever you like' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      }
      await expect(thief.auth.setPassword({ currentPassword: carolsOwn, newPassword: 'whatever you like' })).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    });
  });

  describe.skipIf(skip)('finding 3: login attempts counted before the hash', () => {
    it('lets at most 5 of 50 concurrent wrong guesses reach the hash', async () => {
      const t = await h.tenant('burst');
      const m = await h.member(t.owner, 'viewer', carolsOwn);
      const attacker = await h.caller(undefined, '203.0.113.90');
      const hashesBefore = h.deps.passwordGate.started;
      const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => attacker.auth.login({ email: m.email, password: `wrong guess ${i}` })));
      const reached = h.deps.passwordGate.started - hashesBefore;
      const codes = results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'OK'));
      console.log(`finding 3 on ${backend}: ${reached} of 50 concurrent wrong guesses reached the hash; ${codes.filter((c) => c === 'UNAUTHORIZED').length} × 401, ${codes.filter((c) => c === 'TOO_MANY_REQUESTS').length} × 429`);
      expect(reached).toBeLessThanOrEqual(5);
      expect(codes.filter((c) => c === 'UNAUTHORIZED').length).toBe(reached);
      expect(codes.filter((c) => c === 'TOO_MANY_REQUESTS').length).toBe(50 - reached);
      expect(codes).not.toContain('OK');
    });

    it("does not let a success at one's own account reset what the address spent guessing another", async () => {
      const t = await h.tenant('reset');
      const victim = await h.member(t.owner, 'viewer', carolsOwn);
      const mine = await h.member(t.owner, 'viewer', 'my own password!');
      const attacker = await h.caller(undefined, '203.0.113.91');
      for (let i = 0; i < 4; i++) await expect(attacker.auth.login({ email: victim.email, password: `guess ${i} at it` })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      await expect(attacker.auth.login({ email: mine.email, password: 'my own password!' })).resolves.toMatchObject({ role: 'viewer' });
      await expect(attacker.auth.login({ email: victim.email, password: 'guess 4 at it' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      await expect(attacker.auth.login({ email: victim.email, password: carolsOwn })).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    });

    it('limits one address guessing many accounts (20 attempts), and answers 429 in words', async () => {
      const attacker = await h.caller(undefined, '203.0.113.92');
      for (let i = 0; i < 20; i++) await expect(attacker.auth.login({ email: `spray-${i}@example.com`, password: 'Summer2026!!' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      await expect(attacker.auth.login({ email: 'spray-20@example.com', password: 'Summer2026!!' })).rejects.toMatchObject({
        code: 'TOO_MANY_REQUESTS',
        message: expect.stringMatching(/^login: too many attempts \(per address\), try again in \d+ s$/),
      });
    });
  });

  describe.skipIf(skip)('finding 7: kernel.upload counts new formats per tenant', () => {
    it('tells the second tenant uploading the same formats what is new to it, not what another tenant uploaded', async () => {
      const a = await h.tenant('fmt-a');
      const b = await h.tenant('fmt-b');
      const tree = tarball('android-5.10.43');
      const first = await a.owner.kernel.upload({ name: 'k', tarball: tree });
      const rows = await h.db.prisma.eventFormat.count();
      const second = await b.owner.kernel.upload({ name: 'k', tarball: tree });
      expect(first.newFormats).toBe(first.profile.formats);
      expect(second.newFormats).toBe(first.newFormats);
      expect(await h.db.prisma.eventFormat.count()).toBe(rows);
      // Within one tenant: a second profile sharing formats counts only its own new ones.
      const other = await b.owner.kernel.upload({ name: 'k2', tarball: tarball('linux-6.18') });
      const shared = await h.db.prisma.kernelProfileFormat.findMany({
        where: { profileId: other.profile.id, formatHash: { in: (await h.db.prisma.kernelProfileFormat.findMany({ where: { profileId: second.profile.id }, select: { formatHash: true } })).map((f) => f.formatHash) } },
        select: { formatHash: true },
        distinct: ['formatHash'],
      });
      const distinct = await h.db.prisma.kernelProfileFormat.findMany({ where: { profileId: other.profile.id }, select: { formatHash: true }, distinct: ['formatHash'] });
      expect(other.newFormats).toBe(distinct.length - shared.length);
    });
  });
});

describe.each(backends)('the password gate on %s', (backend) => {
  // A tiny gate and generous attempt limits, to reach the gate's queue bound.
  const { skip, h } = useHarness(backend, () => ({ passwordGate: new PasswordGate(1, 2), loginLimiter: new LoginLimiter({ perAddress: 1000 }) }));

  it.skipIf(skip)('answers 429 in words beyond the bounded queue, instead of hashing for everyone', async () => {
    const anon = await h.caller(undefined, '203.0.113.99');
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => anon.auth.login({ email: `gate-${i}@example.com`, password: 'any password at all' })));
    const refused = results.filter((r) => r.status === 'rejected' && (r.reason as { code: string }).code === 'TOO_MANY_REQUESTS');
    console.log(`password gate on ${backend}: ${h.deps.passwordGate.started} of 12 concurrent logins hashed (1 at a time, 2 queued), ${refused.length} answered 429`);
    expect(refused.length).toBeGreaterThan(0);
    expect((refused[0] as PromiseRejectedResult).reason).toMatchObject({ message: 'login: too many password checks in progress, try again in a few seconds' });
    expect(h.deps.passwordGate.started + refused.length).toBe(12);
  });
});
