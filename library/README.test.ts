// Runs the usage example of README.md and checks that it prints what the README says.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkCompat } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { openTraceDatStream } from '@probeyard/formats/node';
import { Dispatcher, drawMaps, encodeMapSnapshot, loadForProfile } from '@probeyard/runtime';
import { expect, it } from 'vitest';
import { bundledKernelProfile, libraryEvents, libraryKernels, librarySpec, verdictCell } from './src/index.js';

it('README usage example prints what the README says', async () => {
  const lines: string[] = [];
  const log = (...a: unknown[]) => lines.push(a.join(' '));
  const spec = await librarySpec('signals');
  const nexus5 = libraryKernels.find((k) => k.id === 'android-3.4.0')!;
  log(verdictCell(checkCompat(spec, await bundledKernelProfile(nexus5, await libraryEvents()))));
  const feed = join(import.meta.dirname, 'recordings/procs.dat');
  const stream = openTraceDatStream(feed);
  const out = loadForProfile(spec, await readProfile(feed), { cpuCount: stream.info.cpuCount, environment: { commOf: (pid) => stream.info.comm(pid) } });
  if (!out.ok) throw new Error(`${out.status} on this kernel`);
  const dispatcher = new Dispatcher();
  const target = dispatcher.attach('signals', out.loaded);
  await dispatcher.run(stream);
  log(drawMaps(encodeMapSnapshot(out.loaded, { runId: 'readme', eventsSeen: target.eventsSeen, eventsLost: 0 }).maps).trimEnd());
  const readme = readFileSync(join(import.meta.dirname, 'README.md'), 'utf8');
  const printed = /prints\n\n```\n([\s\S]*?)```/.exec(readme)![1]!;
  expect(`${lines.join('\n')}\n`).toBe(printed);
  // the README's code is this code: every line of it but the imports and the feed's path (relative
  // to the repository root there), with console.log for log
  const code = /```ts\n([\s\S]*?)```/.exec(readme)![1]!;
  const self = readFileSync(join(import.meta.dirname, 'README.test.ts'), 'utf8');
  const body = code.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('import ') && !l.startsWith('const feed ='));
  expect(body.length).toBeGreaterThan(8);
  for (const line of body) expect(self).toContain(line.replace(/console\.log\(/g, 'log('));
});
