// What the upload parser's worker thread runs (src/data/upload-parse-worker.ts): an uploaded
// events tarball or trace.dat in, plain data out (structured-cloneable: no class instances, no
// Maps), so nothing of the parse crosses back to the request's thread but strings and numbers.
// Imports only packages/formats, to keep the worker's start-up short.
import {
  buildEventFormatSet,
  classifyEventsPath,
  decodeTraceDat,
  type EventsTreeFile,
  FormatError,
  isFormatError,
  isGzip,
  MemoryByteSource,
  readTar,
  registerDecompressor,
} from '@probeyard/formats';

/** One format file to store: content hash, event, exact text. */
export interface FormatRow {
  hash: string;
  system: string;
  event: string;
  text: string;
}

/** A parsed upload: the profile's content hash, the format rows, the files that did not parse. */
export interface ParsedProfile {
  hash: string;
  rows: FormatRow[];
  errors: { path: string; message: string }[];
  /** The `uname` a trace.dat recorded (tarballs have none). */
  uname?: string | undefined;
}

export type UploadKind = 'tarball' | 'traceDat';

/** What the worker answers: the profile, or a refusal of the file with the message for the user. */
export type ParseOutcome = { ok: true; profile: ParsedProfile } | { ok: false; refused: string };

export interface ParseLimits {
  /** Bytes an upload may decompress to in all (gzip of a tarball, compressed sections of a trace.dat). */
  maxDecompressedBytes: number;
}

const mib = (n: number) => (n < 1024 * 1024 ? `${n} bytes` : `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`);

let budget = { left: Number.POSITIVE_INFINITY, limit: Number.POSITIVE_INFINITY };

// Counts what a trace.dat's compressed blocks claim before they are decompressed (returning
// undefined leaves the block to the built-in decoders, which check the claim against the output).
// The reader caps each block (256 MiB, 4096 times its compressed size); this caps their sum.
const countBlock = (_data: Uint8Array, size: number, byteOffset: number): undefined => {
  budget.left -= size;
  if (budget.left < 0) {
    throw new FormatError('out-of-range', `compressed blocks decompress to more than ${mib(budget.limit)} in all`, { byteOffset });
  }
  return undefined;
};
registerDecompressor('zstd', countBlock);
registerDecompressor('zlib', countBlock);

function rowsOf(set: Awaited<ReturnType<typeof buildEventFormatSet>>, textOf: Map<string, string>, unstorable: ParsedProfile['errors'] = []): ParsedProfile {
  return {
    hash: set.hash,
    rows: [...set.formats.values()].map((f) => ({ hash: f.hash, system: f.format.system, event: f.format.name, text: textOf.get(f.path) ?? '' })),
    errors: [...unstorable, ...set.errors.map((e) => ({ path: e.path, message: e.error.message }))],
  };
}

/**
 * Files whose path or text holds a NUL (a real tracefs never writes one) cannot be stored as text:
 * they leave the set as errors that say so, beside the files that do not parse.
 */
function withoutNul<F extends { path: string; text: string }>(files: F[]): { files: F[]; errors: ParsedProfile['errors'] } {
  const errors: ParsedProfile['errors'] = [];
  const kept = files.filter((f) => {
    if (!f.path.includes('\0') && !f.text.includes('\0')) return true;
    errors.push({ path: f.path.replaceAll('\0', '\\0'), message: `contains a NUL character (U+0000), which cannot be stored` });
    return false;
  });
  return { files: kept, errors };
}

/** A `.tar`/`.tar.gz` of an `events/` tree into a profile; refusals carry today's messages. */
async function parseTarball(bytes: Uint8Array, limits: ParseLimits): Promise<ParseOutcome> {
  if (isGzip(bytes) && bytes.length >= 18) {
    // gzip's trailer gives the size (mod 2^32) that fflate allocates and never writes past.
    const size = new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 4, 4).getUint32(0, true);
    if (size > limits.maxDecompressedBytes) {
      return { ok: false, refused: `kernel upload: tar: gzip: decompresses to ${mib(size)} (more than ${mib(limits.maxDecompressedBytes)})` };
    }
  }
  let files: { path: string; text: string }[];
  try {
    const decoder = new TextDecoder('utf-8');
    files = readTar(bytes).map((f) => ({ path: f.path, text: decoder.decode(f.bytes) }));
  } catch (err) {
    if (isFormatError(err)) return { ok: false, refused: `kernel upload: ${err.message}` };
    throw err;
  }
  const clean = withoutNul(files);
  files = clean.files;
  const set = await buildEventFormatSet(files);
  if (set.formats.size === 0) {
    return { ok: false, refused: `kernel upload: no events/<system>/<event>/format files in the tarball (${files.length} files)` };
  }
  const textOf = new Map(files.filter((f) => classifyEventsPath(f.path)?.kind === 'format').map((f) => [f.path, f.text]));
  return { ok: true, profile: rowsOf(set, textOf, clean.errors) };
}

/** A trace.dat (trace-cmd v6/v7) into a profile of the formats it carries, and its uname. */
async function parseTraceDat(bytes: Uint8Array, limits: ParseLimits): Promise<ParseOutcome> {
  let files: EventsTreeFile[];
  let uname: string | undefined;
  budget = { left: limits.maxDecompressedBytes, limit: limits.maxDecompressedBytes };
  try {
    const dat = decodeTraceDat(new MemoryByteSource(bytes));
    uname = dat.uname;
    files = [
      { path: 'header_page', text: dat.headerPageText },
      { path: 'header_event', text: dat.headerEventText },
    ];
    for (const f of dat.eventFormats) {
      const name = /^name:\s*(\S+)/m.exec(f.text)?.[1];
      if (name !== undefined) files.push({ path: `${f.system}/${name}/format`, text: f.text });
    }
  } catch (err) {
    if (isFormatError(err)) return { ok: false, refused: `kernel upload: trace.dat: ${err.message}` };
    throw err;
  } finally {
    budget = { left: Number.POSITIVE_INFINITY, limit: Number.POSITIVE_INFINITY };
  }
  const clean = withoutNul(files);
  files = clean.files;
  const set = await buildEventFormatSet(files);
  if (set.formats.size === 0) return { ok: false, refused: 'kernel upload: trace.dat: it carries no event format' };
  return { ok: true, profile: { ...rowsOf(set, new Map(files.map((f) => [f.path, f.text])), clean.errors), uname } };
}

export function parseUpload(kind: UploadKind, bytes: Uint8Array, limits: ParseLimits): Promise<ParseOutcome> {
  return kind === 'traceDat' ? parseTraceDat(bytes, limits) : parseTarball(bytes, limits);
}
