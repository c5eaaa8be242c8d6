import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readProgramSpec } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { Dispatcher, loadForProfile } from '@probeyard/runtime';
import { describe, expect, it } from 'vitest';
import { openRecording } from '../profile/node-profile.js';
import { FeedRunner } from './feed-runner.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const recording = join(root, 'examples/recordings/sched-small.dat');

describe('FeedRunner, a recording in a loop', () => {
  it('starts every pass where the last one ended: trace time only moves forward', async () => {
    const file = openRecording(recording, { prefetch: false });
    const dispatcher = new Dispatcher();
    const spec = await readProgramSpec(new Uint8Array(readFileSync(join(root, 'examples/c/runqlat.o'))));
    const loaded = loadForProfile(spec, await readProfile(recording), { cpuCount: 8 });
    if (!loaded.ok) throw new Error(loaded.status);
    dispatcher.attach('t', loaded.loaded);
    const abort = new AbortController();
    const ends: bigint[] = [];
    const runner = new FeedRunner({
      feed: { kind: 'file', path: recording, loop: true, pace: 'max' },
      recording: file,
      dispatcher,
      log: () => {},
      onEnd: (pass) => {
        ends.push(BigInt(dispatcher.traceTimeNs));
        if (pass >= 3) abort.abort();
      },
    });
    await runner.run(abort.signal);
    expect(ends).toHaveLength(3);
    expect(runner.records).toBe(3 * 869);
    // equal passes, each shifted by one recording span + 1 µs
    const span = ends[1]! - ends[0]!;
    expect(span).toBeGreaterThan(1000n);
    expect(ends[2]! - ends[1]!).toBe(span);
    expect(dispatcher.timeShiftNs).toBe(3n * span);
  });
});
