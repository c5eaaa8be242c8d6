import { unzlibSync } from 'fflate';
import { decompress as zstdDecompress } from 'fzstd';
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
 * where the runtime has it); the pure-JS fzstd/fflate stay the default everywhere else.
 */
export function registerDecompressor(algorithm: string, decompress: BlockDecompressor | undefined): void {
  if (decompress) native.set(algorithm, decompress);
  else native.delete(algorithm);
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
      out = zstdDecompress(data, new Uint8Array(uncompressedSize));
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
