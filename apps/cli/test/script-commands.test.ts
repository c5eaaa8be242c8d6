// probeyard run / inspect / compat with scripts (.bt files and -e), through run(argv, io), over the
// bundled recording; expectations counted from the recording with packages/formats.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findField, readFieldString } from '@probeyard/formats';
import { openTraceDatFile } from '@probeyard/formats/node';
import { describe, expect, it } from 'vitest';
import { run } from '../src/main.js';
import { examplesDir, kernelDir, repoRoot } from './compat-fixtures.js';
import { bufferIo } from './support/buffer-io.js';

const recording = join(examplesDir, '..', 'recordings', 'sched-small.dat');

async function cli(argv: string[], files: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const io = bufferIo({ files, disk: true });
  const code = await run(argv, io);
  return { code, out: io.out, err: io.err };
}

/** next_comm of every sched_switch of the recording, counted independently. */
function switchesByNextComm(): Map<string, number> {
  const file = openTraceDatFile(recording);
  const want = new Map<string, number>();
  try {
    const reader = file.reader.records();
    for (let rec = reader.next(); rec; rec = reader.next()) {
      if (rec.format?.name !== 'sched_switch') continue;
      const comm = readFieldString(rec.view, rec.recordOffset, rec.recordLength, findField(rec.format, 'next_comm')!);
      want.set(comm, (want.get(comm) ?? 0) + 1);
    }
  } finally {
    file.close();
  }
  return want;
}

