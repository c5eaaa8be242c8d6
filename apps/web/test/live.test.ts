// The live editor (issue 18), in real Chromium against a real registry and a real agent replaying
// a recording: a script with an error shows it at its line; fixed, the verdict on the agent's
// kernel appears; Run → counts appear and grow; the session ends by itself at its duration; the
// duration's bounds follow the tenant's live limits (an admin changes them there); a viewer is
// offered no Run button nor the limits form. axe-core on the page, and /live's JavaScript measured.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactsDir, type Browser, browserSkipReason, client, openBrowser, screenshot, signIn, type Stack, startStack, webDir } from './support/stack';

const repoRoot = join(webDir, '..', '..');
const agentBin = join(repoRoot, 'apps', 'agent', 'bin', 'probeyard-agent.js');
const recording = join(repoRoot, 'examples', 'recordings', 'sched-small.dat');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

async function axeSerious(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const r = await page.evaluate(async () => {
    const w = window as unknown as { axe: { run: (ctx: Document, o: unknown) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[] }> } };
    return w.axe.run(document, { resultTypes: ['violations'] });
  });
  return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

function runAgent(args: string[], log: string[]): ChildProcess {
  const child = spawn(process.execPath, [agentBin, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => log.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => log.push(d.toString()));
  return child;
}

async function waitUntil<T>(what: string, f: () => Promise<T | undefined | false>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Replaces the editor's whole text as a user would (select all, type). */
async function setSource(page: Page, text: string) {
  const editor = page.getByTestId('live-source');
  await editor.click();
  await editor.fill(text);
}

/** The sum of the counts the map panel lists as text (its "every listed key" table). */
async function countsShown(page: Page, map: string): Promise<number> {
  const cells = await page.getByTestId(`map-${map}`).locator('td.num').allTextContents();
  return cells.reduce((s, c) => s + Number(c.replace(/[^\d]/g, '') || 0), 0);
}

describe.skipIf(browserSkipReason)('the live editor (Chromium, a real agent replaying a recording)', () => {
  let stack: Stack;
  let browser: Browser;
  let owner: Awaited<ReturnType<Stack['tenant']>>;
  let agent: ChildProcess | undefined;
  let state: string;
  const agentLog: string[] = [];

  beforeAll(async () => {
    stack = await startStack();
    owner = await stack.tenant('live');
    const { enrollmentToken } = await owner.api.agent.createEnrollmentToken.mutate({ labels: { env: 'live' } });
    state = mkdtempSync(join(tmpdir(), 'probeyard-live-agent-'));
    const enrol = runAgent(['enroll', '--registry', stack.registry.url, '--token', enrollmentToken, '--state', state, '--hostname', 'replay-1', '--feed', recording], agentLog);
    const code = await new Promise<number | null>((r) => enrol.once('exit', r));
    expect(code, agentLog.join('')).toBe(0);
    agent = runAgent(['run', '--state', state, '--feed', recording, '--loop', '--pace', 'recorded', '--snapshot-interval', '1', '--poll-interval', '1'], agentLog);
    await waitUntil('the agent’s kernel profile', async () => (await owner.api.agent.list.query()).agents[0]?.kernel);
    browser = await openBrowser();
    await signIn(browser.page, stack.webUrl, owner);
  });

  afterAll(async () => {
    await browser?.close();
    if (agent && agent.exitCode === null) {
      const exited = new Promise((r) => agent!.once('exit', r));
      agent.kill('SIGTERM');
      await exited;
    }
    await stack?.close();
    if (state) rmSync(state, { recursive: true, force: true });
  });

  it('shows an error at its line, then the verdict on the agent; runs, counts grow, and the session ends by itself', async () => {
    const { page } = browser;
    await page.goto(`${stack.webUrl}/live`);
    await page.getByRole('link', { name: 'Live' }).waitFor();
    expect(await page.getByRole('link', { name: 'Live' }).getAttribute('aria-current')).toBe('page');

    // an error on line 2: the field is misspelt
    await setSource(page, '// count switches by the next task\ntracepoint:sched:sched_switch { @switches[args.next_com] = count(); }\n');
    // (the check runs 300 ms after the last keystroke: wait for the one of this text)
    await page.getByTestId('live-diagnostics').getByText("line 2, column 48: args.next_com: sched/sched_switch has no field 'next_com'").waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('live-diagnostics').locator('li').count()).toBe(1);
    // drawn in the text at that line: the underlined range sits in the editor's second line
    const underlined = page.locator('.cm-line').nth(1).locator('.cm-lintRange-error');
    await underlined.waitFor();
    expect(await underlined.textContent()).toBe('next_com');
    expect(await page.locator('.cm-gutter-lint .cm-lint-marker-error').count()).toBe(1);
    await screenshot(page, 'live-error');

    // fixed: the verdict on replay-1's kernel, and the fields read
    await setSource(page, '// count switches by the next task\ntracepoint:sched:sched_switch { @switches[args.next_comm] = count(); }\n');
    const verdict = page.getByTestId('live-verdict');
    await verdict.waitFor({ timeout: 30_000 });
    expect(await verdict.textContent()).toMatch(/On replay-1 .*partial profile\): compatible/);
    expect(await page.getByTestId('live-fields').textContent()).toBe('sched/sched_switch.next_comm');
    // the underline goes in an effect after the render that shows the verdict: wait for it to go
    await expect.poll(() => page.locator('.cm-lintRange-error').count(), { timeout: 10_000 }).toBe(0);

    // run for the default 10 s: counts appear, then grow
    expect(await page.getByLabel('Duration (seconds)').inputValue()).toBe('10');
    const runAt = Date.now();
    await page.getByTestId('live-run').click();
    const panel = page.getByTestId('map-switches');
    await panel.waitFor({ timeout: 15_000 });
    const firstSeenMs = Date.now() - runAt;
    await waitUntil('counts on screen', async () => (await countsShown(page, 'switches')) > 0, 10_000);
    const first = await countsShown(page, 'switches');
    const shown = (await page.getByTestId('live-timing').textContent()) ?? '';
    console.log(`live: ${shown}`);
    const grown = await waitUntil('the counts to grow', async () => {
      const n = await countsShown(page, 'switches');
      return n > first ? n : false;
    }, 10_000);
    expect(grown).toBeGreaterThan(first);
    await screenshot(page, 'live-running');
    // the Stop button is offered while it runs; the session ends by itself at its duration
    await page.getByTestId('live-state').getByText('ended').waitFor({ timeout: 40_000 });
    const endedAfterMs = Date.now() - runAt;
    await page.getByTestId('live-run').waitFor();
    const sessions = await owner.api.live.list.query();
    const s = await owner.api.live.get.query({ sessionId: sessions.sessions[0]!.id });
    expect(s.session.state).toBe('ended');
    expect(s.session.durationSeconds).toBe(10);
    await screenshot(page, 'live-ended');
    const ms = (re: RegExp) => Number(re.exec(shown)?.[1] ?? Number.NaN);
    const timing = { startedMs: ms(/started (\d+) ms/), runningOnNodeMs: ms(/running on the node by (\d+) ms/), firstResultMs: ms(/first result (\d+) ms/), firstMapPanelMs: firstSeenMs, endedAfterMs };
    // again, warm (the registry's verifier workers and the agent's compiler loaded), with printf: its lines in the tail; then Stop
    await setSource(page, 'tracepoint:sched:sched_switch { @switches[args.next_comm] = count(); }\ninterval:s:1 { printf("tick %d\\n", 7); }\n');
    await page.getByTestId('live-verdict').waitFor({ timeout: 30_000 });
    await page.getByTestId('live-run').click();
    await page.getByTestId('live-timing').getByText(/first result \d+ ms/).waitFor({ timeout: 20_000 });
    const warm = (await page.getByTestId('live-timing').textContent()) ?? '';
    await page.getByTestId('live-lines').getByText(/replay-1: tick 7/).first().waitFor({ timeout: 15_000 });
    await page.getByTestId('live-stop').click();
    await page.getByTestId('live-state').getByText('stopped').waitFor({ timeout: 20_000 });
    const warmTiming = { startedMs: Number(/started (\d+) ms/.exec(warm)?.[1]), firstResultMs: Number(/first result (\d+) ms/.exec(warm)?.[1]) };
    const stopped = await owner.api.live.list.query();
    expect(stopped.sessions[0]?.state).toBe('stopped');
    Object.assign(timing, { warm: warmTiming });
    console.log(`live: ${JSON.stringify(timing)}`);
    mkdirSync(artifactsDir, { recursive: true });
    writeFileSync(join(artifactsDir, 'live.json'), `${JSON.stringify(timing, null, 2)}\n`);
    expect(endedAfterMs).toBeGreaterThanOrEqual(10_000);
  });

  it('passes axe-core, with /live’s JavaScript measured', async () => {
    const { page } = browser;
    const errorsBefore = browser.errors.length;
    await page.goto(`${stack.webUrl}/live`);
    await page.getByTestId('live-verdict').waitFor({ timeout: 30_000 });
    expect(await axeSerious(page)).toEqual([]);
    // nothing the page loads is refused by its own Content-Security-Policy (formats' zstd decoder
    // once fetched its wasm from a data: URL at import, which connect-src 'self' refuses)
    expect(browser.errors.slice(errorsBefore), 'console errors on /live').toEqual([]);
    const urls = await page.evaluate(() => performance.getEntriesByType('resource').filter((e) => e.name.endsWith('.js')).map((e) => e.name));
    let gzip = 0;
    for (const u of new Set(urls)) gzip += gzipSync(new Uint8Array(await (await fetch(u)).arrayBuffer()), { level: 9 }).length;
    console.log(`live: ${(gzip / 1024).toFixed(1)} KB of JavaScript gzipped`);
    writeFileSync(join(artifactsDir, 'live-js.json'), `${JSON.stringify({ scripts: new Set(urls).size, gzipBytes: gzip }, null, 2)}\n`);
  });

  it("takes the duration's maximum and default from the tenant's live limits, which an admin changes on the page", async () => {
    const { page } = browser;
    await page.goto(`${stack.webUrl}/live`);
    const duration = page.getByLabel('Duration (seconds)');
    expect(await duration.getAttribute('max')).toBe('300');
    expect(await page.getByTestId('live-limits').textContent()).toMatch(/at most 4 live sessions at once, each at most 300 s, with a CPU budget of 10%.*up to 16, 3600 s, 50%/);
    // the owner changes the longest session to 120 s in the form
    await page.getByText('Change the live limits').click();
    await page.getByLabel('Longest session (seconds)').fill('120');
    await page.getByRole('button', { name: 'Save live limits' }).click();
    await page.getByTestId('live-limits').getByText('each at most 120 s').waitFor();
    expect(await duration.getAttribute('max')).toBe('120');
    expect((await owner.api.live.limits.query()).limits).toEqual({ maxSessions: 4, maxDurationSeconds: 120, cpuBudgetPercent: 10 });
    // over the instance's ceiling: the registry's words on the page, nothing changed
    await page.getByLabel('Sessions at once').evaluate((e) => e.removeAttribute('max'));
    await page.getByLabel('Sessions at once').fill('17');
    await page.getByRole('button', { name: 'Save live limits' }).click();
    await page.getByTestId('live-limits-form').getByRole('alert').getByText("live limits: 17 live sessions at once is over the instance's ceiling of 16 (PROBEYARD_LIVE_MAX_SESSIONS_CEILING)").waitFor();
    expect((await owner.api.live.limits.query()).limits.maxSessions).toBe(4);
    // a limit under the usual 10 s is the default too
    await owner.api.live.setLimits.mutate({ maxDurationSeconds: 5 });
    await page.goto(`${stack.webUrl}/live`);
    expect(await duration.inputValue()).toBe('5');
    expect(await duration.getAttribute('max')).toBe('5');
    await screenshot(page, 'live-limits');
    await owner.api.live.setLimits.mutate({ maxDurationSeconds: 300 });
  });

  it('offers a viewer no Run button (the editor still checks)', async () => {
    const { secret } = await owner.api.token.create.mutate({ name: 'viewer', role: 'viewer' });
    const v = await openBrowser();
    try {
      await v.page.goto(`${stack.webUrl}/sign-in`);
      await v.page.getByLabel('API token', { exact: true }).fill(secret);
      await v.page.getByRole('button', { name: 'Sign in with token' }).click();
      await v.page.waitForURL(/\/programs/);
      await v.page.goto(`${stack.webUrl}/live`);
      await v.page.getByTestId('live-verdict').waitFor({ timeout: 30_000 });
      expect(await v.page.getByTestId('live-run').count()).toBe(0);
      expect(await v.page.getByRole('button', { name: 'Run' }).count()).toBe(0);
      expect(await v.page.getByRole('button', { name: 'Publish' }).count()).toBe(0);
      await v.page.getByTestId('live-viewer-note').waitFor();
      // the limits are shown, the form to change them is not
      await v.page.getByTestId('live-limits').waitFor();
      expect(await v.page.getByTestId('live-limits-form').count()).toBe(0);
      await screenshot(v.page, 'live-viewer');
      // and the API refuses them
      const agentId = (await owner.api.agent.list.query()).agents[0]!.id;
      await expect(client(stack.registry.url, secret).live.start.mutate({ language: 'script', source: 'tracepoint:sched:sched_switch { @ = count(); }', target: { agentId } })).rejects.toMatchObject({ data: { code: 'FORBIDDEN' } });
    } finally {
      await v.close();
    }
  });
});
