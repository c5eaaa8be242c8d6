import { diffEventFormats, type FieldChange, parseKernelVersionFile, parseUname } from '@probeyard/compat';
import { isFormatError, parseEventFormat } from '@probeyard/formats';
import type { Db } from '../db/open.js';
import { notFound } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { writeAudit } from './audit.js';
import type { Actor, Tx } from './tx.js';
import type { FormatRow, ParsedProfile } from './upload-parse.js';
import type { UploadParser } from './upload-parser.js';

export const profileSelect = {
  id: true,
  name: true,
  release: true,
  machine: true,
  source: true,
  complete: true,
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
 * format rows to store, on a worker of `uploads` (src/data/upload-parser.ts), with the release its
 * `kernel_version.txt` names ('' when it has none). An unreadable archive, one without format
 * files, one not parsed in time or too big to parse is `bad_request`.
 */
export async function parseEventsTarball(uploads: UploadParser, base64: string, tenantId: string): Promise<ParsedProfile & { release: string }> {
  const parsed = await uploads.parse('tarball', base64, tenantId);
  return { ...parsed, release: parsed.kernelVersion === undefined ? '' : parseKernelVersionFile(parsed.kernelVersion) };
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

/**
 * Rows per INSERT statement when a profile's formats are stored. Measured on PGlite (2 cores,
 * loaded): Prisma's `createMany` costs ~2.7 ms a row here (20,000 formats: 28 s for the formats
 * and 17 s for the profile's links, all of it one block of the server's thread), a plain multi-row
 * INSERT ~0.2 ms a row. In chunks of 200 rows, 20,000 formats took 8.5 s in all, and the server's
 * thread got a turn every 29 ms (median; p99 343 ms, on a machine at load average 12, whose idle
 * p99 was 19 ms) instead of being held for 28 s and then 17 s.
 */
const insertChunkRows = 200;

/**
 * Options of the transaction that makes a profile and stores its formats: up to 10,000 formats in
 * chunks take seconds on a loaded machine (Prisma's default of 5 s ended such an upload in a 500).
 */
export const profileTransaction = { maxWait: 30_000, timeout: 120_000 } as const;

/** The lock between storing formats (shared) and collecting unused ones (exclusive), per database. */
const formatsLock = 'probeyard:event-formats';

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Stores a new profile's format rows (each format once by content hash, shared with every profile
 * that has it) and links them to the profile, in chunks that yield to the event loop between
 * statements. Inside the transaction that makes the profile; holds the formats lock shared, so a
 * collection of unused formats ({@link collectUnusedFormats}) never removes a format this
 * transaction is about to link. Returns how many formats were new.
 */
export async function insertProfileFormats(tx: Tx, profileId: string, rows: readonly FormatRow[]): Promise<number> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock_shared(hashtextextended(${formatsLock}, 0))`;
  let created = 0;
  for (let at = 0; at < rows.length; at += insertChunkRows) {
    const part = rows.slice(at, at + insertChunkRows);
    const values = part.map((_, i) => `($${i * 4 + 1}, $${i * 4 + 2}, $${i * 4 + 3}, $${i * 4 + 4})`).join(', ');
    created += await tx.$executeRawUnsafe(
      `INSERT INTO "EventFormat" ("hash", "system", "event", "text") VALUES ${values} ON CONFLICT ("hash") DO NOTHING`,
      ...part.flatMap((r) => [r.hash, r.system, r.event, r.text]),
    );
    await yieldToEventLoop();
  }
  for (let at = 0; at < rows.length; at += insertChunkRows) {
    const part = rows.slice(at, at + insertChunkRows);
    const values = part.map((_, i) => `($1, $${i * 3 + 2}, $${i * 3 + 3}, $${i * 3 + 4})`).join(', ');
    await tx.$executeRawUnsafe(
      `INSERT INTO "KernelProfileFormat" ("profileId", "system", "event", "formatHash") VALUES ${values}`,
      profileId,
      ...part.flatMap((r) => [r.system, r.event, r.hash]),
    );
    await yieldToEventLoop();
  }
  return created;
}

/**
 * Deletes the format rows among `hashes` that no profile of any tenant links to any more (after a
 * profile was deleted). Formats are shared across tenants by content hash: one still linked by
 * another tenant's profile stays. Takes the formats lock exclusively, so no upload is between
 * storing a format and linking it. Returns how many were deleted.
 */
export async function collectUnusedFormats(db: Db, hashes: readonly string[]): Promise<number> {
  if (hashes.length === 0) return 0;
  let deleted = 0;
  for (let at = 0; at < hashes.length; at += insertChunkRows) {
    const part = hashes.slice(at, at + insertChunkRows);
    deleted += await db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${formatsLock}, 0))`;
      return tx.$executeRaw`DELETE FROM "EventFormat" f WHERE f."hash" = ANY(${part}::text[]) AND NOT EXISTS (SELECT 1 FROM "KernelProfileFormat" pf WHERE pf."formatHash" = f."hash")`;
    });
    await yieldToEventLoop();
  }
  return deleted;
}

