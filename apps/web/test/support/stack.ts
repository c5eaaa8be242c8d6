// Browser-test support: a registry started in-process on a temp data folder (PGlite), the web app
// started as its own process against it (`probeyard-web --registry URL --port 0`, as an operator
// would), and Debian's Chromium driven by playwright-core. Everything says why it skips.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, type Stats, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppRouter } from '@probeyard/registry';
import { readAdminCredential, type RunningRegistry, startRegistry } from '@probeyard/registry/server';
import { prepareDataFolder } from '@probeyard/registry/testing';
import { createTRPCClient, httpLink } from '@trpc/client';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { vi } from 'vitest';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 600_000 });

export const webDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const artifactsDir = join(webDir, 'test-artifacts');
export const chromiumPath = process.env.PROBEYARD_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined. Printed once per file. */
export const browserSkipReason = existsSync(chromiumPath) ? undefined : `no Chromium at ${chromiumPath} (apt-get install chromium)`;
if (browserSkipReason) console.warn(`skipping browser tests: ${browserSkipReason}`);

/**
 * What the production build is made from: the app's sources and settings, and the `dist/` of the
 * packages it bundles (`pnpm build` of a package rewrites them). Tests beside the code are not in it.
 */
const buildInputs = [
  ...['src', 'bin', 'next.config.ts', 'package.json', 'tsconfig.json', 'tsconfig.server.json'].map((p) => join(webDir, p)),
  ...['compat', 'formats', 'isa', 'runtime', 'script', 'verifier'].map((p) => join(webDir, '..', '..', 'packages', p, 'dist')),
];

/** The newest modification time (ms) of `path` or of any file under it, skipping tests and node_modules; 0 when absent. */
function newestMtimeMs(path: string): number {
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return /\.test\.tsx?$/.test(path) ? 0 : st.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules') continue;
    newest = Math.max(newest, newestMtimeMs(join(path, entry)));
  }
  return newest;
}

/** Why the production build must be made (again), or undefined when it is up to date. */
export function webBuildStaleReason(): string | undefined {
  const buildId = join(webDir, '.next', 'BUILD_ID');
  if (!existsSync(buildId) || !existsSync(join(webDir, 'dist', 'server', 'start-web.js'))) return 'no production build yet';
  const builtAt = statSync(buildId).mtimeMs;
  const newer = buildInputs.find((p) => newestMtimeMs(p) > builtAt);
  return newer ? `${relative(webDir, newer) || newer} changed after the build (.next/BUILD_ID)` : undefined;
}

/**
 * The production build (`.next/`): made when missing (CI's `pnpm build` makes it before the
 * tests) and made again when a source of it is newer than `.next/BUILD_ID`, so a local run never
 * tests a stale build (a stat of some hundred files when it is up to date).
 */
export function ensureWebBuild(): void {
  const stale = webBuildStaleReason();
  if (stale === undefined) return;
  console.warn(`web: ${stale}: building it (pnpm --filter @probeyard/web build)`);
  execFileSync('pnpm', ['run', 'build'], { cwd: webDir, stdio: 'inherit', env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' } });
}

export type Api = ReturnType<typeof createTRPCClient<AppRouter>>;

export function client(url: string, secret?: string): Api {
  return createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/trpc`, headers: secret ? { authorization: `Bearer ${secret}` } : {} })] });
}

export interface Stack {
  registry: RunningRegistry;
  webUrl: string;
  admin: Api;
  /** A new tenant whose owner has a password; `api` acts as the owner. */
  tenant(name: string, password?: string): Promise<{ name: string; email: string; password: string; token: string; api: Api }>;
  close(): Promise<void>;
}

async function startWebProcess(registryUrl: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(webDir, 'bin', 'probeyard-web.js'), '--registry', registryUrl, '--port', '0'], {
    cwd: webDir,
    env: { ...process.env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`web did not start in 120 s: ${out}`)), 120_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`web exited with ${code}: ${out}`));
    });
  });
  return { url, child };
}

export async function startStack(): Promise<Stack> {
  ensureWebBuild();
  const dataDir = await prepareDataFolder('probeyard-web-test-');
  const registry = await startRegistry({ dataDir, port: 0, logger: () => {} });
  const web = await startWebProcess(registry.url);
  const admin = client(registry.url, readAdminCredential(dataDir));
  return {
    registry,
    webUrl: web.url,
    admin,
    async tenant(name, password = 'correct horse battery staple') {
      const email = `owner@${name}.example`;
      const made = await admin.tenant.create.mutate({ name, ownerEmail: email });
      const api = client(registry.url, made.ownerToken);
      await api.auth.setPassword.mutate({ newPassword: password });
      return { name, email, password, token: made.ownerToken, api };
    },
    async close() {
      await new Promise<void>((resolve) => {
        if (web.child.exitCode !== null) return resolve();
        web.child.once('exit', () => resolve());
        web.child.kill('SIGTERM');
      });
      await registry.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  errors: string[];
  close(): Promise<void>;
}

/** Chromium with a fresh profile; console errors of every page are collected in `errors`. */
export async function openBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'probeyard-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1360, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  // PROBEYARD_TEST_CPU_THROTTLE=N runs the pages' JavaScript N times slower (Chromium's own CPU
  // throttling): hydration, polling and rendering then take as long as on a loaded CI machine, so a
  // test that reads the page before the condition it asserts shows up at once (a stress mode, off by default).
  const throttle = Number(process.env.PROBEYARD_TEST_CPU_THROTTLE ?? 0);
  if (throttle > 1) {
    const slow = async (p: Page) => (await context.newCDPSession(p)).send('Emulation.setCPUThrottlingRate', { rate: throttle });
    await slow(page);
    context.on('page', (p) => void slow(p));
  }
  const errors: string[] = [];
  context.on('console', (m) => {
    // with the page and the resource, so a failure names what answered (a 404 says only its status)
    if (m.type() === 'error') errors.push(`${m.text()}${m.location().url ? ` (${m.location().url})` : ''}${m.page() ? ` on ${m.page()!.url()}` : ''}`);
  });
  return {
    context,
    page,
    errors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a full-page screenshot as a test artifact (apps/web/test-artifacts/screenshots/, ignored by git). */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = join(artifactsDir, 'screenshots');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

export async function signIn(page: Page, webUrl: string, who: { email: string; password: string }): Promise<void> {
  await page.goto(`${webUrl}/sign-in`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password', { exact: true }).fill(who.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'));
}
