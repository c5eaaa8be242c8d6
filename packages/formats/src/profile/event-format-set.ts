import { FormatError, isFormatError } from '../errors.js';
import { type EventFormat, parseEventFormat } from '../event-format/event-format.js';
import { readTar } from './tar.js';

/** One parsed format of a kernel profile, with the SHA-256 (hex) of its exact text. */
export interface ProfileFormat {
  format: EventFormat;
  hash: string;
  /** Path inside the tree or archive. */
  path: string;
}

/** A file of the tree that did not parse; the rest of the set is still usable. */
export interface ProfileError {
  path: string;
  error: FormatError;
}

/**
 * A kernel profile: every `events/<system>/<event>/format` of a tracefs, keyed `system/name`,
 * plus `header_page` and `header_event`. `hash` identifies the profile by content: SHA-256 (hex)
 * over the sorted lines `<system/name> <format hash>\n`, then `header_page <hash>\n` and
 * `header_event <hash>\n` when present. Two kernels with the same formats get the same hash,
 * whatever their version strings.
 */
export interface EventFormatSet {
  formats: Map<string, ProfileFormat>;
  headerPage?: string;
  headerEvent?: string;
  /**
   * The kernel's `sizeof(long)`: what the formats' `long` and pointer fields agree on, else the
   * size of `commit` (a `local_t`) in `header_page`. The fields win because they describe the
   * records (the corpus' 32-bit 3.10.49 dump pairs 4-byte longs with an 8-byte `commit`). Formats
   * whose own fields do not show it (syscall events) get this value as their `longSize`.
   */
  longSize?: 4 | 8;
  hash: string;
  errors: ProfileError[];
}

/** `sizeof(long)` from a `header_page` text (its `commit` field is a `local_t`). */
export function longSizeOfHeaderPage(text: string): 4 | 8 | undefined {
  const m = /field:\s*\w+\s+commit;\s*offset:\s*\d+;\s*size:\s*(\d+);/.exec(text);
  return m?.[1] === '4' ? 4 : m?.[1] === '8' ? 8 : undefined;
}

/** A text file of an `events/` tree: its path (relative, `/`-separated) and contents. */
export interface EventsTreeFile {
  path: string;
  text: string;
}

const encoder = new TextEncoder();

/** SHA-256 of a text (UTF-8) or bytes, as lowercase hex, through WebCrypto. */
export async function sha256Hex(input: string | Uint8Array): Promise<string> {
  const data = typeof input === 'string' ? encoder.encode(input) : input;
  const digest = await globalThis.crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>);
  const bytes = new Uint8Array(digest);
  let hex = '';
  for (const b of bytes) hex += b.toString(16).padStart(2, '0');
  return hex;
}

/**
 * What a path inside an `events/` tree is: `events/sched/sched_switch/format`,
 * `./events/header_page`, `sched/sched_switch/format` (relative to `events/`).
 */
export function classifyEventsPath(path: string): { kind: 'format'; system: string; event: string } | { kind: 'header_page' | 'header_event' } | undefined {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  const at = parts.lastIndexOf('events');
  const rel = at >= 0 && parts.length - at <= 4 ? parts.slice(at + 1) : parts;
  if (rel.length === 1 && (rel[0] === 'header_page' || rel[0] === 'header_event')) return { kind: rel[0] };
  if (rel.length === 3 && rel[2] === 'format') return { kind: 'format', system: rel[0]!, event: rel[1]! };
  return undefined;
}

/**
 * What {@link digestEventFormats} gives: the profile's identity without its parsed formats (each
 * event's format hash and path), for holders of many profiles or of a large one (an agent keeps
 * the texts and parses the few events its programs use).
 */
export interface EventFormatDigest {
  /** `system/name` → SHA-256 (hex) of the format's text, and its path. */
  formats: Map<string, { hash: string; path: string }>;
  headerPage?: string;
  headerEvent?: string;
  /** As {@link EventFormatSet.longSize}. */
  longSize?: 4 | 8;
  /** As {@link EventFormatSet.hash}: the same files give the same hash. */
  hash: string;
  errors: ProfileError[];
}

/**
 * One pass over the files of a tree: every format parsed (to know it is one), named, hashed and
 * handed to `keep` (which may hold on to it or not); the profile hash over what parsed.
 */
