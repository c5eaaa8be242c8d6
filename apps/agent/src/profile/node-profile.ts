// The node's kernel profile: the format files its programs are relocated against and that it
// reports to the registry. Live: every `events/*/*/format` of the node's tracefs (complete).
// A replay: the formats a trace.dat carries (partial: a recording holds only the events it
// recorded), so one machine can host nodes of other kernels.
import { readdir, readFile } from 'node:fs/promises';
import { availableParallelism, machine, release } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { type KernelProfile, parseUname } from '@probeyard/compat';
import { digestEventFormats, type EventFormat, type EventsTreeFile, isFormatError, parseEventFormat } from '@probeyard/formats';
import { openTraceDatFile, type TraceDatFile } from '@probeyard/formats/node';
import { AgentError } from '../errors.js';
import { writeTar } from './tar.js';

/** What the agent knows of its node's kernel. */
export interface NodeProfile {
  /** Every event of the kernel (live tracefs), or only those of a recording. */
  complete: boolean;
  /** `uname -r` of the kernel ('' when a recording does not say). */
  release: string;
  /** `uname -m` (`x86_64`, …). */
  machine: string;
  /** Content hash (packages/formats' `EventFormatSet.hash`, the registry's profile key). */
  hash: string;
  /** `header_page`, `header_event` and `<system>/<event>/format` files, sorted by path. */
  files: EventsTreeFile[];
  /** The profile relocation runs against. */
  kernel: KernelProfile;
  /** CPUs of the node (per-CPU maps hold one value each): the recording's, or this machine's. */
  cpuCount: number;
}

/**
 * The parsed formats of a profile, parsed when first asked for: a node's kernel has ~2,300 events
 * and its programs read a few, so the agent keeps the texts (which it reports anyway) and parses
 * those. The same map for every reader of `KernelProfile.formats` (`get`, `has`, iteration).
 */
class LazyFormats extends Map<string, EventFormat> {
  constructor(
    private readonly sources: ReadonlyMap<string, { text: string; system: string }>,
    private readonly longSize: 4 | 8 | undefined,
  ) {
    super();
  }

  override get(hash: string): EventFormat | undefined {
    const known = super.get(hash);
    if (known !== undefined) return known;
    const src = this.sources.get(hash);
    if (src === undefined) return undefined;
    // it parsed once already (the digest): it parses again
    const format = parseEventFormat(src.text, { system: src.system });
    if (this.longSize !== undefined) format.longSize ??= this.longSize;
    super.set(hash, format);
    return format;
  }

  override has(hash: string): boolean {
    return this.sources.has(hash);
  }

  override get size(): number {
    return this.sources.size;
  }

  override *entries(): MapIterator<[string, EventFormat]> {
    for (const hash of this.sources.keys()) yield [hash, this.get(hash)!];
  }

  override *keys(): MapIterator<string> {
    yield* this.sources.keys();
  }

  override *values(): MapIterator<EventFormat> {
    for (const hash of this.sources.keys()) yield this.get(hash)!;
  }

  override [Symbol.iterator](): MapIterator<[string, EventFormat]> {
    return this.entries();
  }

  override forEach(cb: (value: EventFormat, key: string, map: Map<string, EventFormat>) => void, thisArg?: unknown): void {
    for (const [k, v] of this.entries()) cb.call(thisArg, v, k, this);
  }
}

