// Runs the usage example of README.md exactly as written (with the import bound to this package).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import * as isa from './src/index.js';

it('README usage example runs and prints what the README says', () => {
  const readme = readFileSync(join(import.meta.dirname, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```(\w*)\n([\s\S]*?)```/g)];
  const code = blocks.find((b) => b[1] === 'ts')![2]!;
  const printed = blocks[blocks.indexOf(blocks.find((b) => b[1] === 'ts')!) + 1]![2]!;
  const importLine = /^import \{([^}]*)\} from '@probeyard\/isa';\n/m.exec(code)!;
  expect(code.split('\n').length).toBeLessThanOrEqual(17);
  const body = code.replace(importLine[0], '');
  const lines: string[] = [];
  const run = new Function('isa', 'console', `const {${importLine[1]}} = isa;\n${body}`);
  run(isa, { log: (...args: unknown[]) => lines.push(args.join(' ')) });
  expect(`${lines.join('\n').trimEnd()}\n`).toBe(printed);
});
