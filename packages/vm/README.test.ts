import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import * as vmPackage from './src/index.js';

// The README's usage example, run as written (imports swapped for the package's source).
it('README example runs and counts to 3', () => {
  const text = readFileSync(join(import.meta.dirname, 'README.md'), 'utf8');
  const code = /```ts\n([\s\S]*?)```/.exec(text)?.[1] ?? '';
  const body = code.replace(/^import .*\n/m, '').replace(/const count = /, 'return ');
  const { loadAssembly, RunStatus } = vmPackage;
  const run = new Function('loadAssembly', 'RunStatus', body.replace(/!/g, ''));
  expect(run(loadAssembly, RunStatus)).toBe(3n);
});
