import { diffEventFormats, type FieldChange, parseUname } from '@probeyard/compat';
import {
  buildEventFormatSet,
  classifyEventsPath,
  decodeTraceDat,
  type EventFormat,
  type EventFormatSet,
  type EventsTreeFile,
  isFormatError,
  MemoryByteSource,
  parseEventFormat,
  readTar,
} from '@probeyard/formats';
import type { Db } from '../db/open.js';
import { notFound, RegistryError } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';

export const profileSelect = {
  id: true,
  name: true,
  release: true,
  machine: true,
  source: true,
  contentHash: true,
  createdAt: true,
  _count: { select: { formats: true, agents: true } },
} as const satisfies Prisma.KernelProfileSelect;

export function listProfiles(db: Db, tenantId: string) {
  return db.kernelProfile.findMany({ where: { tenantId }, orderBy: { name: 'asc' }, select: profileSelect });
}

export async function getProfile(db: Db, tenantId: string, name: string) {
  const p = await db.kernelProfile.findFirst({ where: { tenantId, name }, select: profileSelect });
  if (!p) throw notFound('kernel profile', name);
  return p;
}

/** The formats of a profile (system/event → format hash and text). */
export async function getProfileWithFormats(db: Db, tenantId: string, name: string) {
  const p = await db.kernelProfile.findFirst({
    where: { tenantId, name },
    select: {
      ...profileSelect,
      formats: { orderBy: [{ system: 'asc' }, { event: 'asc' }], select: { system: true, event: true, formatHash: true } },
    },
  });
  if (!p) throw notFound('kernel profile', name);
  return p;
}

/** One format file to store: content hash, event, exact text. */
export interface FormatRow {
  hash: string;
  system: string;
  event: string;
  text: string;
}

/**
 * Reads a base64 `.tar`/`.tar.gz` of an `events/` tree into a profile (packages/formats) and the
 * format rows to store. An unreadable archive or one without format files is `bad_request`.
 */
export async function parseEventsTarball(base64: string): Promise<{ set: EventFormatSet; rows: FormatRow[] }> {
  const bytes = new Uint8Array(Buffer.from(base64, 'base64'));
  let files: { path: string; text: string }[];
  try {
    const decoder = new TextDecoder('utf-8');
    files = readTar(bytes).map((f) => ({ path: f.path, text: decoder.decode(f.bytes) }));
  } catch (err) {
    if (isFormatError(err)) throw new RegistryError('bad_request', `kernel upload: ${err.message}`, {}, { cause: err });
    throw err;
  }
  const set = await buildEventFormatSet(files);
  if (set.formats.size === 0) {
    throw new RegistryError('bad_request', `kernel upload: no events/<system>/<event>/format files in the tarball (${files.length} files)`);
  }
  const textOf = new Map(files.filter((f) => classifyEventsPath(f.path)?.kind === 'format').map((f) => [f.path, f.text]));
  const rows = [...set.formats.values()].map((f) => ({ hash: f.hash, system: f.format.system, event: f.format.name, text: textOf.get(f.path) ?? '' }));
  return { set, rows };
}

/**
 * Reads a base64 trace.dat (trace-cmd v6/v7) into a profile of the formats it carries (only the
 * events it recorded) and the format rows to store, with the release and machine of its uname.
 */
export async function parseTraceDatUpload(base64: string): Promise<{ set: EventFormatSet; rows: FormatRow[]; release: string; machine: string }> {
  const bytes = new Uint8Array(Buffer.from(base64, 'base64'));
  let files: EventsTreeFile[];
  let uname: string | undefined;
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
    if (isFormatError(err)) throw new RegistryError('bad_request', `kernel upload: trace.dat: ${err.message}`, {}, { cause: err });
    throw err;
  }
  const set = await buildEventFormatSet(files);
  if (set.formats.size === 0) throw new RegistryError('bad_request', 'kernel upload: trace.dat: it carries no event format');
  const textOf = new Map(files.map((f) => [f.path, f.text]));
  const rows = [...set.formats.values()].map((f) => ({ hash: f.hash, system: f.format.system, event: f.format.name, text: textOf.get(f.path) ?? '' }));
  const { release, arch } = parseUname(uname);
  return { set, rows, release, machine: arch };
}

/** The difference of two profiles of a tenant: events only in one, and field changes of the others. */
export interface ProfileDiff {
  /** Events only in B (`system/event`). */
  added: string[];
  /** Events only in A. */
  removed: string[];
  /** Events whose format differs, with the field changes (an event may differ only in ID or print fmt: no changes). */
  changed: { event: string; changes: FieldChange[] }[];
  /** Events with the same format file in both. */
  same: number;
}

/** Diffs two stored profiles; only the formats that differ are parsed. `event` limits it to one event (`system/event` or bare name). */
export async function diffStoredProfiles(db: Db, tenantId: string, a: string, b: string, event?: string): Promise<ProfileDiff> {
  const load = async (name: string) => {
    const p = await db.kernelProfile.findFirst({ where: { tenantId, name }, select: { formats: { select: { system: true, event: true, formatHash: true } } } });
    if (!p) throw notFound('kernel profile', name);
    return new Map(p.formats.map((f) => [`${f.system}/${f.event}`, f.formatHash]));
  };
  const [ea, eb] = [await load(a), await load(b)];
  const keys = [...new Set([...ea.keys(), ...eb.keys()])].sort().filter((k) => event === undefined || k === event || k.slice(k.indexOf('/') + 1) === event);
  const out: ProfileDiff = { added: [], removed: [], changed: [], same: 0 };
  const differing: { key: string; ha: string; hb: string }[] = [];
  for (const key of keys) {
    const ha = ea.get(key);
    const hb = eb.get(key);
    if (ha === undefined) out.added.push(key);
    else if (hb === undefined) out.removed.push(key);
    else if (ha === hb) out.same++;
    else differing.push({ key, ha, hb });
  }
  const texts = new Map(
    (await db.eventFormat.findMany({ where: { hash: { in: differing.flatMap((d) => [d.ha, d.hb]) } }, select: { hash: true, text: true } })).map((f) => [f.hash, f.text]),
  );
  for (const d of differing) {
    const system = d.key.slice(0, d.key.indexOf('/'));
    try {
      const fa = parseEventFormat(texts.get(d.ha) ?? '', { system });
      const fb = parseEventFormat(texts.get(d.hb) ?? '', { system });
      out.changed.push({ event: d.key, changes: diffEventFormats(fa, fb) });
    } catch (err) {
      if (!isFormatError(err)) throw err;
      out.changed.push({ event: d.key, changes: [] });
    }
  }
  return out;
}

/** The parsed formats of `events` (bare event names) in a profile of the tenant: what a program was built against. */
export async function profileBuildFormats(db: Db, tenantId: string, name: string, events: Set<string>): Promise<EventFormat[]> {
  const p = await db.kernelProfile.findFirst({
    where: { tenantId, name },
    select: { formats: { where: { event: { in: [...events] } }, orderBy: [{ system: 'asc' }, { event: 'asc' }], select: { system: true, format: { select: { text: true } } } } },
  });
  if (!p) throw notFound('kernel profile', name);
  const out: EventFormat[] = [];
  for (const f of p.formats) {
    try {
      out.push(parseEventFormat(f.format.text, { system: f.system }));
    } catch (err) {
      if (!isFormatError(err)) throw err;
    }
  }
  return out;
}
