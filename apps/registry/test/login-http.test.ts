// Issue 13, finding 3 over real HTTP on PGlite and PostgreSQL: a batch of logins is refused (one
// request, one call), and the client address comes from X-Forwarded-For only through a trusted
// proxy (the web app's server), so one attacker behind the web app cannot lock everyone out and
// nobody else can choose their address.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, type HttpServer } from '../src/server/http.js';
import { TrustedProxies } from '../src/server/client-address.js';
import { startRegistry } from '../src/server/registry.js';
import { backends, useHarness } from './harness.js';

const password = 'the right password';

async function login(url: string, email: string, pw: string, forwardedFor?: string): Promise<{ status: number; code?: string; message?: string }> {
  const res = await fetch(`${url}/trpc/auth.login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
    body: JSON.stringify({ email, password: pw }),
  });
  const body = (await res.json()) as { error?: { message: string; data: { code: string } } };
  return { status: res.status, code: body.error?.data.code, message: body.error?.message };
}

describe.each(backends)('logins over HTTP on %s', (backend) => {
  const { skip, h } = useHarness(backend);
  let direct: HttpServer;
  let behindWeb: HttpServer;
  beforeAll(async () => {
    if (skip) return;
    direct = createHttpServer({ deps: h.deps, logger: () => {} });
    behindWeb = createHttpServer({ deps: h.deps, logger: () => {}, trustedProxies: new TrustedProxies(['127.0.0.1', '::1']) });
    await direct.listen(0, '127.0.0.1');
    await behindWeb.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await direct?.close(0);
    await behindWeb?.close(0);
  });

  it.skipIf(skip)('refuses a batch of logins before any password is hashed', async () => {
    const t = await h.tenant('batch');
    const m = await h.member(t.owner, 'viewer', password);
    const before = h.deps.passwordGate.started;
    const calls = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [String(i), { email: m.email, password: `guess ${i}` }]));
    const res = await fetch(`${direct.url()}/trpc/${Array.from({ length: 100 }, () => 'auth.login').join(',')}?batch=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(calls),
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain('Batching is not enabled on the server');
    expect(h.deps.passwordGate.started).toBe(before);
    // A batch of one is refused too: one request is one call, whatever the client.
    const one = await fetch(`${direct.url()}/trpc/auth.login?batch=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ 0: { email: m.email, password } }) });
    expect(one.status).toBe(400);
  });

  it.skipIf(skip)('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const t = await h.tenant('spoof');
    const m = await h.member(t.owner, 'viewer', password);
    for (let i = 0; i < 5; i++) {
      // A new made-up address each time: all are 127.0.0.1, the socket's.
      expect(await login(direct.url(), m.email, `guess ${i} here`, `198.51.100.${i}`)).toMatchObject({ status: 401 });
    }
    expect(await login(direct.url(), m.email, password, '198.51.100.200')).toMatchObject({ status: 429, code: 'TOO_MANY_REQUESTS' });
  });

  it.skipIf(skip)("behind the web app's server, one browser's guesses lock out that browser only", async () => {
    const t = await h.tenant('web');
    const m = await h.member(t.owner, 'viewer', password);
    const attacker = '203.0.113.66';
    for (let i = 0; i < 5; i++) expect(await login(behindWeb.url(), m.email, `guess ${i} here`, attacker)).toMatchObject({ status: 401 });
    expect(await login(behindWeb.url(), m.email, password, attacker)).toMatchObject({ status: 429, message: expect.stringMatching(/^login: too many attempts/) });
    // The owner of the account signs in through the same web server from their own browser.
    expect(await login(behindWeb.url(), m.email, password, '192.0.2.77')).toMatchObject({ status: 200 });
    // What a browser writes itself on the left of the header is not believed: the web server appends the real address.
    expect(await login(behindWeb.url(), m.email, password, `192.0.2.77, ${attacker}`)).toMatchObject({ status: 429 });
    // The session's audit row has the browser's address.
    const rows = await h.db.prisma.auditEntry.findMany({ where: { tenantId: t.id, action: 'auth.login' }, select: { detail: true } });
    expect(rows.map((r) => r.detail)).toEqual([{ ip: '192.0.2.77' }]);
  });
});

describe('trusted proxy option', () => {
  it('refuses a start with an entry that is not an address, before opening anything', async () => {
    await expect(startRegistry({ dataDir: '/nonexistent/never-made', trustedProxies: ['web.internal'] })).rejects.toThrow('trusted proxy: not an address or subnet: web.internal');
  });
});
