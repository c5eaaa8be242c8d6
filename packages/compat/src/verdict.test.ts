import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEventFormat } from '@probeyard/formats';
import { describe, expect, it } from 'vitest';
import { exampleSpec, fixtureFormat, fixtureProfile, fixturesDir, type FixtureKernel } from '../test/fixtures.js';
import { profileOfFiles, profileOfTraceDat } from './kernel-profile.js';
import { layoutHash, layoutOf } from './event-layout.js';
import { buildManifest, formatManifest } from './manifest.js';
import { readProgramSpec } from './program-spec.js';
import { checkCompat, formatVerdict, verdictSummary } from './verdict.js';

const asm = (text: string, buildFormats = [] as ReturnType<typeof fixtureFormat>[]) => readProgramSpec(new TextEncoder().encode(text), { buildFormats });

/** Reads next_pid at a hard-coded offset (the 6.18 layout), no symbols, no CO-RE. */
const pinnedSource = `.section tracepoint/sched/sched_switch
  r0 = *(u32 *)(r1 + 56)
  exit
`;

describe('checkCompat on the fixture kernels', () => {
  it.each([
    ['syscount', 'linux-6.18', 'compatible'],
    ['syscount', 'android-3.10.49', 'relocated'],
    ['syscount', 'android-3.4.0', 'unknown'],
    ['execsnoop', 'android-3.4.0', 'relocated'],
    ['runqlat', 'linux-6.18', 'relocated'],
    ['runqlat', 'android-3.10.49', 'relocated'],
    ['switchcomm', 'android-3.4.0', 'compatible'],
    ['forkcomm', 'android-3.10.49', 'compatible'],
    ['forkcomm', 'linux-6.18', 'incompatible'],
  ] as const)('%s on %s is %s', async (name, kernel, status) => {
    expect(checkCompat(await exampleSpec(name), await fixtureProfile(kernel as FixtureKernel)).status).toBe(status);
  });

  it('gives the reason as data and text', async () => {
    const v = checkCompat(await exampleSpec('forkcomm'), await fixtureProfile('linux-6.18'));
    expect(v.reasons).toEqual([
      expect.objectContaining({ kind: 'became-dynamic', program: 'count_forks', event: 'sched/sched_process_fork', field: 'parent_comm', insnIndex: 4 }),
    ]);
    expect(v.relocated).toBeUndefined();
    expect(formatVerdict(v)).toBe(
      'incompatible\n  became-dynamic: count_forks: parent_comm: was char[16], is __data_loc on this kernel (insn 4 is reachable)\n',
    );
  });

  it('a summary is JSON-safe and loses nothing of status and reasons', async () => {
    const v = checkCompat(await exampleSpec('forkcomm'), await fixtureProfile('linux-6.18'));
    const s = verdictSummary(v);
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
    expect(s).toMatchObject({ status: 'incompatible', reasons: v.reasons, profile: { hash: v.profile.hash } });
  });

  it('unknown names the missing event (a partial profile: the fixtures hold a few events each)', async () => {
    const v = checkCompat(await exampleSpec('syscount'), await fixtureProfile('android-3.4.0'));
    expect(v.reasons).toEqual([expect.objectContaining({ kind: 'event-missing', event: 'raw_syscalls/sys_enter' })]);
    expect(v.profile.complete).toBe(false);
    expect(formatVerdict(v)).toBe('unknown\n  event-missing: count_syscalls: event raw_syscalls/sys_enter is not in this partial profile (the kernel may have it)\n');
  });

  it('a field read without an exists guard that vanished: field-missing', async () => {
    const spec = await asm(`.section tracepoint/sched/sched_wakeup\n  r0 = *(u32 *)(r1 + sched_wakeup.success)\n  exit\n`, [fixtureFormat('android-3.10.49', 'sched/sched_wakeup')]);
    const v = checkCompat(spec, await fixtureProfile('linux-6.18'));
    expect(v.status).toBe('incompatible');
    expect(v.reasons[0]).toMatchObject({ kind: 'field-missing', field: 'success', insnIndex: 0 });
    expect(v.reasons[0]!.diagnostics![0]!.message).toBe('invalid func unknown#195896080');
  });

  it('a program the verifier refuses on its own: verifier-rejected with the diagnostic', async () => {
    const spec = await asm(`.section tracepoint/sched/sched_switch\n  r0 = *(u32 *)(r1 + sched_switch.next_pid)\n  r0 += r5\n  exit\n`);
    const v = checkCompat(spec, await fixtureProfile('linux-6.18'));
    expect(v.status).toBe('incompatible');
    expect(v.reasons[0]).toMatchObject({ kind: 'verifier-rejected', insnIndex: 1 });
    expect(v.reasons[0]!.text).toMatch(/^sched_switch: verifier: insn 1 \(r0 \+= r5\): /);
  });
});

