// Verdicts of every example program of examples/c against every kernel of the shared corpus,
// checked against the table in README.md (so the checked-in table is always true).
import { existsSync, readFileSync } from 'node:fs';
import { release } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KernelProfile } from '../src/kernel-profile.js';
import { readLiveProfile, readProfile } from '../src/node/read-profile.js';
import { readProgramSpec } from '../src/program-spec.js';
import { checkCompat } from '../src/verdict.js';
import { androidDir, cell, corpusKernels, examples, linuxTarball } from './corpus-table.js';
import { exampleSpec } from './fixtures.js';

const present = existsSync(androidDir) && existsSync(linuxTarball);
if (!present) console.log(`compat corpus test skipped: ${androidDir} or ${linuxTarball} is absent`);

function readmeTable(): Map<string, string[]> {
  const text = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
  const start = text.indexOf('<!-- verdict-table -->');
  const end = text.indexOf('<!-- /verdict-table -->');
  const rows = new Map<string, string[]>();
  for (const line of text.slice(start, end).split('\n')) {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (cells.length < 2 || cells[0] === 'program' || cells[0]!.startsWith('---')) continue;
    rows.set(cells[0]!.replace(/`/g, ''), cells.slice(1));
  }
  return rows;
}

describe.skipIf(!present)('verdicts on the corpus kernels', () => {
  const profiles = new Map<string, Promise<KernelProfile>>();
  const profile = (k: { path: string; release: string }) => {
    let p = profiles.get(k.path);
    if (!p) profiles.set(k.path, (p = readProfile(k.path, { release: k.release })));
    return p;
  };

  it('the README table has a row per example and a column per kernel', () => {
    const table = readmeTable();
    expect([...table.keys()]).toEqual(examples);
    for (const row of table.values()) expect(row.length).toBe(corpusKernels().length);
  });

  it.each(examples)('%s: every verdict is the one the README shows', async (name) => {
    const spec = await exampleSpec(name);
    const row = readmeTable().get(name)!;
    const got: string[] = [];
    for (const k of corpusKernels()) got.push(cell(checkCompat(spec, await profile(k))));
    expect(got).toEqual(row);
  });
});

const traceDat = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus', 'trace-dat', 'trace.dat');
const live = existsSync('/sys/kernel/tracing/events/header_page') && release().startsWith('6.18.44');
if (!live) console.log('compat live-kernel check skipped: no readable tracefs of a 6.18.44 kernel here');

describe.skipIf(!present || !live)('this machine, read live from tracefs', () => {
  // Read once, before the examples, with room for a loaded machine: 2,300 format files through
  // eventfs, which shares the kernel's event_mutex with every instance other tests create.
  let liveProfile: KernelProfile;
  beforeAll(async () => {
    const t0 = performance.now();
    liveProfile = await readLiveProfile();
    console.log(`live profile: ${liveProfile.formats.size} formats read from tracefs in ${Math.round(performance.now() - t0)} ms`);
  }, 180_000);
  it.each(examples)('%s: the live verdict is the README column of this kernel', async (name) => {
    const spec = await exampleSpec(name);
    const column = corpusKernels().length - 1;
    expect(cell(checkCompat(spec, liveProfile))).toBe(readmeTable().get(name)![column]);
  });
});

describe.skipIf(!existsSync(traceDat))('a trace.dat as the profile', () => {
  it('holds only the recorded events: runqlat is relocated, biolatency unknown', async () => {
    const profile = await readProfile(traceDat);
    expect(profile.source).toBe('trace.dat');
    expect(profile.release).toMatch(/^6\.18\.44/);
    expect(cell(checkCompat(await exampleSpec('runqlat'), profile))).toBe('relocated: no success');
    expect(cell(checkCompat(await exampleSpec('biolatency'), profile))).toBe('unknown: event-missing');
  });
});

const linuxDump = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus', 'tracefs', 'linux-6.18');
describe.skipIf(!existsSync(join(linuxDump, 'kernel_version.txt')))('a corpus dump folder', () => {
  it('is named by its kernel_version.txt (it holds selected events only: read as partial)', async () => {
    const profile = await readProfile(linuxDump, { complete: false });
    expect(profile).toMatchObject({ release: '6.18.44-fc-v782', complete: false, source: 'events-tree' });
  });
});

describe.skipIf(!present)('signedness on the corpus kernels', () => {
  // jbd2_start_commit.transaction: `int` on every Android kernel, `tid_t` (unsigned) on 6.18
  it('a check of `transaction < 0` built for an Android kernel runs on every Android kernel and is refused on 6.18', async () => {
    const kernels = corpusKernels();
    const built = await readProfile(kernels[0]!.path);
    const format = built.formats.get(built.events.get('jbd2/jbd2_start_commit')!)!;
    const source = `.section tracepoint/jbd2/jbd2_start_commit\n  r0 = *(u32 *)(r1 + jbd2_start_commit.transaction)\n  r0 <<= 32\n  r0 s>>= 32\n  if r0 s< 0 goto +1\n  r0 = 1\n  exit\n`;
    const spec = await readProgramSpec(new TextEncoder().encode(source), { buildFormats: [format] });
    const got: string[] = [];
    for (const k of kernels) got.push(cell(checkCompat(spec, await readProfile(k.path, { release: k.release }))));
    expect(got).toEqual([...kernels.slice(0, -1).map((k) => (k.release === '3.4.0' ? 'compatible' : 'relocated: transaction')), 'incompatible: signedness-changed transaction']);
  });
});
