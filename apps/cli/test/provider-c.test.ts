// C programs of provider probes (examples/c/forkprov.c, ioprov.c: library/include/probeyard/provider.h)
// through the CLI: `inspect`, `compat` and `run` with --provider FILE|DIR. The provider C program
// and the same-purpose script read the same values from the same records (the library's
// recordings, and records laid out as the older kernels lay them out), and both agree with the
// records read independently; the raw-tracepoint twins are refused where the provider ones run.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type KernelProfile, parseProvider, profileFormat } from '@probeyard/compat';
import { findField, readFieldString } from '@probeyard/formats';
import { openTraceDatFile } from '@probeyard/formats/node';
import { drawMaps, encodeMapSnapshot, type LoadedSpec, loadForProfile } from '@probeyard/runtime';
import { compileScript, providerResolver, targetOfProfile } from '@probeyard/script';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../src/main.js';
import { exampleSpec, examplesDir, fixtureProfile, kernelDir, recordOf, repoRoot } from './compat-fixtures.js';
import { bufferIo } from './support/buffer-io.js';

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = bufferIo({ files: {}, disk: true });
  const code = await run(argv, io);
  return { code, out: io.out, err: io.err };
}

const providersDir = join(repoRoot, 'library', 'providers');
const recordings = join(repoRoot, 'library', 'recordings');
const forkprov = join(examplesDir, 'forkprov.o');
const ioprov = join(examplesDir, 'ioprov.o');
const forkScript = 'proc:::fork { @forks[args.parent_comm] = count(); @child_pids[args.parent_comm] = sum(args.child_pid); }';
const ioScript = 'io:::done { @by_error[args.error] = count(); @bytes_by_dev[args.dev] = sum(args.bytes); }';

/** The maps a run printed (a script's END output first is two newlines: dropped). */
const maps = (out: string) => out.replace(/^\n+/, '');

