// Fixture formats for tests (no VM): real format files of packages/compat/test/fixtures/formats.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type EventFormat, parseEventFormat } from '@probeyard/formats';
import { targetOfFormats } from '../../src/target.js';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = join(here, '..', '..', '..', '..');
export const fixtureFormatsDir = join(repoRoot, 'packages', 'compat', 'test', 'fixtures', 'formats');

/** A fixture kernel's formats (packages/compat/test/fixtures/formats: real format files). */
export function fixtureFormats(kernel: 'linux-6.18' | 'android-3.10.49' | 'android-3.4.0'): EventFormat[] {
  const events = ['raw_syscalls/sys_enter', 'sched/sched_switch', 'sched/sched_wakeup', 'sched/sched_process_exec', 'sched/sched_process_fork', 'block/block_rq_issue'];
  const out: EventFormat[] = [];
  for (const e of events) {
    const [system] = e.split('/') as [string];
    try {
      out.push(parseEventFormat(readFileSync(join(fixtureFormatsDir, kernel, e, 'format'), 'utf8'), { system }));
    } catch {
      // not every fixture kernel has every event
    }
  }
  return out;
}

export const target618 = () => targetOfFormats(fixtureFormats('linux-6.18'), 'linux 6.18 fixture');

