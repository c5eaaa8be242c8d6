// Runs the usage example of README.md and checks what it prints.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readProgramSpec } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { openTraceDatStream } from '@probeyard/formats/node';
import { expect, it } from 'vitest';
import { Dispatcher, drawMaps, encodeMapSnapshot, loadForProfile } from './src/index.js';

it('README usage example prints what the README says', async () => {
  const root = join(import.meta.dirname, '..', '..');
  const lines: string[] = [];
  const log = (...a: unknown[]) => lines.push(a.join(' '));
  const feed = join(root, 'examples/recordings/sched-small.dat');
  const spec = await readProgramSpec(new Uint8Array(readFileSync(join(root, 'examples/c/runqlat.o'))));
  const stream = openTraceDatStream(feed);
  const out = loadForProfile(spec, await readProfile(feed), { cpuCount: stream.info.cpuCount });
  if (!out.ok) throw new Error(`${out.status} on this kernel`);
  const dispatcher = new Dispatcher();
  const target = dispatcher.attach('runqlat', out.loaded);
  await dispatcher.run(stream);
  const snapshot = encodeMapSnapshot(out.loaded, { runId: 'demo', eventsSeen: target.eventsSeen, eventsLost: target.lostEvents });
  log(out.status, target.counters.eventsSeen, target.counters.faults);
  log(drawMaps(snapshot.maps.filter((m) => m.name === 'runq_usecs')).trimEnd());
  const readme = readFileSync(join(import.meta.dirname, 'README.md'), 'utf8');
  const printed = /prints\n\n```\n([\s\S]*?)```/.exec(readme)![1]!;
  expect(`${lines.join('\n')}\n`).toBe(printed);
});
