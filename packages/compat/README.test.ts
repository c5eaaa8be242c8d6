// Runs the usage example of README.md and checks what it prints.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { buildManifest, checkCompat, formatVerdict, readProgramSpec } from './src/index.js';
import { readProfile } from './src/node/index.js';

it('README usage example prints what the README says', async () => {
  const root = join(import.meta.dirname, '..', '..');
  const lines: string[] = [];
  const log = (...a: unknown[]) => lines.push(a.join(' '));
  const spec = await readProgramSpec(new Uint8Array(readFileSync(join(root, 'examples/c/runqlat.o'))));
  const manifest = buildManifest(spec);
  log(manifest.attachPoints.join(' '), manifest.fields.map((f) => f.field).join(' '));
  const kernel = await readProfile(join(root, 'packages/compat/test/fixtures/formats/android-3.10.49'));
  const verdict = checkCompat(spec, kernel);
  log(formatVerdict(verdict).trimEnd());
  const readme = readFileSync(join(import.meta.dirname, 'README.md'), 'utf8');
  const printed = /prints\n\n```\n([\s\S]*?)```/.exec(readme)![1]!;
  expect(`${lines.join('\n')}\n`).toBe(printed);
});
