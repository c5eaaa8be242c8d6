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
  /** The first KiB of a tarball's `kernel_version.txt` (top or `events/`), which names the kernel. */
  kernelVersion?: string | undefined;
}

export type UploadKind = 'tarball' | 'traceDat';

/** What the worker answers: the profile, or a refusal of the file with the message for the user. */
export type ParseOutcome = { ok: true; profile: ParsedProfile } | { ok: false; refused: string };

export interface ParseLimits {
  /** Bytes an upload may decompress to in all (gzip of a tarball, compressed sections of a trace.dat). */
  maxDecompressedBytes: number;
  /** Format files an upload may hold (a kernel has ~2,300 events). */
  maxFormats: number;
  /** Bytes of format text an upload may hold, all files together (a kernel's are ~2 MB). */
  maxFormatTextBytes: number;
}

/**
 * What one upload may hold: 64 MiB decompressed, 10,000 format files, 16 MiB of format text. A
 * kernel has ~2,300 events and ~2 MB of format text (2,323 and 2.0 MB on this machine's 6.18, 1,544
 * and 1.2 MB on an Android 5.10); every format is a row to insert, so the bound is what keeps one
 * small upload (a 394 KB tarball of 20,000 tiny formats) from becoming a huge insert.
 */
export const defaultUploadLimits: ParseLimits = { maxDecompressedBytes: 64 * 1024 * 1024, maxFormats: 10_000, maxFormatTextBytes: 16 * 1024 * 1024 };

/** How many parse errors a refusal quotes (the rest are counted). */
const quotedErrors = 5;

/** The refusal of an upload none of whose format files parses: the first errors, word for word. */
function noneParsed(prefix: string, errors: { path: string; message: string }[]): string {
  const shown = errors.slice(0, quotedErrors).map((e) => `${e.path}: ${e.message}`);
  const more = errors.length > quotedErrors ? `; and ${errors.length - quotedErrors} more` : '';
  return `${prefix}: none of its ${errors.length} format files parses: ${shown.join('; ')}${more}`;
}

/** The format files of an upload within the limits, or the refusal that says which limit. */
function overLimits(prefix: string, formats: { text: string }[], limits: ParseLimits): string | undefined {
  if (formats.length > limits.maxFormats) {
    return `${prefix}: ${formats.length} format files, more than the ${limits.maxFormats} one upload may hold (a kernel has about 2,300)`;
  }
  let bytes = 0;
  for (const f of formats) bytes += Buffer.byteLength(f.text, 'utf8');
  if (bytes > limits.maxFormatTextBytes) return `${prefix}: ${mib(bytes)} of format text, more than the ${mib(limits.maxFormatTextBytes)} one upload may hold`;
  return undefined;
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
  const formatFiles = files.filter((f) => classifyEventsPath(f.path)?.kind === 'format');
  const over = overLimits('kernel upload: tarball', formatFiles, limits);
  if (over) return { ok: false, refused: over };
  const set = await buildEventFormatSet(files);
  if (set.formats.size === 0) {
    const errors = [...clean.errors, ...set.errors.map((e) => ({ path: e.path, message: e.error.message }))];
    if (errors.length > 0) return { ok: false, refused: noneParsed('kernel upload: tarball', errors) };
    return { ok: false, refused: `kernel upload: no events/<system>/<event>/format files in the tarball (${files.length} files)` };
  }
  const textOf = new Map(formatFiles.map((f) => [f.path, f.text]));
  const version = files.find((f) => /^(?:\.\/)?(?:events\/)?kernel_version\.txt$/.test(f.path));
  return { ok: true, profile: { ...rowsOf(set, textOf, clean.errors), ...(version !== undefined ? { kernelVersion: version.text.slice(0, 1024) } : {}) } };
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
  const over = overLimits('kernel upload: trace.dat', files.slice(2), limits);
  if (over) return { ok: false, refused: over };
  const clean = withoutNul(files);
  files = clean.files;
  const set = await buildEventFormatSet(files);
  if (set.formats.size === 0) {
    const errors = [...clean.errors, ...set.errors.map((e) => ({ path: e.path, message: e.error.message }))];
    if (errors.length > 0) return { ok: false, refused: noneParsed('kernel upload: trace.dat', errors) };
    return { ok: false, refused: 'kernel upload: trace.dat: it carries no event format' };
  }
  return { ok: true, profile: { ...rowsOf(set, new Map(files.map((f) => [f.path, f.text])), clean.errors), uname } };
}

export function parseUpload(kind: UploadKind, bytes: Uint8Array, limits: ParseLimits): Promise<ParseOutcome> {
  return kind === 'traceDat' ? parseTraceDat(bytes, limits) : parseTarball(bytes, limits);
}
