// Deployments, agents, tokens, members and the audit log in Chromium: a deployment made through
// its selector preview (each agent's predicted verdict on its own kernel), its targets, stop; agents
// marked stale; a token made (secret shown once) and revoked; what a viewer is not offered; which
// provider implementation each agent runs for a script pinning a provider.
import { parseProvider } from '@probeyard/compat';
import { parseEventFormat } from '@probeyard/formats';
import { compileScript, providerResolver, targetOfFormats } from '@probeyard/script';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifact, formatsTarball } from './support/fixtures.js';
import { type Api, type Browser, browserSkipReason, client, openBrowser, screenshot, signIn, type Stack, startStack } from './support/stack.js';

describe.skipIf(browserSkipReason)('fleet (Chromium)', () => {
  let stack: Stack;
  let browser: Browser;
  let owner: Awaited<ReturnType<Stack['tenant']>>;

  async function enroll(hostname: string, labels: Record<string, string>, tree?: string): Promise<{ id: string; api: Api }> {
    const { enrollmentToken } = await owner.api.agent.createEnrollmentToken.mutate({ labels });
    const r = await client(stack.registry.url).agent.enroll.mutate({ enrollmentToken, hostname });
    const api = client(stack.registry.url, r.credential);
    if (tree) await api.agent.reportProfile.mutate({ release: tree, machine: 'x86_64', tarball: formatsTarball(tree) });
    return { id: r.agent.id, api };
  }

  beforeAll(async () => {
    stack = await startStack();
    owner = await stack.tenant('fleet');
    browser = await openBrowser();
    await signIn(browser.page, stack.webUrl, owner);
    await owner.api.program.publish.mutate({ name: 'forkcomm', version: '1.0.0', artifact: artifact('examples/c/forkcomm.o'), description: 'forks by parent' });
    await enroll('node-new', { env: 'prod' }, 'linux-6.18');
    await enroll('node-old', { env: 'prod' }, 'android-3.10.49');
    await enroll('node-stage', { env: 'staging' });
    // Verdicts for the agents' kernels (the registry's job runner computes them in the background).
    // The tests read them from the page at once: wait until they are all there, and say so if they
    // never come (this gave up silently after 120 polls, and the preview then said "computing…").
    const deadline = Date.now() + 180_000;
    for (;;) {
      const g = await owner.api.compat.grid.query();
      if (g.pendingJobs === 0 && g.verdicts.every((r) => !r.includes('.'))) break;
      if (Date.now() > deadline) throw new Error(`compat verdicts still computing after 180 s: ${g.pendingJobs} job(s) pending`);
      await new Promise((r) => setTimeout(r, 500));
    }
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('previews the selector’s agents with predicted verdicts, deploys, and stops', async () => {
    const { page } = browser;
    await page.goto(`${stack.webUrl}/deployments`);
    expect(await page.locator('.empty').textContent()).toContain('No deployments yet');
    await page.getByRole('link', { name: 'New deployment' }).click();
    await page.waitForURL(/\/deployments\/new/);
    await page.getByLabel('Label selector').fill('env=prod');
    await page.getByRole('button', { name: 'Preview matching agents' }).click();
    const preview = page.getByTestId('deploy-preview');
    await preview.waitFor();
    expect(await preview.textContent()).toContain('2 agents match');
    expect(await preview.getByRole('row', { name: /node-new/ }).textContent()).toContain('incompatible');
    expect(await preview.getByRole('row', { name: /node-old/ }).textContent()).toContain('compatible');
    await screenshot(page, 'deploy-preview');
    await page.getByRole('button', { name: 'Deploy forkcomm@1.0.0 to 2 agents' }).click();
    await page.waitForURL(/\/deployments\/[0-9a-f-]{36}$/);
    expect(await page.getByTestId('deployment-state').textContent()).toBe('running');
    expect(await page.locator('table.list tbody tr').count()).toBe(2);
    await screenshot(page, 'deployment');
    await page.getByRole('button', { name: 'Stop deployment' }).click();
    await page.getByRole('button', { name: 'Yes, stop it' }).click();
    await page.getByTestId('deployment-state').getByText('stopped').waitFor();
    const { deployments } = await owner.api.deployment.list.query();
    expect(deployments[0]?.desiredState).toBe('stopped');
    await page.goto(`${stack.webUrl}/deployments`);
    await screenshot(page, 'deployments');
  });

  it('deploys with .rodata options from the form and shows them; refuses an unknown one in words at the preview', async () => {
    const { page } = browser;
    await owner.api.program.publish.mutate({ name: 'syscount', version: '1.0.0', artifact: artifact('examples/libbpf/syscount.bpf.o') });
    await page.goto(`${stack.webUrl}/deployments/new?name=syscount&version=1.0.0`);
    await page.getByLabel('Program').selectOption('syscount');
    await page.getByLabel('Label selector').fill('env=staging');
    await page.getByLabel('Options (optional)').fill('filter_pdi=1');
    await page.getByRole('button', { name: 'Preview matching agents' }).click();
    // the preview checks the options as the deployment would: no Deploy button for them
    const refused = page.getByRole('alert').filter({ hasText: 'filter_pdi' });
    await refused.waitFor();
    expect(await refused.textContent()).toContain("deployment preview: syscount@1.0.0: option no read-only variable filter_pdi (the object's: ");
    expect(await page.getByRole('button', { name: /^Deploy syscount/ }).count()).toBe(0);
    expect((await owner.api.deployment.list.query()).deployments.filter((d) => d.program.name === 'syscount')).toEqual([]);
    await page.getByLabel('Options (optional)').fill('filter_failed=true, filter_pid=0x2a');
    await page.getByRole('button', { name: 'Preview matching agents' }).click();
    // the verdicts are computed with the options (normalized to decimal)
    await page.getByTestId('deploy-preview').getByText('Verdicts with filter_failed=true filter_pid=42').waitFor();
    expect(await page.getByRole('columnheader', { name: 'Predicted with the options' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Deploy syscount@1.0.0 with filter_failed=true filter_pid=0x2a to 1 agent' }).click();
    await page.waitForURL(/\/deployments\/[0-9a-f-]{36}$/);
    expect(await page.getByTestId('deployment-options').textContent()).toBe('filter_failed=true filter_pid=42');
    await page.getByRole('button', { name: 'Stop deployment' }).click();
    await page.getByRole('button', { name: 'Yes, stop it' }).click();
    await page.getByTestId('deployment-state').getByText('stopped').waitFor();
  });

  it('lists agents with kernel and targets, marks the ones not seen lately, opens one', async () => {
    const { page } = browser;
    // An agent last seen ten minutes ago (the others enrolled just now).
    await stack.registry.db.prisma.agent.updateMany({ where: { hostname: 'node-stage' }, data: { lastSeenAt: new Date(Date.now() - 600_000) } });
    await page.goto(`${stack.webUrl}/agents`);
    const rows = page.locator('table.list tbody tr');
    expect(await rows.count()).toBe(3);
    expect(await page.locator('.stale').count()).toBe(1);
    expect(await page.getByRole('row', { name: /node-stage/ }).locator('.stale').textContent()).toContain('stale: 10 min ago');
    await screenshot(page, 'agents');
    await page.getByRole('link', { name: 'node-new' }).click();
    await page.waitForURL(/\/agents\//);
    expect(await page.locator('table.list').textContent()).toContain('forkcomm@1.0.0');
    await screenshot(page, 'agent');
    await page.goto(`${stack.webUrl}/agents?selector=env%3Dstaging`);
    expect(await page.locator('table.list tbody tr').count()).toBe(1);
  });

  it('makes an API token (secret shown once) and revokes it', async () => {
    const { page } = browser;
    await page.goto(`${stack.webUrl}/tokens`);
    await page.getByLabel('Name').fill('ci publisher');
    await page.getByLabel('Role').selectOption('publisher');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.getByTestId('new-token').textContent()) ?? '';
    expect(secret).toMatch(/^pyt_/);
    expect((await client(stack.registry.url, secret).whoami.query()).role).toBe('publisher');
    await page.getByRole('button', { name: 'Revoke token ci publisher' }).click();
    await page.getByRole('row', { name: /ci publisher/ }).waitFor({ state: 'detached' });
    await expect(client(stack.registry.url, secret).whoami.query()).rejects.toThrow(/revoked/);
    await screenshot(page, 'tokens');
  });

  it('shows members and the audit log to an owner', async () => {
    const { page } = browser;
    await page.goto(`${stack.webUrl}/members`);
    expect(await page.locator('table.list').textContent()).toContain('owner@fleet.example');
    await screenshot(page, 'members');
    await page.goto(`${stack.webUrl}/audit`);
    const text = (await page.locator('table.list').textContent()) ?? '';
    expect(text).toContain('deployment.create');
    expect(text).toContain('deployment.stop');
    await screenshot(page, 'audit');
  });

  it('offers a viewer no deploy or stop controls, and no members or audit pages', async () => {
    const { secret } = await owner.api.token.create.mutate({ name: 'viewer', role: 'viewer' });
    const v = await openBrowser();
    try {
      await v.page.goto(`${stack.webUrl}/sign-in`);
      await v.page.getByLabel('API token', { exact: true }).fill(secret);
      await v.page.getByRole('button', { name: 'Sign in with token' }).click();
      await v.page.waitForURL(/\/programs/);
      await v.page.goto(`${stack.webUrl}/deployments`);
      expect(await v.page.getByRole('link', { name: 'New deployment' }).count()).toBe(0);
      const { deployments } = await owner.api.deployment.list.query();
      await v.page.goto(`${stack.webUrl}/deployments/${deployments[0]!.id}`);
      expect(await v.page.getByRole('button', { name: /Stop/ }).count()).toBe(0);
      expect(await v.page.getByRole('link', { name: 'Members' }).count()).toBe(0);
      await v.page.goto(`${stack.webUrl}/deployments/new`);
      expect(new URL(v.page.url()).pathname).toBe('/deployments');
    } finally {
      await v.close();
    }
  });

  it('shows "not found" for another tenant’s deployment and agent', async () => {
    const other = await stack.tenant('fleet-other');
    const { enrollmentToken } = await other.api.agent.createEnrollmentToken.mutate({ labels: { env: 'prod' } });
    const theirs = await client(stack.registry.url).agent.enroll.mutate({ enrollmentToken, hostname: 'their-node' });
    await other.api.program.publish.mutate({ name: 'forkcomm', version: '1.0.0', artifact: artifact('examples/c/forkcomm.o') });
    const d = await other.api.deployment.create.mutate({ name: 'forkcomm', version: '1.0.0', selector: 'env=prod' });
    expect((await browser.page.goto(`${stack.webUrl}/agents/${theirs.agent.id}`))?.status()).toBe(404);
    expect((await browser.page.goto(`${stack.webUrl}/deployments/${d.deployment.id}`))?.status()).toBe(404);
  });

  it('shows which provider implementation each agent runs for a script pinning a provider (issue 19)', async () => {
    const io = {
      provider: 'io',
      version: '1.1.0',
      probes: {
        done: {
          args: { error: 'int' },
          implementations: [
            { for: 'errors (before 4.20)', tracepoint: 'block/block_rq_complete', when: [{ field: 'errors', kind: 'int' }], args: { error: 'args.errors' } },
            { for: 'error', tracepoint: 'block/block_rq_complete', when: [{ field: 'error', kind: 'int' }], args: { error: 'args.error' } },
          ],
        },
      },
    };
    await owner.api.provider.publish.mutate({ text: JSON.stringify(io) });
    const format = `name: block_rq_complete\nID: 392\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:int error;\toffset:8;\tsize:4;\tsigned:1;\n\nprint fmt: "%d", REC->error\n`;
    const built = await compileScript('io:::done { @[args.error] = count(); }', { target: targetOfFormats([parseEventFormat(format, { system: 'block' })]), providers: providerResolver([parseProvider(JSON.stringify(io))]) });
    if (!built.ok) throw new Error(built.diagnostics.map((x) => x.message).join('; '));
    await owner.api.program.publish.mutate({ name: 'ioerrors', version: '1.0.0', artifact: Buffer.from(built.artifact).toString('base64') });
    const node = await enroll('node-io', { role: 'io' });
    await enroll('node-io-plain', { role: 'io' });
    const d = await owner.api.deployment.create.mutate({ name: 'ioerrors', version: '1.0.0', selector: 'role=io' });
    const targets = (await owner.api.deployment.get.query({ id: d.deployment.id })).targets;
    const via = 'io:::done via io@1.1.0, implementation for error';
    await node.api.agent.reportStatus.mutate({ targets: [{ targetId: targets.find((t) => t.agentId === node.id)!.id, status: 'running', message: 'relocated', detail: { code: 'relocated', verdict: 'relocated', via: [via] } }] });
    const { page } = browser;
    await page.goto(`${stack.webUrl}/deployments/${d.deployment.id}`);
    expect(await page.getByRole('columnheader', { name: 'Provider implementation' }).count()).toBe(1);
    expect(await page.getByRole('row', { name: /node-io\b(?!-)/ }).getByRole('cell').nth(3).textContent()).toBe(via);
    expect(await page.getByRole('row', { name: /node-io-plain/ }).getByRole('cell').nth(3).textContent()).toBe('—');
    await screenshot(page, 'deployment-providers');
    // a deployment of a program without providers has no such column
    const plainDeployment = await owner.api.deployment.create.mutate({ name: 'forkcomm', version: '1.0.0', selector: 'role=io' });
    await page.goto(`${stack.webUrl}/deployments/${plainDeployment.deployment.id}`);
    expect(await page.locator('table.list tbody tr').count()).toBe(2);
    expect(await page.getByRole('columnheader', { name: 'Provider implementation' }).count()).toBe(0);

    // the provider's page lists the tenant's versions pinning it, linked to their pages
    await page.goto(`${stack.webUrl}/providers/io`);
    const pinned = page.getByTestId('pinned-by');
    expect(await pinned.locator('tbody tr').allTextContents()).toEqual([expect.stringMatching(/^ioerrors1\.0\.0io@1/)]);
    expect(await pinned.getByRole('link', { name: 'ioerrors' }).getAttribute('href')).toBe('/programs/ioerrors');
    expect(await pinned.getByRole('link', { name: '1.0.0' }).getAttribute('href')).toBe('/programs/ioerrors/1.0.0');
    await screenshot(page, 'provider-pinned-by');
  });
});
