// Sign-in, the session cookie, the Content Security Policy and cross-site refusal, in real Chromium.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, browserSkipReason, openBrowser, screenshot, signIn, type Stack, startStack } from './support/stack.js';

describe.skipIf(browserSkipReason)('session (Chromium)', () => {
  let stack: Stack;
  let browser: Browser;
  let owner: Awaited<ReturnType<Stack['tenant']>>;

  beforeAll(async () => {
    stack = await startStack();
    owner = await stack.tenant('acme');
    browser = await openBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('sends a signed-out visitor to sign in, and back to the page after', async () => {
    const { page } = browser;
    const res = await page.goto(`${stack.webUrl}/programs?tag=net`);
    expect(page.url()).toContain('/sign-in?next=%2Fprograms%3Ftag%3Dnet');
    const csp = res?.headers()['content-security-policy'] ?? '';
    expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
    expect(csp).toContain("frame-ancestors 'none'");
    await screenshot(page, 'sign-in');
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password', { exact: true }).fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.locator('.alert-error').waitFor();
    expect(await page.locator('.alert-error').textContent()).toContain('do not match');
    await screenshot(page, 'sign-in-error');
    await page.getByLabel('Password', { exact: true }).fill(owner.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(/\/programs\?tag=net$/);
  });

  it('answers /favicon.ico with the app icon (a browser leaving a page before its <head> asks for it)', async () => {
    const res = await fetch(`${stack.webUrl}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.url).toMatch(/\/icon\.svg$/);
    expect(res.headers.get('content-type')).toContain('image/svg+xml');
  });

  it('shows tenant and role, keeps the credential in an httpOnly cookie browser JavaScript cannot read', async () => {
    const { page, context } = browser;
    await page.goto(`${stack.webUrl}/programs`);
    const header = page.locator('header');
    expect(await header.textContent()).toContain('acme');
    expect(await header.locator('.role').textContent()).toBe('owner');
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'probeyard_session');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Lax');
    expect(session?.value.startsWith('pys_')).toBe(true);
    const visible = await page.evaluate(() => document.cookie);
    expect(visible).not.toContain('pys_');
    const html = await page.content();
    expect(html).not.toContain(session!.value);
    await screenshot(page, 'programs-empty');
  });

  it('refuses a cross-site POST, and answers the same request from the site itself', async () => {
    const cookie = (await browser.context.cookies()).find((c) => c.name === 'probeyard_session')!;
    const body = JSON.stringify({ name: 'x', role: 'viewer' });
    const crossSite = await fetch(`${stack.webUrl}/api/trpc/token.create`, {
      method: 'POST',
      headers: { origin: 'https://evil.example', cookie: `probeyard_session=${cookie.value}`, 'content-type': 'application/json' },
      body,
    });
    expect(crossSite.status).toBe(403);
    expect(await crossSite.text()).toContain('cross-site request refused');
    const fetchMeta = await fetch(`${stack.webUrl}/api/trpc/token.create`, {
      method: 'POST',
      headers: { 'sec-fetch-site': 'cross-site', cookie: `probeyard_session=${cookie.value}`, 'content-type': 'application/json' },
      body,
    });
    expect(fetchMeta.status).toBe(403);
    const sameSite = await fetch(`${stack.webUrl}/api/trpc/token.list`, { headers: { cookie: `probeyard_session=${cookie.value}` } });
    expect(sameSite.status).toBe(200);
    // Sign-in and the admin's procedures are not reachable through the web app.
    const login = await fetch(`${stack.webUrl}/api/trpc/auth.login`, { method: 'POST', headers: { origin: stack.webUrl, 'content-type': 'application/json' }, body: '{}' });
    expect(login.status).toBe(404);
  });

  it('signs out: the session is revoked at the registry and the cookie is gone', async () => {
    const { page, context } = browser;
    const token = (await context.cookies()).find((c) => c.name === 'probeyard_session')!.value;
    await page.goto(`${stack.webUrl}/programs`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);
    expect((await context.cookies()).find((c) => c.name === 'probeyard_session')).toBeUndefined();
    const { client } = await import('./support/stack.js');
    await expect(client(stack.registry.url, token).whoami.query()).rejects.toThrow(/revoked/);
  });

  it('signs in with an API token', async () => {
    const { page } = browser;
    await page.goto(`${stack.webUrl}/sign-in`);
    await page.getByLabel('API token', { exact: true }).fill(owner.token);
    await page.getByRole('button', { name: 'Sign in with token' }).click();
    await page.waitForURL(/\/programs/);
    expect(await page.locator('header .tenant').textContent()).toBe('acme');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);
    // An API token is only forgotten by the web app, not revoked.
    expect((await owner.api.whoami.query()).role).toBe('owner');
  });

  it('signs in through the helper', async () => {
    await signIn(browser.page, stack.webUrl, owner);
    expect(browser.page.url()).toContain('/programs');
  });
});
