import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type EventFormat, parseEventFormat } from '../../src/event-format/event-format.js';

export const fixturesDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'formats');

/** Text of a fixture format: `fixtureText('linux-6.18', 'sched/sched_switch')`. */
export function fixtureText(kernel: string, event: string): string {
  return readFileSync(join(fixturesDir, kernel, event, 'format'), 'utf8');
}

/** A parsed fixture format, with its system set. */
export function fixtureFormat(kernel: string, event: string): EventFormat {
  return parseEventFormat(fixtureText(kernel, event), { system: event.split('/')[0]! });
}