describe('layout-pinned programs', () => {
  it('the manifest marks unnamed hard-coded reads', async () => {
    const m = buildManifest(await asm(pinnedSource));
    expect(m.layoutPinned).toBe(true);
    expect(m.pinned).toEqual([{ program: 'sched_switch', event: 'sched/sched_switch', insnIndex: 0, byteOffset: 56, size: 4 }]);
    expect(formatManifest(m)).toContain('layout-pinned reads (hard-coded offsets, no build-time format):\n  sched_switch insn 0: sched/sched_switch offset 56, size 4');
  });

  it('is refused on every kernel whose layout differs, naming the field; runs where it is identical', async () => {
    const spec = await asm(pinnedSource);
    spec.pinnedLayouts['sched/sched_switch'] = layoutHash(layoutOf(fixtureFormat('linux-6.18', 'sched/sched_switch')));
    expect(checkCompat(spec, await fixtureProfile('linux-6.18')).status).toBe('compatible');
    for (const kernel of ['android-3.10.49'] as const) {
      const v = checkCompat(spec, await fixtureProfile(kernel));
      expect(v.status).toBe('incompatible');
      expect(v.reasons).toEqual([expect.objectContaining({ kind: 'layout-pinned', field: 'next_prio', insnIndex: 0 })]);
      expect(v.reasons[0]!.text).toBe(
        "sched_switch: insn 0 reads offset 56, size 4 (next_prio on this kernel) by a hard-coded offset: this kernel's layout of sched/sched_switch differs from the pinned one",
      );
    }
  });

  it('without a pinned layout it is refused everywhere', async () => {
    const v = checkCompat(await asm(pinnedSource), await fixtureProfile('linux-6.18'));
    expect(v.status).toBe('incompatible');
    expect(v.reasons[0]!.text).toContain('(next_pid on this kernel) by a hard-coded offset: no build-time layout declared');
  });

  it('with a declared build-time format the same offsets are named by the verifier and relocated', async () => {
    const spec = await asm(pinnedSource, [fixtureFormat('linux-6.18', 'sched/sched_switch')]);
    const m = buildManifest(spec);
    expect(m.layoutPinned).toBe(false);
    expect(m.fields).toEqual([expect.objectContaining({ field: 'next_pid', source: 'verifier', byteOffset: 56, size: 4, signed: true })]);
    const v = checkCompat(spec, await fixtureProfile('android-3.10.49'));
    expect(v.status).toBe('relocated');
    expect(v.programs[0]!.changes).toEqual(['next_pid: offset 56 → 52']);
  });
});