async function scanEventFormats(files: Iterable<EventsTreeFile>, keep: (key: string, format: EventFormat) => void): Promise<EventFormatDigest> {
  const formats = new Map<string, { hash: string; path: string }>();
  const errors: ProfileError[] = [];
  let headerPage: string | undefined;
  let headerEvent: string | undefined;
  let fours = 0;
  let eights = 0;
  const pending: Promise<void>[] = [];
  for (const file of files) {
    const kind = classifyEventsPath(file.path);
    if (!kind) continue;
    if (kind.kind !== 'format') {
      if (kind.kind === 'header_page') headerPage = file.text;
      else headerEvent = file.text;
      continue;
    }
    let format: EventFormat;
    try {
      format = parseEventFormat(file.text, { system: kind.system });
    } catch (e) {
      if (!isFormatError(e)) throw e;
      errors.push({ path: file.path, error: e.withPrefix(file.path) });
      continue;
    }
    const key = `${kind.system}/${format.name}`;
    if (format.name !== kind.event) {
      errors.push({
        path: file.path,
        error: new FormatError('malformed', `${file.path}: names event '${format.name}' inside folder '${kind.event}'`, { line: 1, event: key }),
      });
      continue;
    }
    if (formats.has(key)) {
      errors.push({ path: file.path, error: new FormatError('malformed', `${file.path}: second format for '${key}'`, { event: key }) });
      continue;
    }
    if (format.longSize === 4) fours++;
    else if (format.longSize === 8) eights++;
    const entry = { hash: '', path: file.path };
    formats.set(key, entry);
    keep(key, format);
    pending.push(
      sha256Hex(file.text).then((h) => {
        entry.hash = h;
      }),
    );
  }
  await Promise.all(pending);
  const lines = [...formats.entries()].map(([key, f]) => `${key} ${f.hash}\n`).sort();
  if (headerPage !== undefined) lines.push(`header_page ${await sha256Hex(headerPage)}\n`);
  if (headerEvent !== undefined) lines.push(`header_event ${await sha256Hex(headerEvent)}\n`);
  const digest: EventFormatDigest = { formats, hash: await sha256Hex(lines.join('')), errors };
  if (headerPage !== undefined) digest.headerPage = headerPage;
  if (headerEvent !== undefined) digest.headerEvent = headerEvent;
  // The kernel's long size: what the formats' long and pointer fields agree on (they describe the
  // records), else header_page's `commit`. Formats that do not show it (syscalls) take the profile's.
  const longSize: 4 | 8 | undefined = fours > eights ? 4 : eights > 0 ? 8 : headerPage === undefined ? undefined : longSizeOfHeaderPage(headerPage);
  if (longSize !== undefined) digest.longSize = longSize;
  return digest;
}

/**
 * Builds a profile from the files of an `events/` tree (other files are ignored). A file that
 * does not parse is recorded in `errors` with its path and does not stop the others.
 */
export async function buildEventFormatSet(files: Iterable<EventsTreeFile>): Promise<EventFormatSet> {
  const parsed = new Map<string, EventFormat>();
  const digest = await scanEventFormats(files, (key, format) => parsed.set(key, format));
  const formats = new Map<string, ProfileFormat>();
  for (const [key, f] of digest.formats) {
    const format = parsed.get(key)!;
    if (digest.longSize !== undefined) format.longSize ??= digest.longSize;
    formats.set(key, { format, hash: f.hash, path: f.path });
  }
  const set: EventFormatSet = { formats, hash: digest.hash, errors: digest.errors };
  if (digest.headerPage !== undefined) set.headerPage = digest.headerPage;
  if (digest.longSize !== undefined) set.longSize = digest.longSize;
  if (digest.headerEvent !== undefined) set.headerEvent = digest.headerEvent;
  return set;
}

/**
 * The profile of an `events/` tree as {@link buildEventFormatSet} gives it (same hash, errors and
 * long size), without keeping the parsed formats: each is parsed, checked and let go.
 */
export function digestEventFormats(files: Iterable<EventsTreeFile>): Promise<EventFormatDigest> {
  return scanEventFormats(files, () => {});
}

const decoder = new TextDecoder('utf-8');

/**
 * A profile from a tarball of an `events/` tree (`.tar`, or `.tar.gz` by its magic). Throws
 * {@link FormatError} only when the archive itself is unreadable; bad format files go to `errors`.
 */
export async function readEventsTarball(bytes: Uint8Array): Promise<EventFormatSet> {
  const files = readTar(bytes);
  return buildEventFormatSet(files.map((f) => ({ path: f.path, text: decoder.decode(f.bytes) })));
}