async function build(files: EventsTreeFile[], complete: boolean, meta: { release: string; machine: string; cpuCount: number }): Promise<NodeProfile> {
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // the registry's hash of these files, without holding ~2,300 parsed formats (packages/formats)
  const digest = await digestEventFormats(files);
  const textOf = new Map(files.map((f) => [f.path, f.text]));
  const events = new Map<string, string>();
  const sources = new Map<string, { text: string; system: string }>();
  for (const [key, f] of [...digest.formats].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    events.set(key, f.hash);
    if (!sources.has(f.hash)) sources.set(f.hash, { text: textOf.get(f.path)!, system: key.slice(0, key.indexOf('/')) });
  }
  const kernel: KernelProfile = {
    release: meta.release,
    arch: meta.machine,
    wordSize: digest.longSize,
    hash: digest.hash,
    source: complete ? 'tracefs' : 'trace.dat',
    complete,
    events,
    formats: new LazyFormats(sources, digest.longSize),
    errors: digest.errors.map((e) => ({ path: e.path, message: e.error.message })),
  };
  return { complete, release: meta.release, machine: meta.machine, hash: digest.hash, files, kernel, cpuCount: Math.max(1, meta.cpuCount) };
}

/** The running kernel's profile from tracefs (`<tracefs>/events`). */
export async function readLiveProfile(tracefsPath: string): Promise<NodeProfile> {
  const dir = join(tracefsPath, 'events');
  let systems: string[];
  try {
    systems = (await readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch (e) {
    throw new AgentError('profile', `profile: cannot read ${dir}: ${(e as Error).message}`, { path: dir, cause: e });
  }
  const files: EventsTreeFile[] = [];
  const readOne = async (path: string, rel: string) => {
    try {
      files.push({ path: rel, text: await readFile(path, 'utf8') });
    } catch {
      // an event removed while reading (module unloaded): the next read sees the change
    }
  };
  await readOne(join(dir, 'header_page'), 'header_page');
  await readOne(join(dir, 'header_event'), 'header_event');
  for (const system of systems) {
    let events: string[];
    try {
      events = (await readdir(join(dir, system), { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
    } catch {
      continue;
    }
    await Promise.all(events.map((event) => readOne(join(dir, system, event, 'format'), `${system}/${event}/format`)));
  }
  if (files.length <= 2) throw new AgentError('profile', `profile: no event formats under ${dir}`, { path: dir });
  let cpuCount = availableParallelism();
  try {
    cpuCount = (await readdir(join(tracefsPath, 'per_cpu'))).filter((d) => /^cpu\d+$/.test(d)).length || cpuCount;
  } catch {
    // no per_cpu folder: the CPUs the process sees
  }
  return build(files, true, { release: release(), machine: machine(), cpuCount });
}

/** Opens a recording, its errors as AgentError `profile`. */
export function openRecording(path: string, options: { prefetch?: boolean } = {}): TraceDatFile {
  try {
    return openTraceDatFile(path, options);
  } catch (e) {
    if (isFormatError(e) || (e as NodeJS.ErrnoException).code !== undefined) {
      throw new AgentError('profile', `profile: ${path}: ${(e as Error).message}`, { path, cause: e });
    }
    throw e;
  }
}

/**
 * A recording's profile: the formats it carries, its uname's release and machine. Given a path it
 * opens and closes the file; given an open one (the feed's) it leaves it open.
 */
export async function readTraceDatProfile(recording: string | TraceDatFile): Promise<NodeProfile> {
  const file = typeof recording === 'string' ? openRecording(recording) : recording;
  try {
    const dat = file.reader.dat;
    const files: EventsTreeFile[] = [
      { path: 'header_page', text: dat.headerPageText },
      { path: 'header_event', text: dat.headerEventText },
    ];
    for (const f of dat.eventFormats) {
      const name = /^name:\s*(\S+)/m.exec(f.text)?.[1];
      if (name !== undefined) files.push({ path: `${f.system}/${name}/format`, text: f.text });
    }
    const { release: rel, arch } = parseUname(dat.uname);
    return await build(files, false, { release: rel, machine: arch, cpuCount: dat.cpuCount });
  } finally {
    if (typeof recording === 'string') file.close();
  }
}

/** The `.tar.gz` of the profile's files the registry's `agent.reportProfile` takes. */
export function profileTarball(profile: NodeProfile): Buffer {
  return gzipSync(writeTar(profile.files.map((f) => ({ path: `events/${f.path}`, text: f.text }))), { level: 6 });
}
