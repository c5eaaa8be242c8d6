// Runs the usage example of README.md and checks what it prints.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readProfile } from '@probeyard/compat/node';
import { openTraceDatStream } from '@probeyard/formats/node';
import { Dispatcher, drawMaps, encodeMapSnapshot, loadForProfile, ScriptSession } from '@probeyard/runtime';
import { expect, it } from 'vitest';
import { compileScript, formatDiagnostics, targetOfProfile } from './src/index.js';

it('README usage example prints what the README says', async () => {
  const lines: string[] = [];
  const console = { log: (...a: unknown[]) => lines.push(a.join(' ')) };
  const feed = join(import.meta.dirname, '..', '..', 'examples/recordings/sched-small.dat');
  const target = targetOfProfile(await readProfile(feed)); // the kernel to compile for: its events and formats
  const typo = await compileScript('t:sched:sched_switch { @[args.next_com] = count(); }', { target, name: '-e' });
  if (!typo.ok) console.log(formatDiagnostics(typo.source, typo.diagnostics));
  const r = await compileScript('t:sched:sched_switch /args.prev_state == 0/ { @[cpu] = count(); @prio = lhist(args.next_prio, 100, 140, 10); }', { target });
  if (!r.ok) throw new Error('does not compile');
  const out = loadForProfile(r.spec, await readProfile(feed)); // relocate, verify, load: as any program
  if (!out.ok) throw new Error(out.status);
  const dispatcher = new Dispatcher();
  dispatcher.attach('readme', out.loaded);
  await new ScriptSession(out.loaded, { onText: (t) => console.log(t) }).run(openTraceDatStream(feed), dispatcher);
  console.log(drawMaps(encodeMapSnapshot(out.loaded, { runId: 'readme', eventsSeen: 0, eventsLost: 0 }).maps).trimEnd());
  const readme = readFileSync(join(import.meta.dirname, 'README.md'), 'utf8');
  const printed = /prints\n\n```\n([\s\S]*?)```/.exec(readme)![1]!;
  expect(`${lines.join('\n')}\n`).toBe(printed);
});
