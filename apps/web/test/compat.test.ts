// The compatibility matrix in Chromium: it fills in as the compat job runs, a cell opens (by
// keyboard) its reasons and field diff, kernel profiles and the side-by-side format diff; and a
// 200 × 100 matrix stays usable (virtualized), timed.
import { randomUUID } from 'node:crypto';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifact, formatsTarball } from './support/fixtures.js';
import { artifactsDir, type Browser, browserSkipReason, openBrowser, screenshot, signIn, type Stack, startStack } from './support/stack.js';

describe.skipIf(browserSkipReason)('compatibility (Chromium)', () => {
  let stack: Stack;
  let browser: Browser;
  let owner: Awaited<ReturnType<Stack['tenant']>>;

  beforeAll(async () => {
    stack = await startStack();
    owner = await stack.tenant('compat');
    browser = await openBrowser();
    await signIn(browser.page, stack.webUrl, owner);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('fills in the matrix as the compat jobs run, and opens a cell’s reasons and field diff by keyboard', async () => {
    const { page } = browser;
    await owner.api.kernel.upload.mutate({ name: 'linux-6-18', release: '6.18.44', machine: 'x86_64', tarball: formatsTarball('linux-6.18') });
    await owner.api.kernel.upload.mutate({ name: 'android-3-10-49', release: '3.10.49', machine: 'armv7l', tarball: formatsTarball('android-3.10.49') });
    await owner.api.program.publish.mutate({ name: 'runqlat', version: '1.0.0', artifact: artifact('examples/c/runqlat.o') });
    await owner.api.program.publish.mutate({ name: 'forkcomm', version: '1.0.0', artifact: artifact('examples/c/forkcomm.o') });
    await page.goto(`${stack.webUrl}/compat`);
    const matrix = page.getByTestId('matrix');
    await matrix.waitFor();
    // The runner computes in the background: the page refreshes until no cell is pending. The cells
    // are drawn only after hydration (the grid is virtualized; the server's HTML has none), so wait
    // for all four of them too: "no pending cell" alone holds on the server's empty grid.
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid="matrix"] [role="gridcell"]').length === 4 && !document.querySelector('[data-testid="matrix"] .v-pending'),
      undefined,
      { timeout: 60_000 },
    );
    const forkOnLinux = page.getByRole('gridcell', { name: 'incompatible: forkcomm@1.0.0 on linux-6-18' });
    expect(await forkOnLinux.textContent()).toBe('incompatible');
    expect(await page.getByRole('gridcell', { name: 'relocated: runqlat@1.0.0 on android-3-10-49' }).textContent()).toBe('relocated');
    await screenshot(page, 'compat-matrix');
    // Keyboard: focus the grid's one tab stop, move to forkcomm × linux (row 1, column 2), open it.
    await page.getByRole('gridcell', { name: /forkcomm@1\.0\.0 on android/ }).focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Enter');
    const details = page.getByTestId('cell-details');
    await details.getByText('parent_comm').first().waitFor();
    const text = (await details.textContent()) ?? '';
    expect(text).toContain('forkcomm@1.0.0 on linux-6-18');
    expect(text).toContain('became __data_loc');
    expect(text).toMatch(/__data_loc/);
    // the reason's kind beside its text, and whether the profile is complete
    expect(text).toContain('became-dynamic count_forks: parent_comm');
    expect(text).toContain('complete profile (a missing event is a fact)');
    expect(decodeURIComponent(page.url())).toMatch(/cell=[0-9a-f-]+:[0-9a-f-]+/);
    await screenshot(page, 'compat-cell');
    // The URL is shareable: opening it shows the same cell.
    await page.goto(page.url());
    await page.getByTestId('cell-details').getByText('parent_comm').first().waitFor();
  });

  it('filters the matrix by architecture', async () => {
    const { page } = browser;
    await page.goto(`${stack.webUrl}/compat`);
    await page.getByLabel('Architecture').selectOption('armv7l');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/machine=armv7l/);
    await page.getByRole('gridcell').first().waitFor();
    expect(await page.getByRole('columnheader').count()).toBe(2);
  });

  it('shows the tenant’s char signedness setting, and an admin changes it (the matrix is computed again)', async () => {
    const { page } = browser;
    await page.goto(`${stack.webUrl}/compat`);
    const settings = page.getByTestId('compat-settings');
    expect(await settings.textContent()).toContain('is let through (lenient, the default)');
    await settings.getByRole('button', { name: 'Refuse char signedness changes too' }).click();
    await settings.getByText('is refused too (strict)').waitFor();
    expect((await owner.api.compat.settings.query()).settings).toEqual({ strictCharSign: true, engine: 'probeyard-compat/2+strict-char-sign' });
    await settings.getByRole('button', { name: 'Let char signedness through' }).click();
    await settings.getByText('is let through (lenient, the default)').waitFor();
    expect((await owner.api.compat.settings.query()).settings.strictCharSign).toBe(false);
  });

  it('lists kernel profiles, one profile’s events, and diffs one event side by side', async () => {
    const { page } = browser;
    // a trace.dat holds only the events it recorded: a partial profile, and the pages say so
    await owner.api.kernel.upload.mutate({ name: 'recorded', traceDat: artifact('examples/recordings/sched-small.dat') });
    await page.goto(`${stack.webUrl}/kernels`);
    expect(await page.locator('table.list').textContent()).toContain('linux-6-18');
    const completeness = async (name: string) => (await page.locator('table.list').getByRole('row', { name: new RegExp(`^${name}`) }).getByTestId('completeness').textContent())?.trim();
    expect([await completeness('linux-6-18'), await completeness('recorded')]).toEqual(['complete', 'partial']);
    await page.goto(`${stack.webUrl}/kernels/recorded`);
    expect(await page.getByTestId('completeness').textContent()).toMatch(/^partial: /);
    await page.goto(`${stack.webUrl}/compat`);
    // The matrix is virtualized: its column headers exist once the page has hydrated and measured the grid.
    await page.getByRole('columnheader', { name: /recorded/ }).waitFor();
    await page.getByRole('columnheader', { name: /linux-6-18/ }).waitFor();
    expect(await page.getByRole('columnheader', { name: /recorded/ }).getByTestId('partial-profile').count()).toBe(1);
    expect(await page.getByRole('columnheader', { name: /linux-6-18/ }).getByTestId('partial-profile').count()).toBe(0);
    await page.goto(`${stack.webUrl}/kernels`);
    await screenshot(page, 'kernels');
    await page.getByRole('link', { name: 'linux-6-18' }).click();
    await page.waitForURL(/\/kernels\/linux-6-18/);
    expect(await page.locator('table.list').textContent()).toContain('sched/sched_process_fork');
    await screenshot(page, 'kernel');
    await page.goto(`${stack.webUrl}/kernels/diff?a=android-3-10-49&b=linux-6-18&event=sched/sched_process_fork`);
    const row = page.locator('table.side-by-side').getByRole('row', { name: /parent_comm/ });
    expect(await row.textContent()).toContain('became __data_loc');
    await screenshot(page, 'format-diff');
  });

  it('shows "not found" for another tenant’s cell and profile', async () => {
    const other = await stack.tenant('compat-other');
    await other.api.kernel.upload.mutate({ name: 'theirs', tarball: formatsTarball('linux-6.18') });
    const res = await browser.page.goto(`${stack.webUrl}/kernels/theirs`);
    expect(res?.status()).toBe(404);
    const grid = await other.api.compat.grid.query();
    const profileId = grid.profiles[0]!.id;
    const mine = await owner.api.compat.grid.query();
    await browser.page.goto(`${stack.webUrl}/compat?cell=${mine.versions[0]!.id}:${profileId}`);
    await browser.page.getByTestId('cell-details').getByText(/not found/).waitFor();
  });

  it('keeps a 200 × 100 matrix usable: first cells drawn, keyboard moves, a screenful of DOM', async () => {
    const big = await stack.tenant('bigmatrix');
    const db = stack.registry.db.prisma;
    const tenantId = (await big.api.whoami.query()).tenant.id;
    const program = await db.program.create({ data: { tenantId, name: 'many' }, select: { id: true } });
    const versions = Array.from({ length: 200 }, (_, i) => ({
      id: randomUUID(),
      tenantId,
      programId: program.id,
      version: `1.${i}.0`,
      major: 1,
      minor: i,
      patch: 0,
      artifactKind: 'asm',
      artifact: new Uint8Array([0]),
      digest: `${i}`.padStart(64, '0'),
      size: 1,
      spec: {},
      manifest: {},
      verifierReport: { ok: true, programs: [] },
    }));
    await db.programVersion.createMany({ data: versions });
    const profiles = Array.from({ length: 100 }, (_, i) => ({ id: randomUUID(), tenantId, name: `k-${String(i).padStart(3, '0')}`, release: `6.${i}.0`, machine: i % 2 ? 'aarch64' : 'x86_64', source: 'events_tree' as const, contentHash: `${i}` }));
    await db.kernelProfile.createMany({ data: profiles });
    const verdicts = ['compatible', 'relocated', 'incompatible', 'unknown'] as const;
    const cells = versions.flatMap((v, i) => profiles.map((p, j) => ({ tenantId, versionId: v.id, profileId: p.id, verdict: verdicts[(i + j) % 4]!, reasons: {} })));
    for (let i = 0; i < cells.length; i += 5000) await db.compatResult.createMany({ data: cells.slice(i, i + 5000) });

    const b = await openBrowser();
    try {
      await signIn(b.page, stack.webUrl, big);
      const started = Date.now();
      await b.page.goto(`${stack.webUrl}/compat`);
      await b.page.locator('[data-cell="0:0"]').waitFor();
      const firstPaintMs = Date.now() - started;
      const domCells = await b.page.locator('[role="gridcell"]').count();
      expect(domCells).toBeGreaterThan(20);
      expect(domCells).toBeLessThan(2000);
      await b.page.locator('[data-cell="0:0"]').focus();
      const moveStarted = Date.now();
      for (let i = 0; i < 50; i++) await b.page.keyboard.press('ArrowDown');
      await b.page.keyboard.press('End');
      await b.page.locator('[data-cell="50:99"]:focus').waitFor();
      const fiftyMovesMs = Date.now() - moveStarted;
      await b.page.keyboard.press('Control+End');
      await b.page.locator('[data-cell="199:99"]:focus').waitFor();
      await screenshot(b.page, 'compat-matrix-200x100');
      const report = { rows: 200, columns: 100, firstCellsVisibleMs: firstPaintMs, domCells, fiftyOneKeyMovesMs: fiftyMovesMs };
      mkdirSync(artifactsDir, { recursive: true });
      writeFileSync(join(artifactsDir, 'matrix-perf.json'), `${JSON.stringify(report, null, 2)}\n`);
      console.log(`matrix 200 × 100: first cells visible ${firstPaintMs} ms after navigation, ${domCells} cells in the DOM, 51 key moves ${fiftyMovesMs} ms`);
    } finally {
      await b.close();
    }
  });
});
