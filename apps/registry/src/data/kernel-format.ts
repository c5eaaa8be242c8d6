// One event's format in a kernel profile, parsed into its fields (offset, size, signedness,
// `__data_loc`), for the side-by-side format diff.
import { layoutOf } from '@probeyard/compat';
import { isFormatError, parseEventFormat } from '@probeyard/formats';
import type { Db } from '../db/open.js';
import { notFound, RegistryError } from '../errors.js';
import { profileSelect } from './kernels.js';

/** `system/event` or a bare event name (the first system that has it). */
export async function profileEventFormat(db: Db, tenantId: string, profile: string, event: string) {
  const [system, name] = event.includes('/') ? event.split('/', 2) : [undefined, event];
  const p = await db.kernelProfile.findFirst({
    where: { tenantId, name: profile },
    select: {
      name: true,
      release: true,
      formats: { where: { event: name, ...(system ? { system } : {}) }, orderBy: { system: 'asc' }, take: 1, select: { system: true, event: true, format: { select: { text: true } } } },
    },
  });
  if (!p) throw notFound('kernel profile', profile);
  const f = p.formats[0];
  if (!f) return { profile: p.name, release: p.release, event: null };
  try {
    const layout = layoutOf(parseEventFormat(f.format.text, { system: f.system }));
    return { profile: p.name, release: p.release, event: { system: f.system, name: f.event, fields: layout.fields, text: f.format.text } };
  } catch (err) {
    if (isFormatError(err)) throw new RegistryError('bad_request', `kernel format: ${f.system}/${f.event} of ${profile} does not parse: ${err.message}`);
    throw err;
  }
}

/** A page of a profile's events (`system/event`), with a substring filter. */
export async function profileEvents(db: Db, tenantId: string, profile: string, q: { search?: string | undefined; offset: number; limit: number }) {
  const p = await db.kernelProfile.findFirst({ where: { tenantId, name: profile }, select: { id: true } });
  if (!p) throw notFound('kernel profile', profile);
  const where = {
    profileId: p.id,
    ...(q.search ? { OR: [{ event: { contains: q.search, mode: 'insensitive' as const } }, { system: { contains: q.search, mode: 'insensitive' as const } }] } : {}),
  };
  const [events, total] = await Promise.all([
    db.kernelProfileFormat.findMany({ where, orderBy: [{ system: 'asc' }, { event: 'asc' }], skip: q.offset, take: q.limit, select: { system: true, event: true, formatHash: true } }),
    db.kernelProfileFormat.count({ where }),
  ]);
  return { events, total };
}

/** A page of the tenant's profiles by name, after `cursor` (the previous page's last name). */
export function listProfilesPage(db: Db, tenantId: string, page: { cursor?: string | undefined; limit: number }) {
  return db.kernelProfile.findMany({
    where: { tenantId, ...(page.cursor ? { name: { gt: page.cursor } } : {}) },
    orderBy: { name: 'asc' },
    take: page.limit,
    select: profileSelect,
  });
}
