import { existsSync, readFileSync, statSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { arch as osArch, release as osRelease } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { FormatError, traceDatMagic } from '@probeyard/formats';
import { describeTracefsSearch, type FindTracefsOptions, openTraceDatFile, readEventsTree, searchTracefs } from '@probeyard/formats/node';
import { CompatError } from '../errors.js';
import { type KernelProfile, type ProfileMeta, parseKernelVersionFile, profileOfFormatSet, profileOfTraceDat, readProfileTarball } from '../kernel-profile.js';

const archOfNode: Record<string, string> = { x64: 'x86_64', arm64: 'aarch64', arm: 'arm', ia32: 'i686', riscv64: 'riscv64', s390x: 's390x', ppc64: 'ppc64le' };

/**
 * The release a dump's `kernel_version.txt` names: in the `events/` folder, or beside it (where a
 * tracefs dump such as `../shared/corpus/tracefs/linux-6.18` keeps it). '' when there is none.
 */
export function kernelVersionOfTree(events: string): string {
  const candidates = [join(events, 'kernel_version.txt')];
  if (basename(events) === 'events') candidates.push(join(dirname(events), 'kernel_version.txt'));
  for (const path of candidates) {
    let text: string;
    try {
      if (!statSync(path).isFile()) continue;
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    const release = parseKernelVersionFile(text);
    if (release !== '') return release;
  }
  return '';
}

/**
 * A profile from an `events/` directory (the directory itself or its parent): complete unless
 * `meta.complete` is false (a folder that holds some events only); its release is `meta.release`,
 * else what a `kernel_version.txt` of the dump names ({@link kernelVersionOfTree}).
 */
export async function readProfileTree(dir: string, meta: ProfileMeta = {}): Promise<KernelProfile> {
  const events = existsSync(join(dir, 'events')) && statSync(join(dir, 'events')).isDirectory() ? join(dir, 'events') : dir;
  try {
    const set = await readEventsTree(events);
    const release = meta.release ?? (kernelVersionOfTree(events) || undefined);
    return profileOfFormatSet(set, 'events-tree', release === undefined ? meta : { ...meta, release });
  } catch (e) {
    if (e instanceof FormatError) throw new CompatError('not-found', `read profile ${dir}: ${e.message}`, { cause: e });
    throw e;
  }
}

/**
 * A profile from a trace.dat file: the formats it recorded (always partial), release and arch
 * from its uname unless `meta.release` names the kernel.
 */
export async function readProfileTraceDat(path: string, meta: Pick<ProfileMeta, 'release'> = {}): Promise<KernelProfile> {
  let file: ReturnType<typeof openTraceDatFile>;
  try {
    file = openTraceDatFile(path);
  } catch (e) {
    if (e instanceof FormatError) throw new CompatError('malformed', `read profile ${path}: ${e.message}`, { cause: e });
    throw e;
  }
  try {
    const profile = await profileOfTraceDat(file.reader.dat);
    if (meta.release !== undefined) profile.release = meta.release;
    return profile;
  } finally {
    file.close();
  }
}

/**
 * This machine's kernel, from its tracefs wherever it is mounted (`/sys/kernel/tracing`,
 * `/sys/kernel/debug/tracing`, or any tracefs mount of `/proc/mounts`); `uname -r` and arch from
 * node:os unless `meta` names them. Always complete. The error lists every place looked at.
 */
export async function readLiveProfile(meta: Omit<ProfileMeta, 'complete'> = {}, where: Omit<FindTracefsOptions, 'mount'> = {}): Promise<KernelProfile> {
  const search = searchTracefs(where);
  if (search.mount === undefined) throw new CompatError('not-found', `read live profile: ${describeTracefsSearch(search, where.mountsFile)}`);
  return profileOfFormatSet(await readEventsTree(join(search.mount.path, 'events')), 'tracefs', {
    release: meta.release ?? osRelease(),
    arch: meta.arch ?? archOfNode[osArch()] ?? osArch(),
    ...(meta.wordSize !== undefined ? { wordSize: meta.wordSize } : {}),
    complete: true,
  });
}

async function head(path: string, n: number): Promise<Uint8Array> {
  const fh = await open(path, 'r');
  try {
    const buf = new Uint8Array(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/**
 * A profile from a path: a directory is an `events/` tree, a file a trace.dat (by its magic) or
 * a tarball of an events tree (`.tar`, `.tar.gz`); `live` reads this machine's tracefs. `meta`
 * names the release (over what the source says) and marks a folder or tarball partial; the live
 * tracefs is always complete and a trace.dat always partial.
 */
export async function readProfile(path: string, meta: ProfileMeta = {}): Promise<KernelProfile> {
  if (path === 'live') {
    const { complete: _, ...rest } = meta;
    return readLiveProfile(rest);
  }
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch (e) {
    throw new CompatError('not-found', `read profile ${path}: ${(e as Error).message}`, { cause: e });
  }
  if (isDir) return readProfileTree(path, meta);
  const magic = await head(path, traceDatMagic.length);
  if (magic.length === traceDatMagic.length && magic.every((b, i) => b === traceDatMagic[i])) {
    return readProfileTraceDat(path, meta.release !== undefined ? { release: meta.release } : {});
  }
  return readProfileTarball(new Uint8Array(await readFile(path)), meta);
}
