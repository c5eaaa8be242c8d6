import { unzlibSync } from 'fflate';
import { decompress as zstdDecompress } from 'fzstd';
import { ZSTDDecoder } from 'zstddec';
import { FormatError } from '../errors.js';

/** Compression algorithms trace-cmd writes in version 7 files ("name\0version\0" in the header). */
export const Compression = { none: 'none', zstd: 'zstd', zlib: 'zlib' } as const;
export type Compression = (typeof Compression)[keyof typeof Compression];

/**
 * Largest decompressed block accepted: a block may expand at most this many times its
 * compressed size (real trace-cmd chunks of near-empty pages reach a few hundred), and never past
 * 256 MiB. Keeps a hostile size field from allocating unbounded memory.
 */
export const maxExpansion = 4096;
export const maxBlockBytes = 256 * 1024 * 1024;

/**
 * Decompresses `data` (found at input offset `byteOffset`) into exactly `uncompressedSize` bytes,
 * or returns undefined to leave the block to the built-in decoders.
 */
export type BlockDecompressor = (data: Uint8Array, uncompressedSize: number, byteOffset: number) => Uint8Array | undefined;

const native = new Map<string, BlockDecompressor>();

/**
 * Uses a faster implementation for an algorithm (the Node side registers `zlib.zstdDecompressSync`
 * where the runtime has it, Node 22.15+); elsewhere zstd goes to libzstd in WebAssembly (fzstd
 * until it has loaded) and zlib to fflate.
 */
export function registerDecompressor(algorithm: string, decompress: BlockDecompressor | undefined): void {
  if (decompress) native.set(algorithm, decompress);
  else native.delete(algorithm);
}

/**
 * The reference zstd decoder (libzstd) compiled to WebAssembly, from the `zstddec` package (its
 * .wasm ships inside the package; nothing is downloaded). 10–15 times faster than the pure-JS
 * fzstd, which stays the fallback until the module is compiled, where WebAssembly is missing, and
 * for blocks the WebAssembly decoder refuses (so error messages stay the same everywhere).
 */
let wasmZstd: ZSTDDecoder | undefined;
let wasmZstdLoading: Promise<boolean> | undefined;

/**
 * Compiles the WebAssembly zstd decoder (once; later calls return the same promise). Loading
 * starts at the first zstd block (fzstd decodes until it is ready), not at import: a page of the
 * web app that imports this package never reads a trace.dat, and zstddec fetches its module from
 * a `data:` URL, which the app's Content-Security-Policy (`connect-src 'self'`) refuses with a
 * console error. Await this before a synchronous bulk read to be on the fast path from its first
 * block. Resolves false when WebAssembly is unavailable (the pure-JS decoder is used then).
 */
export function loadZstdWasm(): Promise<boolean> {
  wasmZstdLoading ??= (async () => {
    try {
      const decoder = new ZSTDDecoder();
      await decoder.init();
      wasmZstd = decoder;
      return true;
    } catch {
      return false;
    }
  })();
  return wasmZstdLoading;
}

/** True once {@link loadZstdWasm} has finished and the WebAssembly decoder is in use. */
export function isZstdWasmLoaded(): boolean {
  return wasmZstd !== undefined;
}

/** Turns the WebAssembly zstd decoder off (false) or back on (true): for benchmarks and tests. */
export function useZstdWasm(on: boolean): void {
  if (!on) {
    disabledWasm = wasmZstd ?? disabledWasm;
    wasmZstd = undefined;
  } else if (disabledWasm) {
    wasmZstd = disabledWasm;
    disabledWasm = undefined;
  }
}
let disabledWasm: ZSTDDecoder | undefined;

/**
 * One zstd block through the WebAssembly decoder, or undefined to leave it to fzstd. The output
 * never exceeds `size` (libzstd refuses a frame larger than its destination). zstddec returns an
 * empty array on any libzstd error; a frame shorter than declared (trace-cmd's chunk of partly
 * empty pages) is padded with zeros, as fzstd leaves them.
 */
function zstdWasm(data: Uint8Array, size: number): Uint8Array | undefined {
  if (wasmZstd === undefined) {
    if (wasmZstdLoading === undefined && disabledWasm === undefined) void loadZstdWasm();
    return undefined;
  }
  if (size === 0) return undefined;
  const out = wasmZstd.decode(data, size);
  if (out.length === size) return out;
  if (out.length === 0 || out.length > size) return undefined;
  const padded = new Uint8Array(size);
  padded.set(out);
  return padded;
}

/** Decompresses one block whose uncompressed size is declared; checks the size it got. */
export function decompressBlock(
  algorithm: string,
  data: Uint8Array,
  uncompressedSize: number,
  byteOffset: number,
  section: string,
  override?: BlockDecompressor,
): Uint8Array {
  if (uncompressedSize > maxBlockBytes || uncompressedSize > Math.max(data.length, 64) * maxExpansion) {
    throw new FormatError('out-of-range', `${section}: ${data.length} compressed bytes claim ${uncompressedSize} uncompressed`, {
      byteOffset,
      section,
    });
  }
  let out: Uint8Array | undefined;
  try {
    out = override?.(data, uncompressedSize, byteOffset) ?? native.get(algorithm)?.(data, uncompressedSize, byteOffset);
    if (out !== undefined) {
      // done by the override or a registered implementation
    } else if (algorithm === Compression.zstd) {
      // fzstd fills the buffer it is given (and fails on a frame larger than it), so the output
      // can never exceed the declared size; a shorter frame leaves zeros (empty pages).
      out = zstdWasm(data, uncompressedSize) ?? zstdDecompress(data, new Uint8Array(uncompressedSize));
    } else if (algorithm === Compression.zlib) {
      // One byte of slack: output longer than declared shows as a length mismatch, not a cut.
      out = unzlibSync(data, { out: new Uint8Array(uncompressedSize + 1) });
    } else {
      throw new FormatError('unsupported', `${section}: compression '${algorithm}'`, { byteOffset, section });
    }
  } catch (e) {
    if (e instanceof FormatError) throw e;
    throw new FormatError('malformed', `${section}: ${algorithm} data does not decompress: ${(e as Error).message}`, {
      byteOffset,
      section,
      cause: e,
    });
  }
  if (out.length !== uncompressedSize) {
    throw new FormatError('malformed', `${section}: decompressed to ${out.length} bytes, header says ${uncompressedSize}`, {
      byteOffset,
      section,
    });
  }
  return out;
}
