// Benchmarks of the binary trace side on real trace.dat files, side by side in one run:
//  - decode: records per second, no text (zstd decompression included — libzstd in WebAssembly,
//    and the pure-JS fzstd for comparison — then excluded: pages only)
//  - text: `probeyard report` rendering vs `trace-cmd report FILE > /dev/null` (spawned, timed),
//    alternated, best of each
// Run: pnpm --filter @probeyard/formats bench [--no-text] [--runs=N] [FILE...]
// Default files: the corpus big.dat (2.76 M events) when present, else the small fixtures.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, writeSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventFormat } from '../src/event-format/event-format.js';
import { openTraceDatFile } from '../src/node/trace-dat-file.js';
import { writeTraceDatReport } from '../src/node/report.js';
import { formatRecord, formatRecordRaw } from '../src/print-fmt/format-record.js';
import { compileRecordWriter } from '../src/print-fmt/record-writer.js';
import { PageReader } from '../src/ring-buffer/page.js';
import { Cursor } from '../src/trace-dat/cursor.js';
import { decompressBlock, loadZstdWasm, useZstdWasm } from '../src/trace-dat/decompress.js';
import { reportChunks } from '../src/trace-dat/report.js';

const args = process.argv.slice(2);
const withText = !args.includes('--no-text');
const textRuns = Number(args.find((a) => a.startsWith('--runs='))?.slice(7) ?? 2);
const wasm = await loadZstdWasm();
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
console.log(`zstd: ${wasm ? 'libzstd in WebAssembly (zstddec)' : 'fzstd (pure JS; WebAssembly unavailable)'}`);

const fmt = (n: number) => (n >= 1e6 ? `${(n / 1e6).toFixed(2)} M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} k` : `${n.toFixed(0)} `);
/** Best wall time and best CPU time (user + system, this process) of `runs` runs. */
function best<T>(runs: number, f: () => T): { ms: number; cpuMs: number; value: T } {
  let ms = Infinity;
  let cpuMs = Infinity;
  let value!: T;
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    value = f();
    ms = Math.min(ms, performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpuMs = Math.min(cpuMs, (c.user + c.system) / 1000);
  }
  return { ms, cpuMs, value };
}

for (const path of files) {
  console.log(`\n${path}`);
  const file = openTraceDatFile(path);
  const { dat } = file.reader;
  const bytes = dat.buffers.reduce((a, b) => a + b.cpus.reduce((x, c) => x + c.byteLength, 0), 0);
  console.log(`  file version ${dat.version}, ${dat.compression?.name ?? 'uncompressed'}, buffers ${dat.buffers.map((b) => `'${b.name}'`).join(' ')}, ${(bytes / 2 ** 20).toFixed(1)} MiB of CPU data`);

  // 1. Everything a consumer gets: decompress, decode, merge CPUs, look up formats.
  const decodeAll = () => {
    const it = file.reader.records();
    let n = 0;
    while (it.next()) n++;
    return n;
  };
  const all = best(5, decodeAll);
  const compressed = dat.compression && dat.compression.name !== 'none';
  const zstdName = wasm ? 'libzstd/wasm' : 'fzstd';
  console.log(`  decode, merged, with decompression${dat.compression?.name === 'zstd' ? ` (${zstdName})` : ''}: ${fmt(all.value)}records in ${all.ms.toFixed(0)} ms = ${fmt((all.value / all.ms) * 1000)}records/s (target >= 5 M/s); per CPU second: ${fmt((all.value / all.cpuMs) * 1000)}records/s`);
  if (wasm && dat.compression?.name === 'zstd') {
    useZstdWasm(false);
    const js = best(1, decodeAll);
    useZstdWasm(true);
    console.log(`  decode, merged, with fzstd (pure JS):  ${fmt(js.value)}records in ${js.ms.toFixed(0)} ms = ${fmt((js.value / js.ms) * 1000)}records/s (${(js.ms / all.ms).toFixed(1)}x slower)`);
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
  const mibs = (m: { value: number; ms: number }) => `${(m.value / 2 ** 20).toFixed(0)} MiB in ${m.ms.toFixed(0)} ms = ${((m.value / 2 ** 20 / m.ms) * 1000).toFixed(0)} MiB/s`;
  if (compressed) {
    console.log(`  ${dat.compression!.name} decompression alone${dat.compression!.name === 'zstd' ? ` (${zstdName})` : ''}: ${mibs(inflate)}`);
    if (wasm && dat.compression!.name === 'zstd') {
      useZstdWasm(false);
      const js = best(1, () => inflateAll(false));
      useZstdWasm(true);
      console.log(`  zstd decompression alone (fzstd):      ${mibs(js)}`);
    }
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

  // 3. Text: probeyard report vs trace-cmd report, both to nowhere, alternated (the machine is
  // shared: the best of each is the fairest figure).
  if (withText) {
    const render = (compileWriter: typeof compileRecordWriter | undefined) => {
      // As `probeyard report` does it (zstd chunks decompressed on this thread by libzstd/wasm).
      const f = openTraceDatFile(path, { prefetch: true });
      let chars = 0;
      for (const chunk of reportChunks<EventFormat>(f.reader, { formatRecord, formatRecordRaw, compileWriter })) chars += chunk.length;
      f.close();
      return chars;
    };
    const traceCmdMs = () => {
      const t0 = performance.now();
      const r = spawnSync('sh', ['-c', 'trace-cmd report "$1" > /dev/null 2>&1', 'sh', path], { stdio: 'ignore' });
      return r.status === 0 ? performance.now() - t0 : Number.NaN;
    };
    let ours = { ms: Infinity, value: 0 };
    let theirs = Infinity;
    let toDevNull = Infinity;
    for (let i = 0; i < textRuns; i++) {
      const o = best(1, () => render(compileRecordWriter));
      if (o.ms < ours.ms) ours = o;
      if (traceCmdVersion) theirs = Math.min(theirs, traceCmdMs());
      // The whole `probeyard report FILE > /dev/null` path: chunks written to a file descriptor.
      const fd = openSync('/dev/null', 'w');
      const t0 = performance.now();
      await writeTraceDatReport(path, {}, (chunk) => {
        writeSync(fd, chunk);
      });
      toDevNull = Math.min(toDevNull, performance.now() - t0);
      closeSync(fd);
    }
    const lines = all.value;
    console.log(`  text, probeyard report (rendering):  ${(ours.value / 2 ** 20).toFixed(0)} MiB of text in ${ours.ms.toFixed(0)} ms = ${fmt((lines / ours.ms) * 1000)}lines/s, ${((ours.ms * 1000) / lines).toFixed(2)} µs/line`);
    console.log(`  text, probeyard report > /dev/null:  ${toDevNull.toFixed(0)} ms (writeTraceDatReport, fs.writeSync)`);
    const general = best(1, () => render(undefined));
    console.log(`  text, formatRecord for every record: ${general.ms.toFixed(0)} ms (no compiled byte writer; for comparison)`);
    if (traceCmdVersion && Number.isFinite(theirs)) {
      console.log(`  text, trace-cmd report > /dev/null:  ${theirs.toFixed(0)} ms`);
      console.log(`  ratio probeyard / trace-cmd:         ${(ours.ms / theirs).toFixed(2)} rendering, ${(toDevNull / theirs).toFixed(2)} to /dev/null (below 1 = probeyard faster)`);
    } else if (traceCmdVersion) {
      console.log('  text, trace-cmd report: failed');
    }
  }
  file.close();
}
