// The README's usage example, run as written (a registry in-process, the web app in-process).
import { rmSync } from 'node:fs';
import { startRegistry } from '@probeyard/registry/server';
import { prepareDataFolder } from '@probeyard/registry/testing';
import { expect, it, vi } from 'vitest';
import { startWeb } from './src/server/start-web.js';
import { ensureWebBuild } from './test/support/stack.js';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

it('starts next to a registry and serves the sign-in page with its security headers', async () => {
  ensureWebBuild();
  const dir = await prepareDataFolder('probeyard-web-readme-');
  const lines: string[] = [];
  const log = (...a: unknown[]) => lines.push(a.join(' '));
  const registry = await startRegistry({ dataDir: dir, port: 0, logger: () => {} });
  try {
    const web = await startWeb({ registryUrl: registry.url, port: 0 });
    const res = await fetch(`${web.url}/sign-in`);
    log(res.status, res.headers.get('content-security-policy')?.includes("frame-ancestors 'none'"));
    await web.close();
  } finally {
    await registry.close();
    rmSync(dir, { recursive: true, force: true });
  }
  expect(lines).toEqual(['200 true']);
});
