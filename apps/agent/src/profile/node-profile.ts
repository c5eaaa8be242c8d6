// The node's kernel profile: the format files its programs are relocated against and that it
// reports to the registry. Live: every `events/*/*/format` of the node's tracefs (complete).
// A replay: the formats a trace.dat carries (partial: a recording holds only the events it
// recorded), so one machine can host nodes of other kernels.
import { readdir, readFile } from 'node:fs/promises';
import { availableParallelism, machine, release } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { type KernelProfile, parseUname, profileOfFormatSet } from '@probeyard/compat';
import { buildEventFormatSet, type EventsTreeFile, isFormatError } from '@probeyard/formats';
import { openTraceDatFile } from '@probeyard/formats/node';
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

async function build(files: EventsTreeFile[], complete: boolean, meta: { release: string; machine: string; cpuCount: number }): Promise<NodeProfile> {
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const set = await buildEventFormatSet(files);
  const kernel = profileOfFormatSet(set, complete ? 'tracefs' : 'trace.dat', { release: meta.release, arch: meta.machine });
  return { complete, release: meta.release, machine: meta.machine, hash: set.hash, files, kernel, cpuCount: Math.max(1, meta.cpuCount) };
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

/** A recording's profile: the formats it carries, its uname's release and machine. */
export async function readTraceDatProfile(path: string): Promise<NodeProfile> {
  let file: ReturnType<typeof openTraceDatFile>;
  try {
    file = openTraceDatFile(path);
  } catch (e) {
    if (isFormatError(e) || (e as NodeJS.ErrnoException).code !== undefined) {
      throw new AgentError('profile', `profile: ${path}: ${(e as Error).message}`, { path, cause: e });
    }
    throw e;
  }
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
    file.close();
  }
}

/** The `.tar.gz` of the profile's files the registry's `agent.reportProfile` takes. */
export function profileTarball(profile: NodeProfile): Buffer {
  return gzipSync(writeTar(profile.files.map((f) => ({ path: `events/${f.path}`, text: f.text }))), { level: 6 });
}
