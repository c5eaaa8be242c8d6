// Writes library/catalog.json and the generated sections of library/README.md from the committed
// objects and the bundled kernels; with --kernels, first copies the bundled kernels' format files
// from the corpus (../shared/corpus), unchanged.
//
//   pnpm --filter @probeyard/library catalog [--kernels]
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readTar } from '@probeyard/formats';
import { catalogPath, computeCatalog, corpusDir, formatCatalog, kernelsDir, libraryEvents, libraryKernels, readmePath, readmeSections, replaceSections } from '../src/index.js';

if (process.argv.includes('--kernels')) {
  const events = await libraryEvents();
  const wanted = new Set(['header_page', 'header_event', ...events.map((e) => `${e}/format`)]);
  for (const k of libraryKernels) {
    const source = join(corpusDir, k.corpus);
    if (!existsSync(source)) throw new Error(`write-catalog --kernels: ${source} is absent`);
    const files = new Map<string, string>();
    if (source.endsWith('.tar.gz')) {
      for (const f of readTar(new Uint8Array(readFileSync(source)))) {
        const rel = f.path.replace(/^(\.\/)?events\//, '');
        if (wanted.has(rel)) files.set(rel, new TextDecoder().decode(f.bytes));
      }
    } else {
      for (const rel of wanted) if (existsSync(join(source, rel))) files.set(rel, readFileSync(join(source, rel), 'utf8'));
    }
    const dir = join(kernelsDir, k.id, 'events');
    rmSync(dir, { recursive: true, force: true }); // README.md and LICENSE-perfetto sit beside the kernel folders
    for (const [rel, text] of files) {
      mkdirSync(dirname(join(dir, rel)), { recursive: true });
      writeFileSync(join(dir, rel), text);
    }
    console.log(`${k.id}: ${files.size} files from ${k.corpus}`);
  }
}

const catalog = await computeCatalog();
writeFileSync(catalogPath, formatCatalog(catalog));
writeFileSync(readmePath, replaceSections(readFileSync(readmePath, 'utf8'), readmeSections(catalog)));
console.log(`catalog.json and README.md: ${catalog.programs.length} programs × ${catalog.kernels.length} kernels`);
