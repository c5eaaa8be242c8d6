import { diffEventFormats, type FieldChange, parseUname } from '@probeyard/compat';
import { isFormatError, parseEventFormat } from '@probeyard/formats';
import type { Db } from '../db/open.js';
import { notFound } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { ParsedProfile } from './upload-parse.js';
import type { UploadParser } from './upload-parser.js';

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

export type { FormatRow, ParsedProfile } from './upload-parse.js';

/**
 * Reads a base64 `.tar`/`.tar.gz` of an `events/` tree into the profile's content hash and the
 * format rows to store, on a worker of `uploads` (src/data/upload-parser.ts). An unreadable
 * archive, one without format files, one not parsed in time or too big to parse is `bad_request`.
 */
export function parseEventsTarball(uploads: UploadParser, base64: string, tenantId: string): Promise<ParsedProfile> {
  return uploads.parse('tarball', base64, tenantId);
}

/**
 * Reads a base64 trace.dat (trace-cmd v6/v7) into a profile of the formats it carries (only the
 * events it recorded) and the format rows to store, with the release and machine of its uname;
 * parsed on a worker of `uploads`, refused as {@link parseEventsTarball}.
 */
export async function parseTraceDatUpload(uploads: UploadParser, base64: string, tenantId: string): Promise<ParsedProfile & { release: string; machine: string }> {
  const parsed = await uploads.parse('traceDat', base64, tenantId);
  const { release, arch } = parseUname(parsed.uname);
  return { ...parsed, release, machine: arch };
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

/** The format texts of `events` (bare event names) in a profile of the tenant: what a program was built against (parsed on the verifier's worker). */
export async function profileBuildFormatTexts(db: Db, tenantId: string, name: string, events: Set<string>): Promise<{ system: string; text: string }[]> {
  const p = await db.kernelProfile.findFirst({
    where: { tenantId, name },
    select: { formats: { where: { event: { in: [...events] } }, orderBy: [{ system: 'asc' }, { event: 'asc' }], select: { system: true, format: { select: { text: true } } } } },
  });
  if (!p) throw notFound('kernel profile', name);
  return p.formats.map((f) => ({ system: f.system, text: f.format.text }));
}
