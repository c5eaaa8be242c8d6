// The bundled kernels (kernels/<id>/events) are unchanged copies of the corpus' format files, and
// the verdicts the catalog computes on them are the verdicts on the corpus' whole profiles
// (skipped, saying why, without ../shared/corpus); packages/compat's fixture kernels (subsets of
// three of them) give the same verdicts where they hold a program's events; this machine's live
// tracefs gives the 6.18.44 column (skipped without a readable tracefs of that kernel).
import { existsSync, readFileSync } from 'node:fs';
import { release } from 'node:os';
import { join } from 'node:path';
import { checkCompat, profileOfFiles } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { readTar } from '@probeyard/formats';
import { describe, expect, it } from 'vitest';
import { type Catalog, attachEvents, libraryEvents, librarySpec } from '../src/catalog.js';
import { verdictCell } from '../src/cell.js';
import { bundledKernelFiles, libraryKernels } from '../src/kernels.js';
import { catalogPath, corpusDir, libraryDir } from '../src/paths.js';
import { libraryPrograms } from '../src/programs.js';

const catalog = JSON.parse(readFileSync(catalogPath, 'utf8')) as Catalog;
const corpusPresent = libraryKernels.every((k) => existsSync(join(corpusDir, k.corpus)));
if (!corpusPresent) console.log(`library kernels vs corpus skipped: ${corpusDir} lacks the kernel format sets`);

function corpusFiles(corpus: string): Map<string, string> {
  const source = join(corpusDir, corpus);
  const files = new Map<string, string>();
  if (source.endsWith('.tar.gz')) {
    for (const f of readTar(new Uint8Array(readFileSync(source)))) files.set(f.path.replace(/^(\.\/)?events\//, ''), new TextDecoder().decode(f.bytes));
  }
  return files;
}

describe.skipIf(!corpusPresent).each(libraryKernels.map((k) => [k.id, k] as const))('%s against the corpus', (_, kernel) => {
  it('holds the corpus format file of every library event the kernel has, byte for byte', async () => {
    const events = await libraryEvents();
    const tar = corpusFiles(kernel.corpus);
    const read = (rel: string) => (tar.size > 0 ? tar.get(rel) : existsSync(join(corpusDir, kernel.corpus, rel)) ? readFileSync(join(corpusDir, kernel.corpus, rel), 'utf8') : undefined);
    const expected = ['header_page', 'header_event', ...events.map((e) => `${e}/format`)].flatMap((path) => {
      const text = read(path);
      return text === undefined ? [] : [{ path, text }];
    });
    expect(bundledKernelFiles(kernel, events)).toEqual(expected);
  });

  it("gives every program the verdict it has on the corpus' whole profile", async () => {
    const whole = await readProfile(join(corpusDir, kernel.corpus), { release: kernel.release });
    expect(whole.events.size).toBeGreaterThan(300);
    for (const p of libraryPrograms) {
      const cell = verdictCell(checkCompat(await librarySpec(p.name), whole));
      expect([p.name, cell]).toEqual([p.name, catalog.programs.find((c) => c.name === p.name)!.compat[kernel.id]!.cell]);
    }
  });
});

describe("packages/compat's fixture kernels", () => {
  const fixtures = join(libraryDir, '..', 'packages', 'compat', 'test', 'fixtures', 'formats');
  it.each([
    ['linux-6.18', 'linux-6.18.44'],
    ['android-3.10.49', 'android-3.10.49'],
    ['android-3.4.0', 'android-3.4.0'],
  ])('%s: the catalog verdict where it has the events; where not, its missing programs skipped or unknown', async (fixture, kernel) => {
    // the fixtures hold a few events of each kernel: partial profiles, where a missing event is unknown
    const profile = await readProfile(join(fixtures, fixture), { release: kernel.replace(/^\w+-/, ''), complete: false });
    let compared = 0;
    for (const p of libraryPrograms) {
      const spec = await librarySpec(p.name);
      const v = checkCompat(spec, profile);
      const has = attachEvents(spec).every((e) => profile.events.has(e));
      const expected = catalog.programs.find((c) => c.name === p.name)!.compat[kernel]!;
      if (has) compared++;
      if (has) expect([p.name, verdictCell(v)]).toEqual([p.name, expected.cell]);
      else {
        // optional programs: those whose event is missing are skipped when the others run
        const missing = spec.programs.filter((x) => x.attach.kind === 'tracepoint' && !profile.events.has(`${x.attach.system}/${x.attach.event}`)).map((x) => x.name);
        expect([p.name, v.status === 'unknown' ? [] : v.skipped]).toEqual([p.name, v.status === 'unknown' ? [] : missing]);
      }
    }
    expect(compared).toBeGreaterThan(0);
  });
});

const liveRoot = '/sys/kernel/tracing/events';
const live = existsSync(join(liveRoot, 'header_page')) && release().startsWith('6.18.44');
if (!live) console.log(`library live-kernel column skipped: no readable tracefs of a 6.18.44 kernel here (release ${release()})`);

describe.skipIf(!live)("this machine's tracefs", () => {
  it('gives the linux 6.18.44 column', async () => {
    const events = await libraryEvents();
    const files = ['header_page', 'header_event', ...events.map((e) => `${e}/format`)]
      .filter((p) => existsSync(join(liveRoot, p)))
      .map((path) => ({ path, text: readFileSync(join(liveRoot, path), 'utf8') }));
    const profile = await profileOfFiles(files, { release: release() });
    for (const p of libraryPrograms) {
      const cell = verdictCell(checkCompat(await librarySpec(p.name), profile));
      expect([p.name, cell]).toEqual([p.name, catalog.programs.find((c) => c.name === p.name)!.compat['linux-6.18.44']!.cell]);
    }
  });
});
