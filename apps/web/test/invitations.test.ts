// Invitations in Chromium (issue 13, finding 1): an owner invites from the members page and sees
// the secret once; the invited person, not signed in, redeems it at /invitations/accept with a
// password of their own; an existing account of another tenant cannot be joined with the secret
// alone, only with its own password or signed in as it; a pending invitation is revoked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, browserSkipReason, client, openBrowser, screenshot, signIn, type Stack, startStack } from './support/stack.js';

describe.skipIf(browserSkipReason)('invitations (Chromium)', () => {
  let stack: Stack;
  let browser: Browser;
  let owner: Awaited<ReturnType<Stack['tenant']>>;

  beforeAll(async () => {
    stack = await startStack();
    owner = await stack.tenant('invco');
    browser = await openBrowser();
    await signIn(browser.page, stack.webUrl, owner);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  async function invite(email: string, role: string): Promise<string> {
    const { page } = browser;
    await page.goto(`${stack.webUrl}/members`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Role', { exact: true }).selectOption(role);
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    const secret = (await page.getByTestId('invitation-secret').textContent()) ?? '';
    expect(secret).toMatch(/^pyv_[A-Za-z0-9_-]{43}$/);
    return secret;
  }

  async function accept(page: Browser['page'], secret: string, password: string): Promise<void> {
    await page.goto(`${stack.webUrl}/invitations/accept`);
    await page.getByLabel('Invitation secret').first().fill(secret);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.locator('.alert').first().waitFor();
  }

  it('invites from the members page, shows the secret once, and the invited person chooses their own password signed out', async () => {
    const secret = await invite('newcomer@invco.example', 'publisher');
    await screenshot(browser.page, 'members-invite');
    await browser.page.reload();
    expect(await browser.page.getByTestId('invitation-secret').count()).toBe(0);
    expect(await browser.page.getByTestId('invitations').textContent()).toContain('newcomer@invco.example');
    expect(await browser.page.content()).not.toContain(secret);

    const guest = await openBrowser();
    try {
      await accept(guest.page, secret, 'short');
      expect(await guest.page.locator('.alert-error').textContent()).toContain('at least 12 characters');
      await accept(guest.page, secret, 'my very own password');
      expect(await guest.page.getByTestId('joined').textContent()).toBe('newcomer@invco.example joined invco as publisher, with the new account and the password you chose.');
      await screenshot(guest.page, 'invitation-accepted');
      await signIn(guest.page, stack.webUrl, { email: 'newcomer@invco.example', password: 'my very own password' });
      expect(await guest.page.locator('header .role').textContent()).toBe('publisher');
      // Once only.
      await accept(guest.page, secret, 'my very own password');
      expect(await guest.page.locator('.alert-error').textContent()).toContain('does not work');
    } finally {
      await guest.close();
    }
    await browser.page.goto(`${stack.webUrl}/members`);
    expect(await browser.page.locator('table.list').first().textContent()).toContain('newcomer@invco.example');
  });

  it("lets an existing account join only with its own password or signed in as it, never with the secret alone", async () => {
    const other = await stack.tenant('invco-other', 'the other owner password');
    const first = await invite(other.email, 'viewer');
    const second = await invite(other.email, 'viewer');
    const guest = await openBrowser();
    try {
      await accept(guest.page, first, 'a password I just made up');
      expect(await guest.page.locator('.alert-error').textContent()).toContain('An account already exists');
      await expect(client(stack.registry.url).auth.login.mutate({ email: other.email, password: 'a password I just made up' })).rejects.toThrow(/invalid email/);
      await accept(guest.page, first, 'the other owner password');
      expect(await guest.page.getByTestId('joined').textContent()).toBe(`${other.email} joined invco as viewer.`);
      // Signed in as that account: accept without typing the password (a second invitation to show it; the first is used).
      await owner.api.member.remove.mutate({ userId: (await owner.api.member.list.query()).members.find((m) => m.email === other.email)?.userId ?? '' });
      await signIn(guest.page, stack.webUrl, { email: other.email, password: 'the other owner password' });
      await guest.page.goto(`${stack.webUrl}/invitations/accept`);
      await guest.page.locator('#session-secret').fill(second);
      await guest.page.getByRole('button', { name: `Accept as ${other.email}` }).click();
      await guest.page.getByTestId('joined').waitFor();
      expect(await guest.page.getByTestId('joined').textContent()).toBe(`${other.email} joined invco as viewer.`);
    } finally {
      await guest.close();
    }
  });

  it('revokes a pending invitation from the members page', async () => {
    const secret = await invite('never@invco.example', 'viewer');
    const { page } = browser;
    await page.goto(`${stack.webUrl}/members`);
    await page.getByRole('button', { name: 'Revoke the invitation of never@invco.example' }).click();
    await page.getByRole('row', { name: /never@invco\.example/ }).waitFor({ state: 'detached' });
    await expect(client(stack.registry.url).auth.acceptInvitation.mutate({ secret, password: 'a long enough password' })).rejects.toThrow(/no such invitation/);
  });
});
