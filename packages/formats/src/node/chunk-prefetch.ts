import { createRequire } from 'node:module';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { type BlockDecompressor, isZstdWasmLoaded } from '../trace-dat/decompress.js';
import { Cursor } from '../trace-dat/cursor.js';
import type { TraceDat } from '../trace-dat/trace-dat.js';

/** One compressed CPU data chunk: header offset (its identity), data offset and sizes. */
interface ChunkRef {
  at: number;
  dataAt: number;
  compressed: number;
  size: number;
}

// The worker: reads each chunk from the file, decompresses it, and posts the pages back, at most
// `window` chunks ahead of what the reading thread has received. Plain CommonJS (eval), so it runs
// the same from sources (tsx, vitest) and from the built package.
const workerSource = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { path, chunks, counters: shared, port, modulePath, algorithm, window } = workerData;
const counters = new Int32Array(shared);
const codec = require(modulePath);
const fd = fs.openSync(path, 'r');
try {
  for (const c of chunks) {
    while (Atomics.load(counters, 0) - Atomics.load(counters, 1) >= window) {
      Atomics.wait(counters, 1, Atomics.load(counters, 1), 50);
    }
    let out = null;
    try {
      const data = new Uint8Array(c.compressed);
      fs.readSync(fd, data, 0, c.compressed, c.dataAt);
      out = algorithm === 'zstd' ? codec.decompress(data, new Uint8Array(c.size)) : codec.unzlibSync(data, { out: new Uint8Array(c.size + 1) });
      if (out.length !== c.size) out = null;
    } catch { out = null; }
    port.postMessage({ at: c.at, out }, out ? [out.buffer] : []);
    Atomics.add(counters, 0, 1);
    Atomics.notify(counters, 0);
  }
} finally {
  fs.closeSync(fd);
  Atomics.store(counters, 2, 1);
  Atomics.notify(counters, 0);
}
`;

/** Chunks held decompressed but not yet asked for, at most (about 40 KiB each in trace-cmd files). */
const maxHeld = 256;
/** Longest wait for the worker without it producing anything, before reading goes on without it. */
const maxWaitMs = 2000;

/**
 * Decompresses a trace.dat's CPU data chunks on a worker thread (with the pure-JS decoders; for
 * zstd only until the WebAssembly decoder of this thread is loaded, which is faster), ahead of the reader, so a full
 * read (report, replay) overlaps decompression with decoding and rendering. Chunks are produced
 * in an order that interleaves CPUs by their position (the order a time-ordered merge consumes
 * them) and at most 64 ahead. `decompressor` plugs into {@link TraceDatReader.decompressor}; a
 * chunk the worker has not delivered in time (or failed on) is left to the built-in decoder, so
 * results never depend on the worker. Call {@link close} when done.
 */
export class ChunkPrefetcher {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly counters: Int32Array;
  private readonly known = new Set<number>();
  private readonly held = new Map<number, Uint8Array | null>();
  private readonly skipped = new Set<number>();
  private received = 0;
  private closed = false;
  /** Chunks served from the worker, and left to the reading thread. */
  readonly stats = { prefetched: 0, fallback: 0 };

  /** Stop the worker once this thread has the WebAssembly zstd decoder (false: always use it). */
  private readonly yieldToWasm: boolean;

  constructor(path: string, chunks: ChunkRef[], algorithm: 'zstd' | 'zlib', options: { yieldToWasm?: boolean } = {}) {
    this.yieldToWasm = algorithm === 'zstd' && options.yieldToWasm !== false;
    const require = createRequire(import.meta.url);
    const modulePath = require.resolve(algorithm === 'zstd' ? 'fzstd' : 'fflate');
    const shared = new SharedArrayBuffer(12);
    this.counters = new Int32Array(shared);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    for (const c of chunks) this.known.add(c.at);
    this.worker = new Worker(workerSource, {
      eval: true,
      workerData: { path, chunks, counters: shared, port: port2, modulePath, algorithm, window: 64 },
      transferList: [port2],
    });
    this.worker.unref();
    this.worker.on('error', () => {
      this.closed = true;
    });
  }

  private drain(): void {
    for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) {
      const { at, out } = m.message as { at: number; out: Uint8Array | null };
      this.received++;
      if (this.skipped.delete(at)) continue;
      this.held.set(at, out);
    }
    Atomics.store(this.counters, 1, this.received);
    Atomics.notify(this.counters, 1);
  }

  readonly decompressor: BlockDecompressor = (_data, _size, at) => {
    if (!this.known.has(at)) return undefined;
    if (this.yieldToWasm && isZstdWasmLoaded()) {
      // The WebAssembly decoder on this thread outruns the pure-JS one on the worker: stop it.
      this.close();
      this.known.clear();
      return undefined;
    }
    let waitedMs = 0;
    for (;;) {
      this.drain();
      const out = this.held.get(at);
      if (out !== undefined) {
        this.held.delete(at);
        this.known.delete(at);
        if (out) this.stats.prefetched++;
        else this.stats.fallback++;
        return out ?? undefined;
      }
      const produced = Atomics.load(this.counters, 0);
      const finished = Atomics.load(this.counters, 2) === 1 && produced === this.received;
      if (this.closed || finished || this.held.size >= maxHeld || waitedMs >= maxWaitMs) {
        // Not coming in time: decode it here and drop the worker's copy when it arrives. A worker
        // that made no progress for maxWaitMs (dead, or starved of CPU) is not waited for again.
        if (waitedMs >= maxWaitMs) this.close();
        this.known.delete(at);
        if (!finished && !this.closed) this.skipped.add(at);
        this.stats.fallback++;
        return undefined;
      }
      if (produced === this.received) {
        if (Atomics.wait(this.counters, 0, produced, 20) === 'timed-out') waitedMs += 20;
      }
    }
  };

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.port.close();
    void this.worker.terminate();
  }
}

/** Compressed CPU data below which {@link prefetchChunks} does not start a worker (unless forced). */
const minPrefetchBytes = 1 << 20;

/**
 * A prefetcher for every compressed CPU chunk of `dat` (read from `path`), or undefined when the
 * file has none, or less than 1 MiB of it (`force` starts one anyway). Chunk headers are read now
 * (8 bytes each); their data by the worker.
 */
export function prefetchChunks(path: string, dat: TraceDat, options: { force?: boolean } = {}): ChunkPrefetcher | undefined {
  const algorithm = dat.compression?.name;
  if (algorithm !== 'zstd' && algorithm !== 'zlib') return undefined;
  // libzstd in WebAssembly decompresses a chunk faster than a worker can hand one over.
  if (algorithm === 'zstd' && isZstdWasmLoaded() && !options.force) return undefined;
  const lists: ChunkRef[][] = [];
  for (const b of dat.buffers) {
    if (!b.compressed) continue;
    for (const cpu of b.cpus) {
      if (cpu.byteLength === 0) continue;
      const c = new Cursor(dat.source, dat.littleEndian, 0, 'cpu chunks', cpu.byteOffset);
      const count = c.u32('chunk count');
      const end = cpu.byteOffset + 4 + cpu.byteLength;
      const list: ChunkRef[] = [];
      for (let i = 0; i < count && c.offset + 8 <= end; i++) {
        const at = c.offset;
        const compressed = c.u32('chunk compressed size');
        const size = c.u32('chunk uncompressed size');
        if (c.offset + compressed > end) break;
        list.push({ at, dataAt: c.offset, compressed, size });
        c.offset += compressed;
      }
      lists.push(list);
    }
  }
  // Interleave CPUs by relative position: chunk i of n sorts at i / n.
  const order = lists.flatMap((list) => list.map((chunk, i) => ({ chunk, key: i / list.length })));
  order.sort((a, b) => a.key - b.key);
  // Below ~1 MiB of compressed data a worker costs more to start than it saves.
  const bytes = order.reduce((a, o) => a + o.chunk.compressed, 0);
  if (order.length === 0 || (bytes < minPrefetchBytes && !options.force)) return undefined;
  return new ChunkPrefetcher(path, order.map((o) => o.chunk), algorithm, { yieldToWasm: !options.force });
}
