// Benchmarks of the binary trace side on real trace.dat files, side by side in one run:
//  - decode: records per second, no text (zstd decompression included, then excluded: pages only)
//  - text: `probeyard report` rendering vs `trace-cmd report FILE > /dev/null` (spawned, timed)
// Run: pnpm --filter @probeyard/formats bench [--no-text] [FILE...]
// Default files: the corpus big.dat (2.76 M events) when present, else the small fixtures.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventFormat } from '../src/event-format/event-format.js';
import { openTraceDatFile } from '../src/node/trace-dat-file.js';
import { formatRecord, formatRecordRaw } from '../src/print-fmt/format-record.js';
import { PageReader } from '../src/ring-buffer/page.js';
import { Cursor } from '../src/trace-dat/cursor.js';
import { decompressBlock } from '../src/trace-dat/decompress.js';
import { reportChunks } from '../src/trace-dat/report.js';

const args = process.argv.slice(2);
const withText = !args.includes('--no-text');
const here = dirname(fileURLToPath(import.meta.url));
const corpus = join(here, '../../../../shared/corpus/trace-dat');
const fixtures = join(here, '../test/fixtures/trace-dat');
let files = args.filter((a) => !a.startsWith('--'));
if (files.length === 0) {
  files = existsSync(join(corpus, 'big/big.dat'))
    ? [join(corpus, 'big/big.dat'), join(corpus, 'trace.dat')]
    : [join(fixtures, 'small_v7_zstd.dat'), join(fixtures, 'small_v6.dat')];
}

const cpu = cpus()[0];
const mhz = cpu?.speed ? ` @ ${cpu.speed} MHz` : '';
console.log(`machine: ${cpu?.model ?? 'unknown cpu'} x${cpus().length}${mhz}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Linux ${release()}, node ${process.version}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
const traceCmd = spawnSync('trace-cmd', ['--version'], { encoding: 'utf8' });
const traceCmdVersion = traceCmd.status === null || traceCmd.error ? undefined : /trace-cmd version (\S+)/.exec(traceCmd.stdout + traceCmd.stderr)?.[1];
console.log(traceCmdVersion ? `trace-cmd ${traceCmdVersion}` : 'trace-cmd: not installed (text comparison skipped)');

const fmt = (n: number) => (n >= 1e6 ? `${(n / 1e6).toFixed(2)} M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} k` : `${n.toFixed(0)} `);
function best<T>(runs: number, f: () => T): { ms: number; value: T } {
  let ms = Infinity;
  let value!: T;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    value = f();
    ms = Math.min(ms, performance.now() - t0);
  }
  return { ms, value };
}

for (const path of files) {
  console.log(`\n${path}`);
  const file = openTraceDatFile(path);
  const { dat } = file.reader;
  const bytes = dat.buffers.reduce((a, b) => a + b.cpus.reduce((x, c) => x + c.byteLength, 0), 0);
  console.log(`  file version ${dat.version}, ${dat.compression?.name ?? 'uncompressed'}, buffers ${dat.buffers.map((b) => `'${b.name}'`).join(' ')}, ${(bytes / 2 ** 20).toFixed(1)} MiB of CPU data`);

  // 1. Everything a consumer gets: decompress, decode, merge CPUs, look up formats.
  const all = best(3, () => {
    const it = file.reader.records();
    let n = 0;
    while (it.next()) n++;
    return n;
  });
  console.log(`  decode, merged, with decompression:  ${fmt(all.value)}records in ${all.ms.toFixed(0)} ms = ${fmt((all.value / all.ms) * 1000)}records/s`);
  if (dat.compression && dat.compression.name !== 'none') {
    const pf = best(3, () => {
      const f = openTraceDatFile(path, { prefetch: true });
      const it = f.reader.records();
      let n = 0;
      while (it.next()) n++;
      f.close();
      return n;
    });
    console.log(`  decode, merged, decompression on a worker: ${fmt(pf.value)}records in ${pf.ms.toFixed(0)} ms = ${fmt((pf.value / pf.ms) * 1000)}records/s`);
  }

  // 2. The page decoder alone, on pages decompressed beforehand (one core, no BigInt, no allocation).
  const pages: Uint8Array[] = [];
  const inflateAll = (keep: boolean) => {
    let total = 0;
    for (const b of dat.buffers) {
      for (const c of b.cpus) {
        if (c.byteLength === 0) continue;
        if (!b.compressed) {
          const p = dat.source.read(c.byteOffset, c.byteLength);
          total += p.length;
          if (keep) pages.push(p);
          continue;
        }
        const cur = new Cursor(dat.source, dat.littleEndian, 0, 'bench', c.byteOffset);
        for (let n = cur.u32(); n > 0; n--) {
          const comp = cur.u32();
          const size = cur.u32();
          const p = decompressBlock(dat.compression!.name, cur.bytes(comp, 'chunk'), size, 0, 'bench');
          total += p.length;
          if (keep) pages.push(p);
        }
      }
    }
    return total;
  };
  const inflate = best(2, () => inflateAll(false));
  inflateAll(true);
  if (dat.compression && dat.compression.name !== 'none') {
    console.log(`  ${dat.compression.name} decompression alone:        ${(inflate.value / 2 ** 20).toFixed(0)} MiB in ${inflate.ms.toFixed(0)} ms = ${((inflate.value / 2 ** 20 / inflate.ms) * 1000).toFixed(0)} MiB/s`);
  }
  const pageReader = new PageReader(dat.headerPage, dat.littleEndian);
  const size = dat.headerPage.subBufferSize;
  const decode = best(5, () => {
    let n = 0;
    for (const p of pages) {
      const view = new DataView(p.buffer, p.byteOffset, p.byteLength);
      for (let off = 0; off + size <= p.length; off += size) {
        pageReader.load(p, view, off, size);
        while (pageReader.next()) n++;
      }
    }
    return n;
  });
  console.log(`  decode, pages only (target >= 5 M/s): ${fmt(decode.value)}records in ${decode.ms.toFixed(0)} ms = ${fmt((decode.value / decode.ms) * 1000)}records/s per core`);

  // 3. Text: probeyard report vs trace-cmd report, both to nowhere.
  if (withText) {
    const text = best(1, () => {
      // As `probeyard report` does it: chunks decompressed on a worker thread ahead of rendering.
      const f = openTraceDatFile(path, { prefetch: true });
      let chars = 0;
      for (const chunk of reportChunks<EventFormat>(f.reader, { formatRecord, formatRecordRaw })) chars += chunk.length;
      f.close();
      return chars;
    });
    console.log(`  text, probeyard report:              ${(text.value / 2 ** 20).toFixed(0)} MiB of text in ${text.ms.toFixed(0)} ms = ${fmt((all.value / text.ms) * 1000)}lines/s`);
    if (traceCmdVersion) {
      const t0 = performance.now();
      const r = spawnSync('sh', ['-c', 'trace-cmd report "$1" > /dev/null 2>&1', 'sh', path], { stdio: 'ignore' });
      const ms = performance.now() - t0;
      if (r.status === 0) {
        console.log(`  text, trace-cmd report > /dev/null:  ${ms.toFixed(0)} ms`);
        console.log(`  ratio probeyard / trace-cmd:         ${(text.ms / ms).toFixed(2)} (below 1 = probeyard faster)`);
      } else {
        console.log(`  text, trace-cmd report: failed (exit ${r.status})`);
      }
    }
  }
  file.close();
}