describe('probeyard run with a script', () => {
  it('-e compiles for the feed\'s formats and prints the maps as bpftrace does', async () => {
    const r = await cli(['run', '-e', 'tracepoint:sched:sched_switch { @[args.next_comm] = count(); }', '--feed', recording]);
    expect(r.code).toBe(0);
    expect(r.err).toContain("compatible for this feed's kernel; 869 records");
    expect(r.out.startsWith('\n\n@[')).toBe(true);
    const got = new Map(
      r.out
        .trim()
        .split('\n')
        .map((l) => /^@\[(.*)\]: (\d+)$/.exec(l)!)
        .map((m) => [m[1]!, Number(m[2])] as const),
    );
    expect(got).toEqual(switchesByNextComm());
  });

  it('a .bt file: BEGIN, printf as it comes, interval by trace time, END, then the maps', async () => {
    const script = `BEGIN { printf("Tracing switches... Hit Ctrl-C to end.\\n"); }
tracepoint:sched:sched_switch /args.next_comm == "bash"/ { @bash = count(); }
interval:ms:500 { printf("%d so far\\n", @bash); }
END { printf("done\\n"); }
`;
    const r = await cli(['run', 'prog.bt', '--feed', recording], { 'prog.bt': script });
    expect(r.code).toBe(0);
    const bash = switchesByNextComm().get('bash')!;
    const lines = r.out.split('\n');
    expect(lines[0]).toBe('Tracing switches... Hit Ctrl-C to end.');
    expect(lines.filter((l) => / so far$/.test(l)).length).toBeGreaterThan(0);
    expect(r.out.endsWith(`done\n\n\n@bash: ${bash}\n`)).toBe(true);
  });

  it('--json carries the printf text and the maps as an agent uploads them', async () => {
    const r = await cli(['run', '-e', 'tracepoint:sched:sched_wakeup { @[cpu] = count(); } END { printf("bye\\n"); }', '--feed', recording, '--json']);
    const j = JSON.parse(r.out);
    expect(j.output).toBe('bye\n');
    expect(j.maps[0]).toMatchObject({ name: '', display: { kind: 'counts', source: 'script' } });
    expect(j.maps[0].entries.reduce((s: number, e: { value: number }) => s + e.value, 0)).toBe(309);
  });

  it('a compile error prints line, column, caret and hint, exit 2', async () => {
    const r = await cli(['run', '-e', 'tracepoint:sched:sched_switch { @[args.next_com] = count(); }', '--feed', recording]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      [
        "probeyard run: -e:1:40: error: args.next_com: sched/sched_switch has no field 'next_com'",
        'tracepoint:sched:sched_switch { @[args.next_com] = count(); }',
        '                                       ^~~~~~~~',
        'hint: did you mean next_comm? sched/sched_switch has the fields prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid, next_prio',
        '1 error',
        '',
      ].join('\n'),
    );
  });

  it('an event the feed does not have is a compile error naming it', async () => {
    const r = await cli(['run', '-e', 'tracepoint:raw_syscalls:sys_enter { @ = count(); }', '--feed', recording]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('error: probe tracepoint:raw_syscalls:sys_enter:');
    expect(r.err).toContain('has no event raw_syscalls/sys_enter');
  });

  it('-e and PROGRAM together are refused', async () => {
    const r = await cli(['run', 'x.bt', '-e', 'BEGIN { exit(); }', '--feed', recording]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('-e SCRIPT and PROGRAM: give one of them');
  });
});

describe('probeyard inspect and compat with a script', () => {
  it('inspect compiles for --built-against and shows fields read by name from the script', async () => {
    const r = await cli(['inspect', 'q.bt', '--built-against', kernelDir('linux-6.18')], { 'q.bt': 'tracepoint:sched:sched_switch { @[args.prev_pid] = count(); }' });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^script \(compiled; artifact, \d+ bytes\), license GPL\n/);
    expect(r.out).toContain('sched/sched_switch.prev_pid byte-offset: offset 24, size 4, signed [script]');
  });

  it.skipIf(!existsSync(kernelDir('android-3.4.0')))('compat gives the verdict on another kernel', async () => {
    const r = await cli(['compat', 'q.bt', '--built-against', kernelDir('linux-6.18'), '--kernel', kernelDir('android-3.4.0')], { 'q.bt': 'tracepoint:sched:sched_switch { @[args.prev_pid] = count(); }' });
    expect(r.out).toContain('relocated');
    expect(r.out).toContain('prev_pid: offset 24 → 28');
  });
});

describe('probeyard run with provider probes (--provider)', () => {
  const procs = join(repoRoot, 'library', 'recordings', 'procs.dat');
  const provider = join(repoRoot, 'library', 'providers', 'proc.json');
  it('proc:::exec and proc:::fork through the library provider print the maps the raw tracepoint scripts print', async () => {
    const via = await cli(['run', '-e', 'proc:::exec { @e[args.filename] = count(); } proc:::fork { @f[args.parent_comm, args.child_pid] = count(); }', '--provider', provider, '--feed', procs]);
    const raw = await cli(['run', '-e', 't:sched:sched_process_exec { @e[str(args.filename)] = count(); } t:sched:sched_process_fork { @f[str(args.parent_comm), args.child_pid] = count(); }', '--feed', procs]);
    expect(raw.code).toBe(0);
    expect(via.code).toBe(0);
    // the recording's README: five /bin/true among its 11 execs
    expect(via.out).toMatch(/@e\[\S*\/true\]: 5\n/);
    expect(via.out).toBe(raw.out);
  });

  it('without the provider the probe is a compile error saying so; a malformed provider file is unusable input', async () => {
    const none = await cli(['run', '-e', 'proc:::exec { @ = count(); }', '--feed', procs]);
    expect(none.code).toBe(2);
    expect(none.err).toContain("probe proc:::exec: no provider 'proc' is known here");
    const dir = mkdtempSync(join(tmpdir(), 'probeyard-cli-prov-'));
    try {
      writeFileSync(join(dir, 'p.json'), '{"provider":"proc"}');
      const bad = await cli(['run', '-e', 'proc:::exec { @ = count(); }', '--provider', join(dir, 'p.json'), '--feed', procs]);
      expect(bad.code).toBe(2);
      expect(bad.err).toContain('p.json: provider proc: version: want semver');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const canTraceLive = process.getuid?.() === 0 && existsSync('/sys/kernel/tracing/events/raw_syscalls');
if (!canTraceLive) console.log('probeyard run -e --feed live skipped: needs root and a mounted tracefs with raw_syscalls');
describe.skipIf(!canTraceLive)('probeyard run -e --feed live', () => {
  it('counts syscalls for a second, with intervals by the clock, and BEGIN-only scripts need no events', async () => {
    const r = await cli(['run', '-e', 'tracepoint:raw_syscalls:sys_enter { @n = count(); } interval:ms:200 { printf("tick\\n"); }', '--feed', 'live', '--duration', '1']);
    expect(r.code).toBe(0);
    expect(Number(/@n: (\d+)/.exec(r.out)?.[1])).toBeGreaterThan(0);
    expect(r.out.split('\n').filter((l) => l === 'tick').length).toBeGreaterThanOrEqual(2);
    const begin = await cli(['run', '-e', 'BEGIN { printf("hello\\n"); exit(); }', '--feed', 'live', '--duration', '5']);
    expect(begin).toMatchObject({ code: 0, out: 'hello\n\n\n' });
  }, 120_000);
});
