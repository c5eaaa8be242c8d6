import { existsSync, statSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { arch as osArch, release as osRelease } from 'node:os';
import { join } from 'node:path';
import { FormatError, traceDatMagic } from '@probeyard/formats';
import { findTracefs, openTraceDatFile, readEventsTree } from '@probeyard/formats/node';
import { CompatError } from '../errors.js';
import { type KernelProfile, type ProfileMeta, profileOfFormatSet, profileOfTraceDat, readProfileTarball } from '../kernel-profile.js';

const archOfNode: Record<string, string> = { x64: 'x86_64', arm64: 'aarch64', arm: 'arm', ia32: 'i686', riscv64: 'riscv64', s390x: 's390x', ppc64: 'ppc64le' };

/** A profile from an `events/` directory (the directory itself or its parent). */
export async function readProfileTree(dir: string, meta: ProfileMeta = {}): Promise<KernelProfile> {
  const events = existsSync(join(dir, 'events')) && statSync(join(dir, 'events')).isDirectory() ? join(dir, 'events') : dir;
  try {
    return profileOfFormatSet(await readEventsTree(events), 'events-tree', meta);
  } catch (e) {
    if (e instanceof FormatError) throw new CompatError('not-found', `read profile ${dir}: ${e.message}`, { cause: e });
    throw e;
  }
}

/** A profile from a trace.dat file: the formats it recorded, release and arch from its uname. */
export async function readProfileTraceDat(path: string): Promise<KernelProfile> {
  let file: ReturnType<typeof openTraceDatFile>;
  try {
    file = openTraceDatFile(path);
  } catch (e) {
    if (e instanceof FormatError) throw new CompatError('malformed', `read profile ${path}: ${e.message}`, { cause: e });
    throw e;
  }
  try {
    return await profileOfTraceDat(file.reader.dat);
  } finally {
    file.close();
  }
}

/** This machine's kernel, from the mounted tracefs (`uname -r` and arch from node:os). */
export async function readLiveProfile(): Promise<KernelProfile> {
  const mount = findTracefs();
  if (mount === undefined) throw new CompatError('not-found', 'read live profile: no mounted tracefs (/sys/kernel/tracing)');
  const profile = profileOfFormatSet(await readEventsTree(join(mount.path, 'events')), 'tracefs', {
    release: osRelease(),
    arch: archOfNode[osArch()] ?? osArch(),
  });
  return profile;
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
 * a tarball of an events tree (`.tar`, `.tar.gz`); `live` reads this machine's tracefs.
 */
export async function readProfile(path: string, meta: ProfileMeta = {}): Promise<KernelProfile> {
  if (path === 'live') return readLiveProfile();
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch (e) {
    throw new CompatError('not-found', `read profile ${path}: ${(e as Error).message}`, { cause: e });
  }
  if (isDir) return readProfileTree(path, meta);
  const magic = await head(path, traceDatMagic.length);
  if (magic.length === traceDatMagic.length && magic.every((b, i) => b === traceDatMagic[i])) return readProfileTraceDat(path);
  return readProfileTarball(new Uint8Array(await readFile(path)), meta);
}