/**
 * Removes a profile's links to its formats in chunks that yield to the event loop between
 * statements, returning the formats it linked. (Deleting the profile would cascade to them in one
 * statement, and reading them first through Prisma costs ms a row: on PGlite, with 9,000 formats,
 * seconds of the server's thread in one piece.)
 */
async function unlinkProfileFormats(tx: Tx, profileId: string): Promise<string[]> {
  const hashes = new Set<string>();
  for (;;) {
    const part = await tx.$queryRaw<{ formatHash: string }[]>`
      DELETE FROM "KernelProfileFormat" WHERE ("profileId", "system", "event") IN (
        SELECT "profileId", "system", "event" FROM "KernelProfileFormat" WHERE "profileId" = ${profileId} LIMIT ${insertChunkRows}
      ) RETURNING "formatHash"`;
    for (const r of part) hashes.add(r.formatHash);
    await yieldToEventLoop();
    if (part.length < insertChunkRows) return [...hashes];
  }
}

/**
 * Deletes a profile of the tenant (its links, compat results and jobs go with it; agents on it
 * are left without a profile until they report again), then collects the formats no profile uses
 * any more. Another tenant's profile is `not_found`.
 */
export async function deleteProfile(db: Db, input: { tenantId: string; actor: Actor; name: string }): Promise<{ id: string; formats: number; collected: number }> {
  const { id, hashes } = await db.$transaction(async (tx) => {
    const p = await tx.kernelProfile.findFirst({ where: { tenantId: input.tenantId, name: input.name }, select: { id: true, contentHash: true } });
    if (!p) throw notFound('kernel profile', input.name);
    const hashes = await unlinkProfileFormats(tx, p.id);
    await tx.kernelProfile.delete({ where: { id: p.id }, select: { id: true } });
    await writeAudit(tx, {
      tenantId: input.tenantId,
      actor: input.actor,
      action: 'kernel.delete',
      targetType: 'kernel_profile',
      targetId: p.id,
      detail: { name: input.name, contentHash: p.contentHash, formats: hashes.length },
    });
    return { id: p.id, hashes };
  }, profileTransaction);
  const collected = await collectUnusedFormats(db, hashes);
  return { id, formats: hashes.length, collected };
}

/**
 * After an agent moved to another kernel profile: the profile it left, when agents made it
 * (`source: agent`) and no agent is on it any more, is deleted with its formats no profile uses
 * (a node that reports a new kernel again and again does not pile up profiles and formats). Profiles
 * uploaded by users stay until they delete them (`kernel.delete`).
 */
export async function collectReplacedAgentProfile(db: Db, tenantId: string, profileId: string): Promise<boolean> {
  const hashes = await db.$transaction(async (tx) => {
    const p = await tx.kernelProfile.findFirst({ where: { id: profileId, tenantId, source: 'agent', agents: { none: {} } }, select: { id: true, name: true, contentHash: true } });
    if (!p) return undefined;
    // Taken only while still without agents (an agent linking to it meanwhile waits for this lock).
    const held = await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "KernelProfile" WHERE "id" = ${p.id} FOR UPDATE`;
    if (held.length === 0 || (await tx.agent.count({ where: { kernelProfileId: p.id } })) > 0) return undefined;
    const hashes = await unlinkProfileFormats(tx, p.id);
    await tx.kernelProfile.delete({ where: { id: p.id }, select: { id: true } });
    await writeAudit(tx, {
      tenantId,
      actor: { kind: 'system', id: null },
      action: 'kernel.delete',
      targetType: 'kernel_profile',
      targetId: p.id,
      detail: { name: p.name, contentHash: p.contentHash, formats: hashes.length, reason: 'no agent reports this kernel any more' },
    });
    return hashes;
  }, profileTransaction);
  if (!hashes) return false;
  await collectUnusedFormats(db, hashes);
  return true;
}
