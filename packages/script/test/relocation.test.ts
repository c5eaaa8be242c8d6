// Relocation: scripts compiled once, for the 6.18 recording's formats, run unchanged on that
// recording and on the same records re-laid out as older corpus kernels (Android 3.10.49: a
// 32-bit `long`; 3.4.0: every field 4 bytes further, 32-bit ARM) — written as trace.dat files by
// packages/formats' writer — and print the same. A script reading a field the kernel lacks is
// refused with the field named.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkCompat } from '@probeyard/compat';
import { encodeTraceDat, parseEventFormat, relayoutRecord } from '@probeyard/formats';
import { openTraceDat } from '@probeyard/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { compileScript } from '../src/compile.js';
import { formatDiagnostics } from '../src/source-text.js';
import { targetOfFormats, targetOfProfile } from '../src/target.js';
import { fixtureFormats, fixtureFormatsDir, repoRoot } from './support/formats.js';
import { recordingProfile, runSpecOnRecording } from './support/recording.js';

const small = join(repoRoot, 'examples', 'recordings', 'sched-small.dat');
const dir = mkdtempSync(join(tmpdir(), 'script-relocation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The 6.18 recording's records re-laid out for `kernel`'s sched formats, as a trace.dat file. */
function relaidOut(kernel: 'android-3.10.49' | 'android-3.4.0'): string {
  const parseFormat = (text: string, system: string) => parseEventFormat(text, { system });
  const source = openTraceDat(new Uint8Array(readFileSync(small)), { parseFormat });
  const keys = ['sched/sched_switch', 'sched/sched_wakeup'];
  const text = (k: string) => readFileSync(join(fixtureFormatsDir, kernel, k, 'format'), 'utf8');
  const targets = new Map(keys.map((k) => [k, parseFormat(text(k), 'sched')]));
  const records: { cpu: number; timeNs: bigint; data: Uint8Array }[] = [];
  const it = source.records();
  for (let r = it.next(); r; r = it.next()) {
    const to = targets.get(`${r.format!.system}/${r.format!.name}`)!;
    // `success` (gone since 5.14) is 1 for a wakeup that was recorded
    records.push({ cpu: r.cpu, timeNs: r.timestamp(), data: relayoutRecord(r.data(), r.format!, to, { fill: { success: 1 } }) });
  }
  const dat = encodeTraceDat({
    headerPage: readFileSync(join(fixtureFormatsDir, kernel, 'header_page'), 'utf8'),
    eventFormats: keys.map((k) => ({ system: 'sched', text: text(k) })),
    cmdlines: [...source.dat.cmdlines].map(([pid, comm]) => `${pid} ${comm}`).join('\n'),
    records,
    cpuCount: source.dat.cpuCount,
  });
  const path = join(dir, `${kernel}.dat`);
  writeFileSync(path, dat);
  return path;
}

const scripts = [
  'tracepoint:sched:sched_switch { @[args.prev_comm] = count(); @s = stats(args.prev_state); @h = hist(args.next_prio); }',
  'tracepoint:sched:sched_wakeup /args.target_cpu == 1/ { @[args.comm, args.pid] = count(); }',
  `tracepoint:sched:sched_wakeup { @q[args.pid] = nsecs; }
tracepoint:sched:sched_switch { $ns = @q[args.next_pid]; if ($ns) { @usecs = hist((nsecs - $ns) / 1000); } delete(@q[args.next_pid]); }
END { clear(@q); }`,
  'tracepoint:sched:sched_switch /args.prev_state != 0/ { printf("%s %d -> %s %d (%ld)\\n", args.prev_comm, args.prev_pid, args.next_comm, args.next_pid, args.prev_state); }',
  'tracepoint:sched:sched_switch { @[args.next_comm == "bash" ? "bash" : "other", cpu] = lhist(args.prev_prio, 0, 140, 10); }',
];

describe('a script compiled once runs unchanged on older kernels', async () => {
  const profile618 = await recordingProfile(small);
  const compiled = await Promise.all(
    scripts.map(async (s) => {
      const r = await compileScript(s, { target: targetOfProfile(profile618), name: 'relocation.bt' });
      if (!r.ok) throw new Error(formatDiagnostics(r.source, r.diagnostics));
      return r.spec;
    }),
  );
  const baseline = await Promise.all(compiled.map((spec) => runSpecOnRecording(spec, small)));

  it.each(['android-3.10.49', 'android-3.4.0'] as const)('re-laid out as %s: relocated, and the same output', async (kernel) => {
    const path = relaidOut(kernel);
    for (const [i, spec] of compiled.entries()) {
      const run = await runSpecOnRecording(spec, path);
      expect(run.status, scripts[i]).toBe('relocated');
      expect(run.records).toBe(869);
      expect(run.text, scripts[i]).toBe(baseline[i]!.text);
      expect(run.drawn, scripts[i]).toBe(baseline[i]!.drawn);
      expect(run.drawn.length + run.text.length).toBeGreaterThan(100);
    }
    // what moved: named fields, new offsets (and on 3.10.49 a narrower prev_state, sign-extended)
    const verdict = checkCompat(compiled[0]!, await recordingProfile(path));
    const changes = verdict.programs.flatMap((p) => p.changes).join('; ');
    expect(changes).toMatch(kernel === 'android-3.10.49' ? /prev_state: load size 8 → 4, sign-extended/ : /prev_comm: offset \d+ → \d+/);
  });

  it('a script reading a field a kernel lacks is refused there, the field named', async () => {
    const old = fixtureFormats('android-3.10.49');
    const r = await compileScript('tracepoint:sched:sched_wakeup /args.success/ { @ = count(); }', { target: targetOfFormats(old, 'android 3.10.49') });
    if (!r.ok) throw new Error(formatDiagnostics(r.source, r.diagnostics));
    const v = checkCompat(r.spec, profile618);
    expect(v.status).toBe('incompatible');
    expect(v.reasons[0]).toMatchObject({ kind: 'field-missing', field: 'success' });
    // and where it exists it runs
    const path = relaidOut('android-3.10.49');
    expect((await runSpecOnRecording(r.spec, path)).maps.get('')).toEqual([[undefined, 309]]);
  });
});
