// The format files a program compiled in the browser needs: the events its probes name (with
// bpftrace's `*` and `?` wildcards), in one kernel profile of the tenant (by name, or the profile
// an agent reported). The live editor compiles, verifies and relocates against these.
import type { Db } from '../db/open.js';
import { notFound } from '../errors.js';

/** At most this many formats in one answer (a wildcard that matches more is cut, and says so). */
export const FORMATS_FOR_LIMIT = 64;

/** `system:event` or `system/event`, each part possibly with `*` and `?`. */
export function eventPatternMatcher(pattern: string): (system: string, event: string) => boolean {
  const [sys = '', ev = ''] = pattern.split(/[:/]/, 2);
  const re = (p: string) => new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  const s = re(sys);
  const e = re(ev);
  return (system, event) => s.test(system) && e.test(event);
}

/** The events of `names` that any of `patterns` matches (at most `limit`), and the patterns that match none. */
export function matchEvents<T extends { system: string; event: string }>(names: readonly T[], patterns: readonly string[], limit = FORMATS_FOR_LIMIT): { chosen: T[]; missing: string[]; truncated: boolean } {
  const matchers = patterns.map((p) => ({ pattern: p, test: eventPatternMatcher(p), hit: false }));
  const matched: T[] = [];
  for (const n of names) {
    let any = false;
    for (const m of matchers) {
      if (m.test(n.system, n.event)) {
        m.hit = true;
        any = true;
      }
    }
    if (any) matched.push(n);
  }
  return { chosen: matched.slice(0, limit), missing: matchers.filter((m) => !m.hit).map((m) => m.pattern), truncated: matched.length > limit };
}

export interface FormatsFor {
  profile: { name: string; release: string; machine: string; complete: boolean; contentHash: string } | null;
  /** Each matched event's format file text, by `system/event`, sorted. */
  formats: { system: string; event: string; text: string }[];
  /** Patterns that matched no event of the profile. */
  missing: string[];
  /** True when more than {@link FORMATS_FOR_LIMIT} events matched (the first ones are given). */
  truncated: boolean;
}

/**
 * The formats of the events `patterns` name in a profile of `tenantId`: by profile name, or the
 * profile agent `agentId` (of the tenant) reported (`profile: null` when it has reported none).
 * Another tenant's profile or agent is `NOT_FOUND`, as a missing one.
 */
export async function formatsFor(db: Db, tenantId: string, by: { profile: string } | { agentId: string }, patterns: readonly string[]): Promise<FormatsFor> {
  let profileId: string;
  if ('agentId' in by) {
    const agent = await db.agent.findFirst({ where: { id: by.agentId, tenantId }, select: { kernelProfileId: true } });
    if (!agent) throw notFound('agent', by.agentId);
    if (!agent.kernelProfileId) return { profile: null, formats: [], missing: [...patterns], truncated: false };
    profileId = agent.kernelProfileId;
  } else {
    const p = await db.kernelProfile.findFirst({ where: { tenantId, name: by.profile }, select: { id: true } });
    if (!p) throw notFound('kernel profile', by.profile);
    profileId = p.id;
  }
  const profile = await db.kernelProfile.findFirst({
    where: { id: profileId, tenantId },
    select: { name: true, release: true, machine: true, complete: true, contentHash: true },
  });
  if (!profile) throw notFound('kernel profile', profileId);
  // the names only (a few thousand short rows); the texts of the matched ones after
  const names = await db.kernelProfileFormat.findMany({ where: { profileId }, select: { system: true, event: true }, orderBy: [{ system: 'asc' }, { event: 'asc' }] });
  const { chosen, missing, truncated } = matchEvents(names, patterns);
  const rows = chosen.length
    ? await db.kernelProfileFormat.findMany({
        where: { profileId, OR: chosen.map((c) => ({ system: c.system, event: c.event })) },
        select: { system: true, event: true, format: { select: { text: true } } },
        orderBy: [{ system: 'asc' }, { event: 'asc' }],
      })
    : [];
  return {
    profile,
    formats: rows.map((r) => ({ system: r.system, event: r.event, text: r.format.text })),
    missing,
    truncated,
  };
}
