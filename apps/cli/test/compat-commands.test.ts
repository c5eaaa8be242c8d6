// probeyard inspect / compat / diff-formats / run through run(argv, io), on the example objects,
// the compat fixture kernels and (run) the corpus trace.dat.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openTraceDatFile } from '@probeyard/formats/node';
import { findField, readFieldString } from '@probeyard/formats';
import { describe, expect, it } from 'vitest';
import { type CliIo, run } from '../src/main.js';
import { examplesDir, kernelDir } from './compat-fixtures.js';

interface BufferIo extends CliIo {
  out: string;
  err: string;
}

function fileIo(): BufferIo {
  const io: BufferIo = {
    out: '',
    err: '',
    stdout: (t) => {
      io.out += t;
    },
    stderr: (t) => {
      io.err += t;
    },
    readStdin: async () => new Uint8Array(),
    readFile: async (path) => new Uint8Array(readFileSync(path)),
    writeFile: async () => {},
  };
  return io;
}

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = fileIo();
  const code = await run(argv, io);
  return { code, out: io.out, err: io.err };
}

const example = (n: string) => join(examplesDir, `${n}.o`);
/** The 6.18 sched_switch with `char prev_comm[16]; signed:1` (fixtures/signed-char.s says why). */
const signedCharDir = join(import.meta.dirname, 'fixtures', 'signed-char');
const traceDat = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus', 'trace-dat', 'trace.dat');

describe('probeyard inspect', () => {
  it('prints the spec and the manifest', async () => {
    const r = await cli('inspect', example('syscount'));
    expect(r.code).toBe(0);
    expect(r.out).toContain('maps:\n  syscalls: hash, key 4, value 8, entries 1024\n');
    expect(r.out).toContain('  count_syscalls insn 0: raw_syscalls/sys_enter.id byte-offset: offset 8, size 8, signed [core]\n');
    expect(r.out).toContain('tag: module-like, no ABI\n');
  });

  it('--json gives the spec and the manifest as data', async () => {
    const r = await cli('inspect', example('runqlat'), '--json');
    const j = JSON.parse(r.out);
    expect(j.spec.version).toBe(1);
    expect(j.manifest.attachPoints).toEqual(['sched/sched_wakeup', 'sched/sched_switch']);
    expect(j.manifest.fields).toHaveLength(4);
  });

  it('refuses a file that is neither an object nor assembly (exit 2)', async () => {
    const r = await cli('inspect', join(kernelDir('linux-6.18'), 'header_page'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^probeyard inspect: read assembly: /);
  });
});

describe('probeyard compat', () => {
  it('prints one verdict a kernel with reasons; exit 1 when refused somewhere', async () => {
    const r = await cli('compat', example('forkcomm'), '--kernel', kernelDir('android-3.10.49'), '--kernel', kernelDir('linux-6.18'));
    expect(r.code).toBe(1);
    const lines = r.out.split('\n');
    expect(lines[1]).toBe(`${kernelDir('android-3.10.49')} (complete)  compatible`);
    expect(lines[2]).toBe(`${kernelDir('linux-6.18')} (complete)  incompatible`);
    expect(lines[3]).toBe('    became-dynamic: count_forks: parent_comm: was char[16], is __data_loc on this kernel (insn 4 is reachable)');
  });

  it('exit 0 when it runs everywhere, with the relocations listed; --json', async () => {
    const r = await cli('compat', example('syscount'), '--kernel', kernelDir('android-3.10.49'), '--json');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.verdicts[0].status).toBe('relocated');
    expect(j.verdicts[0].programs[0].changes).toEqual(['id: load size 8 → 4, sign-extended (ldxsw)']);
  });

  it('--pin-to lets a layout-pinned program run where the layout is identical', async () => {
    const src = join(import.meta.dirname, 'fixtures', 'pinned-next-pid.s');
    const pinned = await cli('compat', src, '--pin-to', kernelDir('linux-6.18'), '--kernel', kernelDir('linux-6.18'), '--kernel', kernelDir('android-3.10.49'));
    expect(pinned.out).toContain(`${kernelDir('linux-6.18')} (complete)  compatible`);
    expect(pinned.out).toContain(`${kernelDir('android-3.10.49')} (complete)  incompatible\n    layout-pinned: sched_switch: insn 0 reads offset 56, size 4 (next_prio on this kernel)`);
    const named = await cli('compat', src, '--built-against', kernelDir('linux-6.18'), '--kernel', kernelDir('android-3.10.49'));
    expect(named.code).toBe(0);
    expect(named.out).toContain('relocated sched_switch: next_pid: offset 56 → 52');
  });

  it('a missing event: incompatible on a complete folder, unknown with --partial; --name names each kernel', async () => {
    const complete = await cli('compat', example('syscount'), '--kernel', kernelDir('android-3.4.0'), '--name', '3.4.0-gadb2201');
    expect(complete.code).toBe(1);
    expect(complete.out.split('\n').slice(1, 3)).toEqual([
      `${kernelDir('android-3.4.0')} (3.4.0-gadb2201, complete)  incompatible`,
      '    event-missing: count_syscalls: event raw_syscalls/sys_enter does not exist on this kernel (complete profile)',
    ]);
    const partial = await cli('compat', example('syscount'), '--kernel', kernelDir('android-3.4.0'), '--kernel', kernelDir('android-3.10.49'), '--partial', '--name', 'a', '--name', 'b', '--json');
    expect(partial.code).toBe(1);
    const j = JSON.parse(partial.out) as { verdicts: { kernel: string; release: string; complete: boolean; status: string; profile: { release: string; complete: boolean } }[] };
    expect(j.verdicts.map((v) => [v.release, v.complete, v.profile.release, v.profile.complete, v.status])).toEqual([
      ['a', false, 'a', false, 'unknown'],
      ['b', false, 'b', false, 'relocated'],
    ]);
    const tooMany = await cli('compat', example('syscount'), '--kernel', kernelDir('android-3.4.0'), '--name', 'a', '--name', 'b');
    expect([tooMany.code, tooMany.err]).toEqual([2, 'probeyard compat: 2 --name for 1 --kernel: each --name names the --kernel of the same rank\n']);
  });

  it('a read of a field whose signedness changed is refused; plain char only with --strict-char-sign', async () => {
    const src = join(import.meta.dirname, 'fixtures', 'signed-char.s');
    const lenient = await cli('compat', src, '--built-against', signedCharDir, '--kernel', kernelDir('linux-6.18'));
    expect([lenient.code, lenient.out.split('\n')[1]]).toEqual([0, `${kernelDir('linux-6.18')} (complete)  compatible`]);
    const strict = await cli('compat', src, '--built-against', signedCharDir, '--kernel', kernelDir('linux-6.18'), '--strict-char-sign');
    expect(strict.code).toBe(1);
    expect(strict.out).toContain(`${kernelDir('linux-6.18')} (complete)  incompatible\n    signedness-changed: sched_switch: prev_comm: built signed, unsigned (char) on this kernel`);
  });

  it('needs --kernel (exit 2)', async () => {
    expect((await cli('compat', example('syscount'))).code).toBe(2);
  });
});