describe('manifest', () => {
  it('lists attach points, fields with their sources, helpers and map types', async () => {
    const m = buildManifest(await exampleSpec('runqlat'));
    expect(m.tag).toBe('module-like, no ABI');
    expect(m.attachPoints).toEqual(['sched/sched_wakeup', 'sched/sched_switch']);
    expect(m.fields.map((f) => [f.program, f.insnIndex, f.event, f.field, f.kind, f.source, f.byteOffset, f.size, f.signed, f.flavor])).toEqual([
      ['on_wakeup', 0, 'sched/sched_wakeup', 'success', 'exists', 'core', 32, 4, true, 'old'],
      ['on_wakeup', 2, 'sched/sched_wakeup', 'success', 'byte-offset', 'core', 32, 4, true, 'old'],
      ['on_wakeup', 4, 'sched/sched_wakeup', 'pid', 'byte-offset', 'core', 24, 4, true, ''],
      ['on_switch', 0, 'sched/sched_switch', 'next_pid', 'byte-offset', 'core', 56, 4, true, ''],
    ]);
    expect(m.helpers.map((h) => h.name)).toEqual(['map_lookup_elem', 'map_update_elem', 'map_delete_elem', 'ktime_get_ns']);
    expect(m.mapTypes).toEqual(['array', 'hash']);
    expect(m.layoutPinned).toBe(false);
  });

  it('names __data_loc reads and assembly symbols', async () => {
    const m = buildManifest(await exampleSpec('execsnoop'));
    expect(m.fields).toEqual([expect.objectContaining({ field: 'filename', dataLoc: true, byteOffset: 8, size: 4, source: 'core' })]);
    const a = buildManifest(await asm(`.section tracepoint/sched/sched_switch\n  r0 = *(u32 *)(r1 + sched_switch.next_pid)\n  exit\n`));
    expect(a.fields).toEqual([expect.objectContaining({ field: 'next_pid', source: 'asm', byteOffset: undefined })]);
  });

  it('the spec carries map key and value types from BTF', async () => {
    const spec = await exampleSpec('switchcomm');
    expect(spec.maps[0]).toMatchObject({ name: 'switches', typeName: 'hash', keySize: 16, valueSize: 8, keyType: { kind: 'struct', fields: [{ name: 's', offset: 0, type: { kind: 'string', size: 16 } }] }, valueType: { kind: 'int', size: 8, signed: false } });
    expect(spec.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(spec.license).toBe('GPL');
  });
});

const fixtureFiles = (kernel: FixtureKernel, events: string[]) =>
  ['header_page', ...events.map((e) => `${e}/format`)].map((path) => ({ path, text: readFileSync(join(fixturesDir, 'formats', kernel, path), 'utf8') }));

describe('complete and partial profiles', () => {
  // android-3.4.0 has no raw_syscalls (the whole corpus dump lacks it): as a complete profile that is a fact
  it.each([
    [true, 'incompatible', 'count_syscalls: event raw_syscalls/sys_enter does not exist on this kernel (complete profile)'],
    [false, 'unknown', 'count_syscalls: event raw_syscalls/sys_enter is not in this partial profile (the kernel may have it)'],
  ] as const)('a missing attach event on complete=%s is %s', async (complete, status, text) => {
    const profile = await profileOfFiles(fixtureFiles('android-3.4.0', ['sched/sched_switch']), { release: '3.4.0', complete });
    const v = checkCompat(await exampleSpec('syscount'), profile);
    expect(v.status).toBe(status);
    expect(v.reasons).toEqual([expect.objectContaining({ kind: 'event-missing', event: 'raw_syscalls/sys_enter', text })]);
    expect(v.profile).toMatchObject({ release: '3.4.0', complete });
    expect(verdictSummary(v).profile.complete).toBe(complete);
  });

  it('a trace.dat is partial whatever it is told; a folder or file list complete unless marked', async () => {
    const dat = await profileOfTraceDat({ eventFormats: [], headerPageText: fixtureFiles('linux-6.18', [])[0]!.text, headerEventText: '', uname: undefined, longSize: 8 });
    expect(dat.complete).toBe(false);
    expect((await profileOfFiles(fixtureFiles('linux-6.18', ['sched/sched_switch']))).complete).toBe(true);
    expect((await profileOfFiles(fixtureFiles('linux-6.18', ['sched/sched_switch']), { complete: false })).complete).toBe(false);
  });

  it('a reachable read of another event the profile lacks: incompatible on a complete profile, unknown on a partial one', async () => {
    const spec = await asm(`.section tracepoint/sched/sched_switch\n  r0 = *(u32 *)(r1 + sched_wakeup.pid)\n  exit\n`, [fixtureFormat('linux-6.18', 'sched/sched_wakeup')]);
    for (const [complete, status] of [[true, 'incompatible'], [false, 'unknown']] as const) {
      const v = checkCompat(spec, await profileOfFiles(fixtureFiles('linux-6.18', ['sched/sched_switch']), { complete }));
      expect([complete, v.status, v.reasons.map((r) => r.kind)]).toEqual([complete, status, ['event-missing']]);
    }
  });
});

// test/fixtures/signedness: jbd2_start_commit of two kernels, copied unchanged from the corpus
const jbd2Text = (kernel: 'android-3.10.49' | 'linux-6.18') => readFileSync(join(fixturesDir, 'signedness', `${kernel}-jbd2_start_commit.format`), 'utf8');
const jbd2Format = (kernel: 'android-3.10.49' | 'linux-6.18') => parseEventFormat(jbd2Text(kernel), { system: 'jbd2' });
const jbd2Profile = (kernel: 'android-3.10.49' | 'linux-6.18') =>
  profileOfFiles([...fixtureFiles(kernel, []), { path: 'jbd2/jbd2_start_commit/format', text: jbd2Text(kernel) }], { complete: false });

describe('signedness changes', () => {
  // jbd2_start_commit: `int transaction` (signed:1) on 3.10.49, `tid_t transaction` (signed:0) on 6.18
  const negativeCheck = `.section tracepoint/jbd2/jbd2_start_commit
  r0 = *(u32 *)(r1 + jbd2_start_commit.transaction)
  r0 <<= 32
  r0 s>>= 32
  if r0 s< 0 goto +1
  r0 = 1
  exit
`;

  it('a read of a field that became unsigned is incompatible: signedness-changed, with the types', async () => {
    const spec = await asm(negativeCheck, [jbd2Format('android-3.10.49')]);
    expect(checkCompat(spec, await jbd2Profile('android-3.10.49')).status).toBe('compatible');
    const v = checkCompat(spec, await jbd2Profile('linux-6.18'));
    expect(v.status).toBe('incompatible');
    expect(v.relocated).toBeUndefined();
    expect(v.reasons).toEqual([
      {
        kind: 'signedness-changed',
        program: 'jbd2_start_commit',
        event: 'jbd2/jbd2_start_commit',
        field: 'transaction',
        insnIndex: 0,
        text: 'jbd2_start_commit: transaction: built signed, unsigned (tid_t) on this kernel: comparisons and sign extension of it change meaning (insn 0)',
      },
    ]);
  });

  it('and the reverse: built for the unsigned field, run where it is signed', async () => {
    const spec = await asm(negativeCheck, [jbd2Format('linux-6.18')]);
    const v = checkCompat(spec, await jbd2Profile('android-3.10.49'));
    expect([v.status, v.reasons[0]?.text]).toEqual(['incompatible', 'jbd2_start_commit: transaction: built unsigned, signed (int) on this kernel: comparisons and sign extension of it change meaning (insn 0)']);
  });

  it('a field read by name without a build-time layout has no signedness to compare', async () => {
    const v = checkCompat(await asm(negativeCheck), await jbd2Profile('linux-6.18'));
    expect(v.reasons.filter((r) => r.kind === 'signedness-changed')).toEqual([]);
  });

  // `char sync_commit` is signed:0 on both kernels (6.2+ builds with -funsigned-char); an x86
  // kernel before 6.2 printed signed:1: the same format file with that one change
  const signedCharFormat = () => {
    const text = jbd2Text('linux-6.18');
    const changed = text.replace('field:char sync_commit;\toffset:12;\tsize:1;\tsigned:0;', 'field:char sync_commit;\toffset:12;\tsize:1;\tsigned:1;');
    expect(changed).not.toBe(text);
    return parseEventFormat(changed, { system: 'jbd2' });
  };

  it('plain char is lenient by default; strictCharSign refuses it', async () => {
    const spec = await asm(`.section tracepoint/jbd2/jbd2_start_commit\n  r0 = *(u8 *)(r1 + jbd2_start_commit.sync_commit)\n  exit\n`, [signedCharFormat()]);
    const profile = await jbd2Profile('linux-6.18');
    expect(checkCompat(spec, profile).status).toBe('compatible');
    const strict = checkCompat(spec, profile, { strictCharSign: true });
    expect(strict.status).toBe('incompatible');
    expect(strict.reasons).toEqual([expect.objectContaining({ kind: 'signedness-changed', field: 'sync_commit', text: expect.stringContaining('built signed, unsigned (char)') })]);
  });
});
