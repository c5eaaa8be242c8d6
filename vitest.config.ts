import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

// One vitest run over every package and app. Each workspace folder becomes a project that
// inherits this config; a folder with its own vitest.config.ts uses that instead. Sources run
// directly (the `@probeyard/source` export condition points at `src/`), so tests never depend on
// a stale build.
const projects: (string | TestProjectInlineConfiguration)[] = [];
for (const group of ['packages', 'apps']) {
  if (!existsSync(group)) continue;
  for (const name of readdirSync(group).sort()) {
    const root = join(group, name);
    if (!existsSync(join(root, 'package.json'))) continue;
    if (existsSync(join(root, 'vitest.config.ts'))) {
      projects.push(root);
      continue;
    }
    projects.push({
      extends: true,
      test: {
        name,
        root,
        include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'README.test.ts'],
        exclude: ['**/*.e2e.test.ts', '**/node_modules/**'],
        // The web app's tests drive a real Chromium against a registry and a Next.js server: on a
        // loaded 2-core machine (the whole suite runs at once) one such test has taken over 30 s.
        ...(name === 'web' ? { testTimeout: 120_000 } : {}),
        // The registry's tests run each case on PGlite and PostgreSQL, some with tens of password
        // hashes in a row (scrypt): one took 33.6 s under the whole suite's load.
        // The agent's tests start a registry and agents as processes (its README example: 24.9 s).
        ...(name === 'registry' || name === 'agent' ? { testTimeout: 90_000 } : {}),
      },
    });
  }
}

// End-to-end tests of the whole product (`npm start`, which installs and builds before it starts):
// a group of their own that runs after every other project has finished.
projects.push({
  extends: true,
  test: { name: 'e2e', root: '.', include: ['apps/*/test/**/*.e2e.test.ts'], sequence: { groupOrder: 1 } },
});

// The program library (library/: C programs, their objects, tests over recordings).
if (existsSync('library/package.json')) {
  projects.push({ extends: true, test: { name: 'library', root: 'library', include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'README.test.ts'] } });
}

export default defineConfig({
  resolve: { conditions: ['@probeyard/source'] },
  ssr: { resolve: { conditions: ['@probeyard/source'] } },
  test: {
    projects,
    reporters: ['default', './tooling/vitest/summary-reporter.js'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
