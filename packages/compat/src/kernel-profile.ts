import { buildEventFormatSet, type EventFormat, type EventFormatSet, type EventsTreeFile, readTar, type TraceDatInfo } from '@probeyard/formats';
import { FormatError } from '@probeyard/formats';
import { CompatError } from './errors.js';

/** Where a profile's formats were read from. */
export type ProfileSource = 'tracefs' | 'events-tree' | 'tarball' | 'trace.dat' | 'json';

/**
 * A kernel profile: the facts of one kernel that decide where a program's reads land. Event
 * formats are stored once per content hash (`formats`); `events` maps `system/event` to that
 * hash. Two profiles with the same `hash` have the same formats, whatever their release strings.
 */
export interface KernelProfile {
  /** `uname -r` (or what the source tells; '' when unknown). */
  release: string;
  /** `x86_64`, `aarch64`, `arm` … ('' when unknown). */
  arch: string;
  /** `sizeof(long)` of the kernel, when the source tells (header_page, or a `long` field). */
  wordSize: 4 | 8 | undefined;
  /** Content hash of the whole profile (packages/formats' `EventFormatSet.hash`). */
  hash: string;
  source: ProfileSource;
  /**
   * Whether the profile holds every event of its kernel: true for the live tracefs and a full
   * `events/` dump (folder or tarball), false for a trace.dat (only the events it recorded) or a
   * folder marked partial. An event a complete profile lacks is a fact (the program cannot attach
   * there: `incompatible`); one a partial profile lacks is not known (`unknown`).
   */
  complete: boolean;
  /** `system/event` → format hash (SHA-256 of the format file's text). */
  events: Map<string, string>;
  /** Format hash → parsed format (identical files share one entry). */
  formats: Map<string, EventFormat>;
  /** Files that did not parse (the rest of the profile is usable). */
  errors: { path: string; message: string }[];
}

/** Release and architecture of a profile when the source does not carry them. */
export interface ProfileMeta {
  release?: string;
  arch?: string;
  wordSize?: 4 | 8;
  /** False marks a subset of a kernel's events (default: true, except for a trace.dat, always partial). */
  complete?: boolean;
}

/** Whether a profile of `source` is complete unless told otherwise: all but a trace.dat. */
export function isCompleteSource(source: ProfileSource): boolean {
  return source !== 'trace.dat';
}

/** `complete` or `partial`, as verdicts and listings print it. */
export function completenessOf(profile: Pick<KernelProfile, 'complete'>): 'complete' | 'partial' {
  return profile.complete ? 'complete' : 'partial';
}

/**
 * The release named by a `kernel_version.txt` (what a tracefs dump keeps beside `events/`): its
 * first non-empty line, as `uname -r` prints it, or the release word of a whole `uname -a` line.
 * '' when the text names none.
 */
export function parseKernelVersionFile(text: string): string {
  const line = text.split(/\r?\n/).map((l) => l.trim()).find((l) => l !== '' && !l.startsWith('#')) ?? '';
  if (line === '') return '';
  if (/^Linux\s/.test(line)) return parseUname(line).release;
  const word = line.split(/\s+/)[0] ?? '';
  // a release starts with its version number (`6.18.44-fc-v782`, `3.4.0-gadb2201`)
  return /^\d+\.\d+[\w.+~-]*$/.test(word) && word.length <= 128 ? word : '';
}

