// `probeyard run PROGRAM --feed RECORDING --json` (the CLI's own path through packages/runtime:
// relocate for the feed, verify, run, encode the OUTPUTS.md snapshot) prints the maps the test
// harness computes, for every program over the recording its test uses, each with the display hint
// the runtime's conventions give it.
import type { DisplayHint } from '@probeyard/compat';
import { resolveDisplayHint } from '@probeyard/runtime';
import { describe, expect, it } from 'vitest';
import { librarySpec } from '../src/catalog.js';
import { objectPath } from '../src/paths.js';
import { probeyard } from './support/cli.js';
import { recording } from './support/recordings.js';
import { runOverRecording } from './support/run-recording.js';

const cases: [program: string, recording: string][] = [
  ['syscalls', 'procs'],
  ['execs', 'procs'],
  ['runqlat', 'procs'],
  ['ctxswitch', 'procs'],
  ['lifetimes', 'procs'],
  ['signals', 'procs'],
  ['biolatency', 'io'],
  ['irqtime', 'io'],
  ['oomkill', 'oom'],
  ['tcpretrans', 'tcp-retransmit'],
];

/** A decoded value as the CLI prints it: bigints as numbers when exact, structs without padding. */
const plain = (v: unknown): unknown =>
  typeof v === 'bigint'
    ? v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(v)
      : v.toString()
    : Array.isArray(v)
      ? v.map(plain)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).flatMap(([k, x]) => (/^_*pad/.test(k) ? [] : [[k, plain(x)]])))
        : v;

const sorted = (entries: unknown[]) => entries.map((e) => JSON.stringify(e)).sort();

describe.each(cases)('probeyard run %s over %s.dat', (program, name) => {
  it('prints every map but the hidden and events ones, as the harness computes them', { timeout: 60_000 }, async () => {
    const { code, out, err } = await probeyard(['run', objectPath(program), '--feed', recording(name), '--json']);
    expect([code, err]).toEqual([0, '']);
    const printed = JSON.parse(out) as { records: number; maps: { name: string; display: DisplayHint; entries: unknown[] }[] };
    const run = await runOverRecording(program, recording(name));
    expect(printed.records).toBe(run.records);
    const spec = await librarySpec(program);
    const shown = spec.maps.filter((m) => !['hidden', 'events'].includes(resolveDisplayHint(m).kind));
    expect(printed.maps.map((m) => m.name)).toEqual(shown.map((m) => m.name));
    let nonEmpty = 0;
    for (const m of printed.maps) {
      expect(m.display).toEqual(resolveDisplayHint(shown.find((s) => s.name === m.name)!));
      const mine = run.maps.get(m.name)!.entries.map((e) => ({ key: plain(e.typedKey), value: plain(e.typedValues![0]) }));
      expect([m.name, sorted(m.entries)]).toEqual([m.name, sorted(mine)]);
      if (mine.length > 0) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(0);
  });
});
