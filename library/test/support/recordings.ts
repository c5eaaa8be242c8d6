// Paths of the recordings the program tests replay.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { corpusDir, libraryDir, recordingsDir } from '../../src/paths.js';

/** library/recordings/<name>.dat (committed; see its README). */
export const recording = (name: string): string => join(recordingsDir, `${name}.dat`);

/** examples/recordings/sched-small.dat: 869 sched_switch/sched_wakeup records of Linux 6.18. */
export const schedSmall = join(libraryDir, '..', 'examples', 'recordings', 'sched-small.dat');

/** The corpus' trace.dat (sched_switch/sched_wakeup, 6.18), or undefined with why. */
export function corpusTraceDat(file = 'trace.dat'): { path: string } | { missing: string } {
  const path = join(corpusDir, 'trace-dat', file);
  return existsSync(path) ? { path } : { missing: `${path} is absent` };
}