describe('probeyard run of a provider C program and of the same-purpose script', () => {
  it('proc:::fork over procs.dat (6.18: __data_loc comms): the same maps, and the records agree', async () => {
    const feed = join(recordings, 'procs.dat');
    const c = await cli(['run', forkprov, '--feed', feed, '--provider', providersDir]);
    const script = await cli(['run', '-e', forkScript, '--feed', feed, '--provider', join(providersDir, 'proc.json')]);
    expect(c.code).toBe(0);
    expect(script.code).toBe(0);
    expect(c.err).toContain('count_forks: proc:::fork via proc@1.0.0, implementation for __data_loc parent_comm');
    expect(maps(c.out)).toBe(maps(script.out));
    // the recording, read without Probeyard's runtime: forks and child pids per parent_comm
    const file = openTraceDatFile(feed);
    const forks = new Map<string, number>();
    const pids = new Map<string, number>();
    try {
      const reader = file.reader.records();
      for (let rec = reader.next(); rec; rec = reader.next()) {
        if (rec.format?.name !== 'sched_process_fork') continue;
        const comm = readFieldString(rec.view, rec.recordOffset, rec.recordLength, findField(rec.format, 'parent_comm')!);
        const pid = rec.view.getInt32(rec.recordOffset + findField(rec.format, 'child_pid')!.byteOffset, true);
        forks.set(comm, (forks.get(comm) ?? 0) + 1);
        pids.set(comm, (pids.get(comm) ?? 0) + pid);
      }
    } finally {
      file.close();
    }
    expect([...forks.values()].reduce((a, b) => a + b, 0)).toBe(12); // the recording's README
    for (const [comm, n] of forks) expect(c.out).toContain(`@forks[${comm}]: ${n}\n`);
    for (const [comm, n] of pids) expect(c.out).toContain(`@child_pids[${comm}]: ${n}\n`);
  });

  it('io:::done over io.dat: the same maps as the script and as the raw-tracepoint twin on this kernel', async () => {
    const feed = join(recordings, 'io.dat');
    const c = await cli(['run', ioprov, '--feed', feed, '--provider', providersDir]);
    const script = await cli(['run', '-e', ioScript, '--feed', feed, '--provider', providersDir]);
    const raw = await cli(['run', join(examplesDir, 'iodone.o'), '--feed', feed]);
    expect([c.code, script.code, raw.code]).toEqual([0, 0, 0]);
    expect(c.err).toContain('on_done: io:::done via io@1.0.0, implementation for error');
    expect(c.out).toContain('@by_error[0]: 257\n'); // 257 requests completed (the recording's README)
    expect(maps(c.out)).toBe(maps(script.out));
    expect(maps(c.out)).toBe(maps(raw.out));
  });

  it('a C provider program without its provider is refused: provider-unresolved (exit 1)', async () => {
    const r = await cli(['run', forkprov, '--feed', join(recordings, 'procs.dat')]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("provider-unresolved: count_forks: proc:::fork: no provider 'proc' is given");
  });
});

describe('older layouts (inline char[16] comms), records built from the fixture formats', () => {
  const proc = parseProvider(readFileSync(join(providersDir, 'proc.json'), 'utf8'));

  /** Runs `loaded` on fork records of `profile` and draws its maps. */
  function runForks(loaded: LoadedSpec, profile: KernelProfile): string {
    const format = profileFormat(profile, 'sched/sched_process_fork')!;
    const forks: [string, number, string, number][] = [
      ['bash', 100, 'bash', 101],
      ['bash', 100, 'bash', 102],
      ['systemd', 1, 'sd-worker', 4000],
      ['a-very-long-name', 7, 'x', 8],
    ];
    for (const [i, [pc, pp, cc, cp]] of forks.entries()) {
      const data = recordOf(format, { common_pid: pp, parent_comm: pc, parent_pid: pp, child_comm: cc, child_pid: cp });
      loaded.runRecord(format.id, { cpu: 0, timestamp: 1000 * (i + 1), data });
    }
    return drawMaps(encodeMapSnapshot(loaded, { runId: 't', eventsSeen: forks.length, eventsLost: 0 }).maps, { eventsLost: 0 });
  }

  it.each(['android-3.4.0', 'android-3.10.49'] as const)('%s: forkprov.o and the script through proc@1.0.0 read the same values', async (kernel) => {
    const profile = await fixtureProfile(kernel);
    const c = loadForProfile(await exampleSpec('forkprov'), profile, { providers: [proc] });
    if (!c.ok) throw new Error(`refused: ${JSON.stringify(c.status === 'refused' ? c.reasons : c.fault)}`);
    expect(c.verdict.programs[0]!.via).toBe('proc:::fork via proc@1.0.0, implementation for inline parent_comm');
    const compiled = await compileScript(forkScript, { target: targetOfProfile(profile), providers: providerResolver([proc]) });
    if (!compiled.ok) throw new Error('script did not compile');
    const s = loadForProfile(compiled.spec, profile);
    if (!s.ok) throw new Error('script refused');
    const cMaps = runForks(c.loaded, profile);
    expect(cMaps).toBe(runForks(s.loaded, profile));
    // 15 characters and the NUL: the kernel's TASK_COMM_LEN
    expect(cMaps).toContain('@forks[a-very-long-nam]: 1\n');
    expect(cMaps).toContain('@forks[bash]: 2\n');
    expect(cMaps).toContain('@child_pids[bash]: 203\n');
    expect(cMaps).toContain('@child_pids[systemd]: 4000\n');
  });
});

describe('probeyard compat and inspect with --provider', () => {
  const dir = mkdtempSync(join(tmpdir(), 'probeyard-provc-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const header = `\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
`;
  /** An events/ tree with block_rq_complete as 4.4.88 lays it out, its error field named `errorField` (or none). */
  function blockKernel(name: string, errorField: string | undefined): string {
    const root = join(dir, name);
    mkdirSync(join(root, 'block', 'block_rq_complete'), { recursive: true });
    const error = errorField === undefined ? '' : `\tfield:int ${errorField};\toffset:28;\tsize:4;\tsigned:1;\n`;
    writeFileSync(
      join(root, 'block', 'block_rq_complete', 'format'),
      `name: block_rq_complete\nID: 392\nformat:\n${header}\n\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n${error}\tfield:char rwbs[8];\toffset:32;\tsize:8;\tsigned:0;\n\nprint fmt: "%d", REC->dev\n`,
    );
    return root;
  }

  it('ioprov.o runs on errors, on the synthesized errors→error rename, and is provider-unresolved where neither exists; iodone.o is refused on errors', async () => {
    const kernels = [blockKernel('errors', 'errors'), blockKernel('renamed', 'error'), blockKernel('neither', undefined)];
    const args = kernels.flatMap((k) => ['--kernel', k]);
    const c = await cli(['compat', ioprov, ...args, '--provider', providersDir, '--json']);
    expect(c.code).toBe(1);
    const verdicts = JSON.parse(c.out).verdicts as { status: string; programs: { via?: string }[]; reasons: { kind: string; text: string }[] }[];
    expect(verdicts.map((v) => [v.status, v.programs[0]!.via])).toEqual([
      ['compatible', 'io:::done via io@1.0.0, implementation for errors (before 4.20)'],
      ['compatible', 'io:::done via io@1.0.0, implementation for error'],
      ['incompatible', undefined],
    ]);
    expect(verdicts[2]!.reasons.map((r) => r.kind)).toEqual(['provider-unresolved']);
    expect(verdicts[2]!.reasons[0]!.text).toContain('implementation for error: block/block_rq_complete has no field error; implementation for errors (before 4.20): block/block_rq_complete has no field errors');
    const raw = await cli(['compat', join(examplesDir, 'iodone.o'), ...args, '--json']);
    expect((JSON.parse(raw.out).verdicts as { status: string }[]).map((v) => v.status)).toEqual(['incompatible', 'compatible', 'incompatible']);
    // text: each kernel's line names the implementation
    const text = await cli(['compat', ioprov, '--kernel', kernels[0]!, '--provider', join(providersDir, 'io.json')]);
    expect(text.code).toBe(0);
    expect(text.out).toContain('on_done: io:::done via io@1.0.0, implementation for errors (before 4.20)');
  });

  it('forkprov.o on the fixture kernels, and the script through the same providers', async () => {
    const args = [...(['android-3.4.0', 'android-3.10.49', 'linux-6.18'] as const).flatMap((k) => ['--kernel', kernelDir(k)]), '--partial'];
    const c = await cli(['compat', forkprov, ...args, '--provider', providersDir]);
    expect(c.code).toBe(0);
    expect(c.out.match(/implementation for inline parent_comm/g)).toHaveLength(2);
    expect(c.out.match(/implementation for __data_loc parent_comm/g)).toHaveLength(1);
    const raw = await cli(['compat', join(examplesDir, 'forkcomm.o'), ...args]);
    expect(raw.code).toBe(1);
    expect(raw.out).toContain('became-dynamic');
    const file = join(dir, 'fork.bt');
    writeFileSync(file, forkScript);
    const s = await cli(['compat', file, ...args, '--provider', providersDir]);
    expect(s.code).toBe(0);
    expect(s.out.match(/proc:::fork via proc@1.0.0, implementation for (inline|__data_loc) parent_comm/g)).toHaveLength(3);
  });

  it('--provider errors: a missing path, an empty folder, two versions of one provider (exit 2)', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const twice = join(dir, 'twice');
    mkdirSync(twice);
    const proc = readFileSync(join(providersDir, 'proc.json'), 'utf8');
    writeFileSync(join(twice, 'a.json'), proc);
    writeFileSync(join(twice, 'b.json'), proc.replace('"1.0.0"', '"1.1.0"'));
    const kernel = ['--kernel', kernelDir('linux-6.18'), '--partial'];
    const missing = await cli(['compat', forkprov, ...kernel, '--provider', join(dir, 'nope.json')]);
    expect([missing.code, missing.err]).toEqual([2, expect.stringContaining('nope.json')]);
    const none = await cli(['compat', forkprov, ...kernel, '--provider', empty]);
    expect([none.code, none.err]).toEqual([2, expect.stringContaining('the folder has no .json provider')]);
    const two = await cli(['compat', forkprov, ...kernel, '--provider', twice]);
    expect([two.code, two.err]).toEqual([2, expect.stringContaining('provider proc is given twice (1.0.0 and 1.1.0)')]);
  });

  it('verify checks a provider program on its arguments record (with --provider) or a generic record (without, said so)', async () => {
    const v = await cli(['verify', forkprov, '--provider', providersDir]);
    expect(v.code).toBe(0);
    expect(v.out).toContain('context reads of proc:::fork:\n  insn 4: parent_comm (offset 16, size 4)\n  insn 30: child_pid (offset 24, size 8)\n');
    const generic = await cli(['verify', ioprov]);
    expect(generic.code).toBe(0);
    expect(generic.out).toContain("io:::done: no provider 'io' given (--provider): checked on a generic record");
  });

  it('inspect shows the probe, its arguments record and the provider implementations', async () => {
    const r = await cli(['inspect', forkprov, '--provider', providersDir]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('program count_forks (provider/proc/fork)');
    expect(r.out).toContain('count_forks insn 30: proc__fork.child_pid byte-offset: offset 24, size 8, signed [core]');
    expect(r.out).toContain(
      [
        'provider probe proc:::fork (count_forks), proc@1.0.0; arguments record after the 8-byte common header:',
        '  long long parent_pid: offset 8, size 8',
        '  __data_loc char[] parent_comm: offset 16, size 4',
        '  long long child_pid: offset 24, size 8',
        '  __data_loc char[] child_comm: offset 32, size 4',
        '  implementation for inline parent_comm: sched/sched_process_fork (child_comm, child_pid, parent_comm, parent_pid)',
        '  implementation for __data_loc parent_comm: sched/sched_process_fork (child_comm, child_pid, parent_comm, parent_pid)',
      ].join('\n'),
    );
    const json = JSON.parse((await cli(['inspect', forkprov, '--provider', join(providersDir, 'io.json'), '--json'])).out);
    expect(json.providers).toEqual([{ program: 'count_forks', probe: 'proc:::fork', record: [], implementations: [], error: "no provider 'proc' given" }]);
  });
});

const canTraceLive = process.getuid?.() === 0 && existsSync('/sys/kernel/tracing/events/sched/sched_process_fork');
if (!canTraceLive) console.log('probeyard run of a provider C program --feed live skipped: needs root and a mounted tracefs with sched_process_fork');
describe.skipIf(!canTraceLive)('probeyard run of a provider C program --feed live', () => {
  it('enables the event its implementation chooses on this kernel and counts the forks of a shell', async () => {
    let done = false;
    const pending = cli(['run', forkprov, '--feed', 'live', '--duration', '3', '--provider', providersDir]).finally(() => {
      done = true;
    });
    // a shell that forks twice, every 100 ms while the run lasts (it enables its events after it starts)
    while (!done) {
      await promisify(execFile)('sh', ['-c', '/bin/true & /bin/true & wait']);
      await new Promise((r) => setTimeout(r, 100));
    }
    const r = await pending;
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/count_forks: proc:::fork via proc@1\.0\.0, implementation for (inline|__data_loc) parent_comm/);
    expect(Number(/@forks\[sh\]: (\d+)/.exec(r.out)?.[1] ?? 0)).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
