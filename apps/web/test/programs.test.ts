// Programs and versions in Chromium: publish by upload (a refused program shows the verifier's
// diagnostics in place), the version page's manifest and annotated disassembly, yank, and what a
// viewer is not offered.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, browserSkipReason, openBrowser, screenshot, signIn, type Stack, startStack, webDir } from './support/stack.js';

const examples = join(webDir, '..', '..', 'examples');

describe.skipIf(browserSkipReason)('programs (Chromium)', () => {
  let stack: Stack;
  let browser: Browser;
  let owner: Awaited<ReturnType<Stack['tenant']>>;

  beforeAll(async () => {
    stack = await startStack();
    owner = await stack.tenant('progs');
    browser = await openBrowser();
    await signIn(browser.page, stack.webUrl, owner);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('shows a refused program’s diagnostics in place and stores nothing', async () => {
    const { page } = browser;
    await page.goto(`${stack.webUrl}/programs`);
    await page.getByLabel('Program name').fill('broken');
    await page.getByLabel('Version (semver)').fill('0.1.0');
    await page.getByLabel(/^Artifact/).setInputFiles(join(webDir, 'test', 'fixtures', 'rejected.s'));
    await page.getByRole('button', { name: 'Publish' }).click();
    const error = page.getByTestId('publish-error');
    await error.waitFor();
    const text = (await error.textContent()) ?? '';
    expect(text).toContain('verifier rejected program bad');
    expect(text).toMatch(/insn 0 .*r0 = \*\(u64 \*\)\(r2 \+ 0\)/);
    await screenshot(page, 'publish-refused');
    expect((await owner.api.program.list.query()).programs).toHaveLength(0);
  });

  it('publishes an assembly program by upload and shows its annotated disassembly', async () => {
    const { page } = browser;
    await page.goto(`${stack.webUrl}/programs`);
    await page.getByLabel('Program name').fill('sched-count');
    await page.getByLabel('Version (semver)').fill('1.0.0');
    await page.getByLabel(/^Artifact/).setInputFiles(join(examples, 'sched-switch-count.s'));
    await page.getByLabel('Description').fill('context switches per next_pid');
    await page.getByLabel(/^Tags/).fill('sched, demo');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.waitForURL(/\/programs\/sched-count\/1\.0\.0\?published=1/);
    const listing = page.getByLabel('Annotated disassembly of count_switch');
    await listing.waitFor();
    const text = (await listing.textContent()) ?? '';
    expect(text).toContain('reads sched_switch.next_pid');
    expect(text).toContain('assembly symbol');
    expect(text).toContain('map counts (hash)');
    expect(text).toContain('bpf_map_lookup_elem');
    expect(await page.locator('h1').textContent()).toContain('module-like, no ABI');
    await screenshot(page, 'version');
  });

  it('lists programs with search, tags and the latest version', async () => {
    const { page } = browser;
    await page.goto(`${stack.webUrl}/programs?q=switches`);
    expect(await page.locator('table.list tbody tr').count()).toBe(1);
    await page.goto(`${stack.webUrl}/programs?q=nothing-like-this`);
    expect(await page.locator('.empty').textContent()).toContain('No program matches');
    await page.goto(`${stack.webUrl}/programs`);
    await page.getByRole('link', { name: 'demo' }).click();
    await page.waitForURL(/tag=demo/);
    expect(await page.locator('table.list').textContent()).toContain('1.0.0');
    await screenshot(page, 'programs');
  });

  it('yanks a version with a reason', async () => {
    const { page } = browser;
    await page.goto(`${stack.webUrl}/programs/sched-count`);
    await page.getByRole('button', { name: 'Yank 1.0.0' }).click();
    await page.getByLabel('Why yank 1.0.0?').fill('superseded by 1.0.1');
    await page.getByRole('button', { name: 'Yank', exact: true }).click();
    await page.getByText('superseded by 1.0.1').waitFor();
    expect(await page.locator('.badge-yanked').count()).toBe(1);
    await screenshot(page, 'program');
    const { versions } = await owner.api.version.list.query({ name: 'sched-count' });
    expect(versions[0]?.yanked?.reason).toBe('superseded by 1.0.1');
  });

  it('offers a viewer no publish or yank controls', async () => {
    const { secret: token } = await owner.api.token.create.mutate({ name: 'viewer view', role: 'viewer' });
    const viewer = await openBrowser();
    try {
      const { page } = viewer;
      await page.goto(`${stack.webUrl}/sign-in`);
      await page.getByLabel('API token', { exact: true }).fill(token);
      await page.getByRole('button', { name: 'Sign in with token' }).click();
      await page.waitForURL(/\/programs/);
      expect(await page.locator('header .role').textContent()).toBe('viewer');
      expect(await page.getByRole('button', { name: 'Publish' }).count()).toBe(0);
      await page.goto(`${stack.webUrl}/programs/sched-count`);
      expect(await page.getByRole('button', { name: /Yank/ }).count()).toBe(0);
      expect(await page.getByRole('heading', { name: /Publish/ }).count()).toBe(0);
    } finally {
      await viewer.close();
    }
  });

  it('shows "not found" for a program of another tenant', async () => {
    const other = await stack.tenant('other');
    await other.api.program.publish.mutate({ name: 'secret-prog', version: '1.0.0', artifact: Buffer.from((await import('node:fs')).readFileSync(join(examples, 'sched-switch-count.s'))).toString('base64') });
    const res = await browser.page.goto(`${stack.webUrl}/programs/secret-prog`);
    expect(res?.status()).toBe(404);
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text, without the page's inline scripts
    expect(await browser.page.locator('body').innerText()).toMatch(/not found/i);
    const res2 = await browser.page.goto(`${stack.webUrl}/programs/secret-prog/1.0.0`);
    expect(res2?.status()).toBe(404);
  });
});