describe('probeyard diff-formats', () => {
  it('names each change of one event', async () => {
    const r = await cli('diff-formats', kernelDir('android-3.10.49'), kernelDir('linux-6.18'), '--event', 'sched/sched_wakeup');
    expect(r.code).toBe(1);
    expect(r.out).toBe('sched/sched_wakeup:\n  removed: success removed (was int success at offset 32, size 4)\n  moved: target_cpu moved from offset 36 to 32\n');
  });

  it('exit 0 and "same layout" for identical formats', async () => {
    const r = await cli('diff-formats', kernelDir('linux-6.18'), kernelDir('linux-6.18'), '--event', 'sched_switch');
    expect(r).toMatchObject({ code: 0, out: 'sched/sched_switch: same layout\n' });
  });
});

describe('probeyard run', () => {
  it('draws runqlat\'s 64-slot array as a log2 histogram and the hash maps as sorted counts (packages/runtime)', async () => {
    const r = await cli('run', example('runqlat'), '--feed', join(examplesDir, '..', 'recordings', 'sched-small.dat'));
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toBe('@runq_usecs: ');
    expect(lines[1]).toBe('[0, 2)                26 |@@@@@@@@@@@@@@@@@@@@@                               |');
    expect(lines[3]).toBe(`[4, 8)                64 |${'@'.repeat(52)}|`);
    const counts = lines.filter((l) => l.startsWith('@start['));
    const values = counts.map((l) => BigInt(l.split(': ')[1]!));
    expect(values).toEqual([...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(r.err).toContain('relocated for this feed\'s kernel; 869 records');
  });

  it.skipIf(!existsSync(traceDat))('switchcomm over the corpus trace.dat counts next_comm as the records say', async () => {
    const r = await cli('run', example('switchcomm'), '--feed', traceDat, '--json');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.verdict.status).toBe('compatible');
    expect(j.counters[0]).toMatchObject({ faults: 0, budgetExhaustions: 0 });
    expect(j.eventsLost).toBe(0);
    expect(j.maps[0]).toMatchObject({ name: 'switches', type: 'hash', display: { kind: 'counts', source: 'convention' }, truncated: 0 });
    const got = new Map<string, number>(j.maps[0].entries.map((e: { key: { s: string }; value: number }) => [e.key.s, e.value]));
    // independent count with packages/formats
    const file = openTraceDatFile(traceDat);
    const want = new Map<string, number>();
    try {
      const reader = file.reader.records();
      for (let rec = reader.next(); rec; rec = reader.next()) {
        const f = rec.format;
        if (f?.name !== 'sched_switch') continue;
        const comm = readFieldString(rec.view, rec.recordOffset, rec.recordLength, findField(f, 'next_comm')!);
        want.set(comm, (want.get(comm) ?? 0) + 1);
      }
    } finally {
      file.close();
    }
    expect(want.size).toBeGreaterThan(5);
    expect(got).toEqual(want);
  });

  it.skipIf(!existsSync(traceDat))('refuses a program whose event the feed lacks (exit 1)', async () => {
    const r = await cli('run', example('forkcomm'), '--feed', traceDat);
    expect(r.code).toBe(1);
    expect(r.err).toContain('event-missing: count_forks: event sched/sched_process_fork is not in this partial profile');
  });
});
const canTraceLive = process.getuid?.() === 0 && existsSync('/sys/kernel/tracing/events/raw_syscalls');
if (!canTraceLive) console.log('probeyard run --feed live test skipped: needs root and a mounted tracefs with raw_syscalls');

describe.skipIf(!canTraceLive)('probeyard run --feed live', () => {
  it('relocates for this machine, counts syscalls for a second, and never faults', async () => {
    const r = await cli('run', example('syscount'), '--feed', 'live', '--duration', '1', '--json');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.verdict.status).toBe('compatible');
    expect(j.records).toBeGreaterThan(0);
    expect(j.counters[0].faults).toBe(0);
    expect(j.maps[0].entries.length).toBeGreaterThan(0);
  }, 180_000);
});
if (!existsSync(traceDat)) console.log(`probeyard run tests on the corpus skipped: ${traceDat} is absent`);