/** A profile from a parsed events tree (packages/formats' {@link EventFormatSet}). */
export function profileOfFormatSet(set: EventFormatSet, source: ProfileSource, meta: ProfileMeta = {}): KernelProfile {
  const events = new Map<string, string>();
  const formats = new Map<string, EventFormat>();
  let longSize: 4 | 8 | undefined = set.longSize;
  for (const [key, f] of [...set.formats.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    events.set(key, f.hash);
    if (!formats.has(f.hash)) formats.set(f.hash, f.format);
    longSize ??= f.format.longSize;
  }
  return {
    release: meta.release ?? '',
    arch: meta.arch ?? '',
    wordSize: meta.wordSize ?? longSize,
    hash: set.hash,
    source,
    complete: source === 'trace.dat' ? false : (meta.complete ?? true),
    events,
    formats,
    errors: set.errors.map((e) => ({ path: e.path, message: e.error.message })),
  };
}

/** The format of `system/event` in a profile. */
export function profileFormat(profile: KernelProfile, key: string): EventFormat | undefined {
  const hash = profile.events.get(key);
  return hash === undefined ? undefined : profile.formats.get(hash);
}

/**
 * The format of an event named only by its event name (a CO-RE struct `trace_event_raw_<event>`
 * or an assembly symbol `event.field`): `preferSystem/event` first, else the one system that has
 * it (first in sorted order when several do).
 */
export function findProfileEvent(profile: KernelProfile, event: string, preferSystem?: string): { key: string; format: EventFormat } | undefined {
  if (preferSystem !== undefined) {
    const key = `${preferSystem}/${event}`;
    const format = profileFormat(profile, key);
    if (format) return { key, format };
  }
  for (const key of profile.events.keys()) {
    if (key.slice(key.indexOf('/') + 1) === event) {
      const format = profileFormat(profile, key);
      if (format) return { key, format };
    }
  }
  return undefined;
}

const kernelVersionPath = /^(?:\.\/)?(?:events\/)?kernel_version\.txt$/;

/**
 * A profile from the bytes of a tarball of an `events/` tree (`.tar` or `.tar.gz`). Its release
 * is `meta.release`, else the one a `kernel_version.txt` at its top (or in `events/`) names.
 */
export async function readProfileTarball(bytes: Uint8Array, meta: ProfileMeta = {}): Promise<KernelProfile> {
  try {
    const decoder = new TextDecoder('utf-8');
    const files = readTar(bytes).map((f) => ({ path: f.path, text: decoder.decode(f.bytes) }));
    const version = files.find((f) => kernelVersionPath.test(f.path));
    const release = meta.release ?? (version === undefined ? undefined : parseKernelVersionFile(version.text) || undefined);
    return profileOfFormatSet(await buildEventFormatSet(files), 'tarball', release === undefined ? meta : { ...meta, release });
  } catch (e) {
    if (e instanceof FormatError) throw new CompatError('malformed', `read profile tarball: ${e.message}`, { cause: e });
    throw e;
  }
}

/** A profile from files of an `events/` tree given as path and text (a browser upload). */
export async function profileOfFiles(files: Iterable<EventsTreeFile>, meta: ProfileMeta = {}): Promise<KernelProfile> {
  return profileOfFormatSet(await buildEventFormatSet(files), 'events-tree', meta);
}

/** `Linux host 6.18.44 #1 SMP PREEMPT_DYNAMIC … x86_64 GNU/Linux` → release and arch. */
export function parseUname(uname: string | undefined): { release: string; arch: string } {
  if (uname === undefined) return { release: '', arch: '' };
  const words = uname.trim().split(/\s+/);
  const release = words.length >= 3 ? (words[2] ?? '') : (words[0] ?? '');
  const arch = words.find((w) => /^(x86_64|i[3-6]86|aarch64|arm\w*|riscv\d+|ppc64\w*|s390x|mips\w*|loongarch64)$/.test(w)) ?? '';
  return { release, arch };
}

/** A profile from the formats a trace.dat carries (only the events it recorded, and `ftrace`). */
export async function profileOfTraceDat(dat: Pick<TraceDatInfo, 'eventFormats' | 'headerPageText' | 'headerEventText' | 'uname' | 'longSize'>): Promise<KernelProfile> {
  const files: EventsTreeFile[] = [
    { path: 'header_page', text: dat.headerPageText },
    { path: 'header_event', text: dat.headerEventText },
  ];
  for (const f of dat.eventFormats) {
    const name = /^name:\s*(\S+)/m.exec(f.text)?.[1];
    if (name !== undefined) files.push({ path: `${f.system}/${name}/format`, text: f.text });
  }
  const { release, arch } = parseUname(dat.uname);
  const meta: ProfileMeta = { release, arch, complete: false };
  return profileOfFormatSet(await buildEventFormatSet(files), 'trace.dat', meta);
}
