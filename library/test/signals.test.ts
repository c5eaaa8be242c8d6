// signals over recordings/procs.dat and oom.dat: one count per delivered signal, by (signal,
// receiving process), as the signal_deliver records say.
import { describe, expect, it } from 'vitest';
import { recording } from './support/recordings.js';
import { entriesOf, runOverRecording } from './support/run-recording.js';
import { countBy, readRecords } from './support/trace-records.js';

describe.each([
  ['procs.dat', recording('procs'), '10 perl', 5], // five SIGUSR1 to its handler
  ['oom.dat', recording('oom'), '9 perl', 1], // the OOM killer's SIGKILL
])('signals over %s', (_, path, who, times) => {
  it('signals_delivered counts (sig, pid, comm)', async () => {
    const run = await runOverRecording('signals', path);
    const records = await readRecords(path, ['signal/signal_deliver']);
    const expected = countBy(records, (r) => `${r.fields.sig} ${r.pid} ${(r.comm ?? '<...>').slice(0, 15)}`);
    const got = new Map(
      entriesOf(run, 'signals_delivered').map(([k, v]) => {
        const key = k as { sig: number; pid: number; comm: string };
        return [`${key.sig} ${key.pid} ${key.comm}`, Number(v)];
      }),
    );
    expect(got).toEqual(expected);
    const [sig, name] = who.split(' ');
    expect([...got].filter(([k]) => k.startsWith(`${sig} `) && k.endsWith(` ${name}`)).map(([, n]) => n)).toEqual([times]);
  });
});
