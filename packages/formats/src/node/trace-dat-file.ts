import { parseEventFormat, type EventFormat } from '../event-format/event-format.js';
import { traceDatRecordStream, type RecordStream, type TraceDatStreamOptions } from '../record-stream.js';
import { TraceDatReader } from '../trace-dat/trace-dat-reader.js';
import { decodeTraceDat } from '../trace-dat/trace-dat.js';
import * as zlib from 'node:zlib';
import { loadZstdWasm, registerDecompressor } from '../trace-dat/decompress.js';
import { type ChunkPrefetcher, prefetchChunks } from './chunk-prefetch.js';
import { FileByteSource } from './file-byte-source.js';

// Node 22.15+ and 23.8+ have zstd in zlib: several times faster than the pure-JS decoder.
const zstdSync = (zlib as unknown as { zstdDecompressSync?: (b: Uint8Array, o?: { maxOutputLength?: number }) => Uint8Array }).zstdDecompressSync;
if (typeof zstdSync === 'function') {
  registerDecompressor('zstd', (data, size) => zstdSync(data, { maxOutputLength: size + 1 }));
}

/** A trace.dat file opened for reading (metadata decoded; pages read on demand). */
export interface TraceDatFile {
  readonly path: string;
  readonly reader: TraceDatReader<EventFormat>;
  close(): void;
}

/** Parses format files of a trace.dat with the package's event-format parser. */
export function parseTraceDatFormat(text: string, system: string): EventFormat {
  return parseEventFormat(text, { system });
}

/** Options of {@link openTraceDatFile}. */
export interface OpenTraceDatFileOptions {
  /**
   * Decompress CPU data chunks on a worker thread ahead of the reader (for reading every CPU to
   * the end: reports, replays). Default false: random access reads only what it asks for.
   */
  prefetch?: boolean;
}

/**
 * Opens a trace.dat (version 6 or 7) from disk without reading it whole: metadata now, each CPU's
 * pages when a reader asks for them.
 */
export function openTraceDatFile(path: string, options: OpenTraceDatFileOptions = {}): TraceDatFile {
  const source = new FileByteSource(path);
  let prefetcher: ChunkPrefetcher | undefined;
  try {
    const reader = new TraceDatReader<EventFormat>(decodeTraceDat(source), parseTraceDatFormat);
    if (options.prefetch) {
      prefetcher = prefetchChunks(path, reader.dat);
      reader.decompressor = prefetcher?.decompressor;
    }
    return {
      path,
      reader,
      close: () => {
        prefetcher?.close();
        source.close();
      },
    };
  } catch (e) {
    prefetcher?.close();
    source.close();
    throw e;
  }
}

/** A trace.dat replay as a {@link RecordStream}; closing the stream closes the file. */
export function openTraceDatStream(path: string, options: TraceDatStreamOptions = {}): RecordStream<EventFormat> {
  const file = openTraceDatFile(path, { prefetch: true });
  const stream = traceDatRecordStream(file.reader, options);
  return {
    info: stream.info,
    stats: stream.stats,
    async close() {
      await stream.close();
      file.close();
    },
    async *[Symbol.asyncIterator]() {
      try {
        await loadZstdWasm(); // zstd chunks through libzstd/wasm from the first batch on
        yield* stream;
      } finally {
        file.close();
      }
    },
  };
}
