// Runs the usage example of README.md as written, with '.data' bound to a fresh data folder.
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as trpcClient from '@trpc/client';
import ts from 'typescript';
import { expect, it } from 'vitest';
import * as server from './src/server-entry.js';
import { pgliteTemplate } from './test/harness.js';

it('README usage example runs and prints what the README says', async () => {
  const readme = readFileSync(join(import.meta.dirname, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```(\w*)\n([\s\S]*?)```/g)];
  const index = blocks.findIndex((b) => b[1] === 'ts');
  const code = blocks[index]?.[2] ?? '';
  const printed = blocks[index + 1]?.[2] ?? '';
  expect(code.split('\n').length).toBeLessThanOrEqual(12);
  const dataDir = mkdtempSync(join(tmpdir(), 'probeyard-readme-'));
  cpSync(await pgliteTemplate(), join(dataDir, 'pglite'), { recursive: true });
  try {
    const source = code.replace(/^import .*\n/gm, '').replaceAll("'.data'", JSON.stringify(dataDir));
    const body = ts.transpileModule(source, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } }).outputText;
    const lines: string[] = [];
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
    const run = new AsyncFunction('server', 'client', 'console', `const { readAdminCredential, startRegistry } = server;\nconst { createTRPCClient, httpLink } = client;\n${body}`);
    await run(server, trpcClient, { log: (...args: unknown[]) => lines.push(args.join(' ')) });
    expect(`${lines.join('\n')}\n`).toBe(printed);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
