// The whole product from the README's first command: `npm start` on an empty data folder with a
// replay feed, then a real Chromium signs in with the credentials it printed and sees non-empty
// dashboards of library programs, then Ctrl-C (SIGINT to the process group, as a terminal sends
// it) ends every process with exit 0 and leaves no tracefs instance behind.
//
// It runs in the `e2e` vitest project, after every other project (vitest.config.ts groupOrder),
// because `npm start` installs and builds before it starts, and nothing else may be reading the
// builds meanwhile.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { repoRoot } from './support/fixtures.js';
import { type Browser, browserSkipReason, client, openBrowser, screenshot, signIn } from './support/stack.js';

const libraryOnRecording = ['syscalls', 'execs', 'runqlat', 'ctxswitch', 'lifetimes', 'signals'];

interface Started {
  child: ChildProcess;
  out: () => string;
  webUrl: string;
  registryUrl: string;
  email: string;
  password: string;
  readyAfterMs: number;
}

function processesUsing(dataDir: string): number[] {
  const pids: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dataDir)) pids.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

describe.skipIf(browserSkipReason !== undefined)('npm start: the whole product on one machine', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'probeyard-npm-start-'));
  let started: Started | undefined;
  let browser: Browser | undefined;

  /** `npm start` on `dataDir` in a process group of its own (so SIGINT can go to all of it, as Ctrl-C does). */
  async function npmStart(): Promise<Started> {
    const t0 = Date.now();
    const child = spawn('npm', ['start', '--', '--data', dataDir, '--port', '0', '--web-port', '0', '--feed', 'library/recordings/procs.dat'], {
      cwd: repoRoot,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', NEXT_TELEMETRY_DISABLED: '1', CHECKPOINT_DISABLE: '1' },
    });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (/Ctrl-C stops everything/.test(out)) {
          clearInterval(timer);
          resolve();
        }
      }, 250);
      child.once('exit', (code) => {
        clearInterval(timer);
        reject(new Error(`npm start exited (${code}) before it was ready:\n${out}`));
      });
    });
    const grab = (re: RegExp) => {
      const m = re.exec(out);
      if (!m?.[1]) throw new Error(`npm start did not print ${re}:\n${out}`);
      return m[1];
    };
    const ready: Started = {
      child,
      out: () => out,
      webUrl: grab(/web app:\s+(\S+)/),
      registryUrl: grab(/registry:\s+(\S+)/),
      email: grab(/sign in:\s+(\S+)/),
      password: /password:\s+(\S+)/.exec(out)?.[1] ?? '',
      readyAfterMs: Date.now() - t0,
    };
    console.log(`npm start: ready after ${(ready.readyAfterMs / 1000).toFixed(1)} s`);
    return ready;
  }

  /** Ctrl-C to the whole process group; resolves with npm's exit code and the pids that ran on the data folder. */
  async function ctrlC(s: Started): Promise<{ code: number | null; pids: Set<number> }> {
    const pids = new Set(processesUsing(dataDir));
    const exited = new Promise<number | null>((resolve) => s.child.once('exit', (code) => resolve(code)));
    process.kill(-s.child.pid!, 'SIGINT');
    return { code: await exited, pids };
  }

  beforeAll(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    started = await npmStart();
    browser = await openBrowser();
  }, 1_200_000);

  afterAll(async () => {
    await browser?.close();
    const child = started?.child;
    if (child && child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    for (const pid of processesUsing(dataDir)) process.kill(pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('signs in with the printed credentials and sees non-empty dashboards of at least three library programs within 90 s', async () => {
    const s = started!;
    const page = browser!.page;
    await signIn(page, s.webUrl, { email: s.email, password: s.password });
    // Which deployment is which program: the owner's own view of the API.
    const login = await client(s.registryUrl).auth.login.mutate({ email: s.email, password: s.password });
    const api = client(s.registryUrl, login.token);
    const { deployments } = await api.deployment.list.query({});
    const byProgram = new Map(deployments.map((d) => [d.program.name, d.id]));
    for (const name of libraryOnRecording) expect(byProgram.has(name), `deployment of ${name}`).toBe(true);

    const deadline = Date.now() + 90_000;
    const nonEmpty = new Set<string>();
    while (nonEmpty.size < 3 && Date.now() < deadline) {
      for (const name of libraryOnRecording) {
        if (nonEmpty.has(name)) continue;
        await page.goto(`${s.webUrl}/deployments/${byProgram.get(name)}/dashboard`);
        await page.getByTestId('events-seen').waitFor();
        const seen = Number(((await page.getByTestId('events-seen').textContent()) ?? '').replace(/[^\d]/g, ''));
        const maps = await page.locator('[data-testid^="map-"]').count();
        if (seen > 0 && maps > 0) {
          nonEmpty.add(name);
          await screenshot(page, `npm-start-dashboard-${name}`);
        }
        if (nonEmpty.size >= 3) break;
      }
      if (nonEmpty.size < 3) await new Promise((r) => setTimeout(r, 2000));
    }
    expect([...nonEmpty].length, `non-empty dashboards: ${[...nonEmpty].join(', ')}`).toBeGreaterThanOrEqual(3);
    expect(browser!.errors).toEqual([]);
  });

  it('stops every process with exit 0 on Ctrl-C and leaves no tracefs instance', async () => {
    const s = started!;
    const { code, pids } = await ctrlC(s);
    expect(code, s.out().slice(-2000)).toBe(0);
    expect(s.out()).toMatch(/up: agent stopped \(exit 0\)/);
    expect(s.out()).toMatch(/up: web stopped \(exit 0\)/);
    expect(s.out()).toMatch(/up: registry stopped/);
    // Nothing may still run on this data folder: every process of the group got the SIGINT and the
    // last ones may finish their exit just after npm's (a fixed 500 ms stood here, short on a loaded
    // machine); one still running 10 s after npm exited fails.
    await vi.waitFor(() => expect(processesUsing(dataDir)).toEqual([]), { timeout: 10_000, interval: 100 });
    const instances = '/sys/kernel/tracing/instances';
    if (existsSync(instances)) {
      // Instances are named probeyard-<pid>-…: none may belong to a process of this start.
      const left = readdirSync(instances).filter((n) => n.startsWith('probeyard-') && pids.has(Number(n.split('-')[1])));
      expect(left).toEqual([]);
    }
  });

  it('starts again on the same data: no second demo, the same password, the agent reaches the registry on its new port', async () => {
    const first = started!;
    const again = await npmStart();
    started = again;
    expect(again.out()).not.toMatch(/password:/);
    expect(again.out()).toMatch(/with the password printed on the first start/);
    const restartedAt = Date.now();
    const login = await client(again.registryUrl).auth.login.mutate({ email: first.email, password: first.password });
    const api = client(again.registryUrl, login.token);
    const { deployments } = await api.deployment.list.query({});
    expect(deployments.filter((d) => d.program.name === 'syscalls')).toHaveLength(1);
    const syscalls = deployments.find((d) => d.program.name === 'syscalls')!;
    // Outputs of this start arrive: the agent, told the registry's new URL, uploads again.
    const deadline = Date.now() + 90_000;
    let last: string | null = null;
    while (Date.now() < deadline) {
      last = (await api.output.latest.query({ deploymentId: syscalls.id })).lastReceivedAt;
      if (last && Date.parse(last) > restartedAt) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(last && Date.parse(last) > restartedAt, `last output at ${last}`).toBe(true);
    const { code } = await ctrlC(again);
    expect(code, again.out().slice(-2000)).toBe(0);
    await vi.waitFor(() => expect(processesUsing(dataDir)).toEqual([]), { timeout: 10_000, interval: 100 });
  });
});
