import { buildEventFormatSet, classifyEventsPath, type EventFormatSet, isFormatError, readTar } from '@probeyard/formats';
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
