// Providers (issue 19): versioned, immutable definitions of stable probes (packages/compat
// `provider.ts`), per tenant or instance-wide. A script version pins each provider it uses to a
// major version; its verdicts follow the newest non-yanked version of that major, so publishing a
// provider version (or yanking one) marks those verdicts stale and queues their recomputation —
// one provider fix repairs every program that uses it, without republishing them.
import { createHash } from 'node:crypto';
import { isCompatError, type ProviderDefinition, parseProvider } from '@probeyard/compat';
import type { Db } from '../db/open.js';
import { isUniqueViolation, notFound, RegistryError } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { writeAudit } from './audit.js';
import { enqueueCompatJob } from './compat.js';
import { parseSemver } from './programs.js';
import type { Actor, Tx } from './tx.js';

/** `Provider.scope` of an instance-wide provider. */
export const INSTANCE_SCOPE = 'instance';

/** A version as listings show it (never the text). */
export const providerVersionSelect = {
  id: true,
  version: true,
  digest: true,
  publishedAt: true,
  publishedById: true,
  yankedAt: true,
  yankReason: true,
} as const satisfies Prisma.ProviderVersionSelect;

const versionOrder = [{ major: 'desc' }, { minor: 'desc' }, { patch: 'desc' }, { prerelease: 'asc' }] as const satisfies Prisma.ProviderVersionOrderByWithRelationInput[];

export const providerSelect = {
  id: true,
  name: true,
  scope: true,
  description: true,
  createdAt: true,
  versions: { select: providerVersionSelect, orderBy: versionOrder },
} as const satisfies Prisma.ProviderSelect;

/** The providers a tenant sees: its own, then the instance-wide ones its own do not shadow. */
export async function listProviders(db: Db | Tx, tenantId: string) {
  const rows = await db.provider.findMany({ where: { scope: { in: [tenantId, INSTANCE_SCOPE] } }, orderBy: { name: 'asc' }, select: providerSelect });
  const own = new Set(rows.filter((r) => r.scope === tenantId).map((r) => r.name));
  return rows.filter((r) => r.scope === tenantId || !own.has(r.name));
}

/** One provider as a tenant sees it (its own shadows an instance-wide one); another tenant's is `not_found`. */
export async function getProvider(db: Db | Tx, tenantId: string, name: string) {
  const rows = await db.provider.findMany({ where: { name, scope: { in: [tenantId, INSTANCE_SCOPE] } }, select: providerSelect });
  const p = rows.find((r) => r.scope === tenantId) ?? rows[0];
  if (!p) throw notFound('provider', name);
  return p;
}

/** One version's definition and text, of a provider the tenant sees. */
export async function getProviderVersion(db: Db | Tx, tenantId: string, name: string, version: string) {
  const p = await getProvider(db, tenantId, name);
  const v = await db.providerVersion.findFirst({ where: { providerId: p.id, version }, select: { ...providerVersionSelect, text: true, definition: true } });
  if (!v) throw notFound('provider version', `${name}@${version}`);
  return { provider: p, version: v };
}

/**
 * The definitions a tenant's scripts resolve through: per provider it sees, the newest non-yanked
 * release of the pinned major (`pins`), or of any major for a provider not pinned. A pinned
 * provider without such a version is left out (its probes then do not resolve: the reason says so).
 */
export async function resolveProviders(db: Db | Tx, tenantId: string, pins?: Record<string, number>): Promise<ProviderDefinition[]> {
  return (await resolveProviderReleases(db, tenantId, pins)).map((r) => r.definition);
}

/** A release a pin resolves to: its version, the published text and its definition. */
export interface ProviderRelease {
  name: string;
  version: string;
  text: string;
  definition: ProviderDefinition;
}

/** {@link resolveProviders} with each release's version and published text (what an agent is handed). */
export async function resolveProviderReleases(db: Db | Tx, tenantId: string, pins?: Record<string, number>): Promise<ProviderRelease[]> {
  const visible = await listProviders(db, tenantId);
  const out: ProviderRelease[] = [];
  for (const p of visible) {
    if (pins !== undefined && !Object.hasOwn(pins, p.name)) continue;
    const major = pins?.[p.name];
    const v = await db.providerVersion.findFirst({
      where: { providerId: p.id, yankedAt: null, prerelease: '', ...(major !== undefined ? { major } : {}) },
      orderBy: versionOrder,
      select: { version: true, text: true, definition: true },
    });
    if (v) out.push({ name: p.name, version: v.version, text: v.text, definition: v.definition as unknown as ProviderDefinition });
  }
  return out;
}

/**
 * The release each `name@major` pin of a tenant resolves to now (`name@major` → `name@version`;
 * absent when none: all yanked, or the provider is gone), in two queries whatever the number of
 * pins: what `agent.poll` lists with each assignment of a program that pins providers, so that a
 * provider release changes the answer (and its ETag) of exactly the agents that run such programs.
 */
export async function resolvedPins(db: Db | Tx, tenantId: string, pins: Iterable<readonly [string, number]>): Promise<Map<string, string>> {
  const wanted = new Map<string, Set<number>>();
  for (const [name, major] of pins) wanted.set(name, (wanted.get(name) ?? new Set()).add(major));
  const out = new Map<string, string>();
  if (wanted.size === 0) return out;
  const rows = await db.provider.findMany({ where: { name: { in: [...wanted.keys()] }, scope: { in: [tenantId, INSTANCE_SCOPE] } }, select: { id: true, name: true, scope: true } });
  // a tenant's own provider shadows the instance-wide one of the same name
  const chosen = new Map<string, { id: string; name: string }>();
  for (const r of rows) if (r.scope === tenantId || !chosen.has(r.name)) chosen.set(r.name, r);
  const nameOf = new Map([...chosen.values()].map((r) => [r.id, r.name]));
  const majors = [...new Set([...wanted.values()].flatMap((s) => [...s]))];
  const versions = await db.providerVersion.findMany({
    where: { providerId: { in: [...nameOf.keys()] }, yankedAt: null, prerelease: '', major: { in: majors } },
    orderBy: versionOrder,
    select: { providerId: true, major: true, version: true },
  });
  for (const v of versions) {
    const name = nameOf.get(v.providerId)!;
    const key = `${name}@${v.major}`;
    if (wanted.get(name)?.has(v.major) && !out.has(key)) out.set(key, `${name}@${v.version}`);
  }
  return out;
}

/**
 * The agents (by tenant) with a target of a version pinning `name@major` in the given tenants:
 * those whose `agent.poll` answer a release of that major changes.
 */
async function agentsPinning(tx: Tx, tenants: readonly string[], name: string, major: number): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (tenants.length === 0) return out;
  const rows = await tx.deploymentTarget.findMany({
    where: { tenantId: { in: [...tenants] }, deployment: { version: { providerPins: { path: [name], equals: major } } } },
    distinct: ['agentId'],
    select: { tenantId: true, agentId: true },
  });
  for (const r of rows) out.set(r.tenantId, [...(out.get(r.tenantId) ?? []), r.agentId]);
  return out;
}

/**
 * Marks stale the verdicts of every version that pins `name@major` and resolves it through this
 * scope (a tenant's own provider; or the instance's, for tenants without their own of that name),
 * and queues a compat job for each tenant concerned. Returns the tenants.
 */
async function recomputeUsers(tx: Tx, scope: string, name: string, major: number): Promise<string[]> {
  let tenants: string[];
  if (scope === INSTANCE_SCOPE) {
    const shadowing = new Set((await tx.provider.findMany({ where: { name, scope: { not: INSTANCE_SCOPE } }, select: { scope: true } })).map((p) => p.scope));
    const users = await tx.programVersion.findMany({ where: { providerPins: { path: [name], equals: major } }, distinct: ['tenantId'], select: { tenantId: true } });
    tenants = users.map((u) => u.tenantId).filter((t) => !shadowing.has(t));
  } else {
    const users = await tx.programVersion.count({ where: { tenantId: scope, providerPins: { path: [name], equals: major } } });
    tenants = users > 0 ? [scope] : [];
  }
  if (tenants.length === 0) return [];
  await tx.compatResult.updateMany({ where: { tenantId: { in: tenants }, version: { providerPins: { path: [name], equals: major } } }, data: { engine: '' } });
  for (const t of tenants) await enqueueCompatJob(tx, t, null);
  return tenants;
}

export interface PublishProviderInput {
  /** null: instance-wide (the instance admin). */
  tenantId: string | null;
  actor: Actor;
  /** The provider's JSON text (packages/compat's provider format). */
  text: string;
}

/**
 * Stores a provider version (and the provider when new) in one transaction with its audit row,
 * then marks stale the verdicts of the versions that pin its major and queues their recompute.
 * `agents`: by tenant, the agents running programs that pin its major (their `agent.poll`
 * answers change: invalidate them).
 * The same version with the same text is a no-op (`created: false`); with another text `conflict`.
 */
export async function publishProvider(db: Db, input: PublishProviderInput) {
  let def: ProviderDefinition;
  try {
    def = parseProvider(input.text);
  } catch (err) {
    if (isCompatError(err)) throw new RegistryError('bad_request', `provider.publish: ${err.message}`, {}, { cause: err });
    throw err;
  }
  const semver = parseSemver(def.version);
  if (!semver) throw new RegistryError('bad_request', `provider.publish: not a semantic version: ${def.version}`);
  const scope = input.tenantId ?? INSTANCE_SCOPE;
  const digest = createHash('sha256').update(input.text).digest('hex');
  const attempt = () =>
    db.$transaction(async (tx) => {
      let provider = await tx.provider.findUnique({ where: { scope_name: { scope, name: def.name } }, select: { id: true } });
      if (provider) {
        const same = await tx.providerVersion.findFirst({ where: { providerId: provider.id, version: def.version }, select: providerVersionSelect });
        if (same && same.digest !== digest) {
          throw new RegistryError('conflict', `provider.publish: ${def.name}@${def.version} exists with another text (sha256 ${same.digest.slice(0, 12)}…, this is ${digest.slice(0, 12)}…); versions are immutable`);
        }
        if (same) return { version: same, created: false, recomputed: [] as string[], agents: new Map<string, string[]>() };
        await tx.provider.update({ where: { id: provider.id }, data: { description: def.description }, select: { id: true } });
      } else {
        provider = await tx.provider.create({ data: { tenantId: input.tenantId, scope, name: def.name, description: def.description }, select: { id: true } });
      }
      const made = await tx.providerVersion.create({
        data: {
          providerId: provider.id,
          tenantId: input.tenantId,
          version: def.version,
          ...semver,
          text: input.text,
          digest,
          definition: def as unknown as Prisma.InputJsonValue,
          publishedById: input.actor.kind === 'user' ? input.actor.id : null,
        },
        select: providerVersionSelect,
      });
      const recomputed = semver.prerelease === '' ? await recomputeUsers(tx, scope, def.name, semver.major) : [];
      const agents = await agentsPinning(tx, recomputed, def.name, semver.major);
      await writeAudit(tx, {
        tenantId: input.tenantId,
        actor: input.actor,
        action: 'provider.publish',
        targetType: 'provider_version',
        targetId: made.id,
        detail: { provider: def.name, version: def.version, scope: input.tenantId === null ? 'instance' : 'tenant', digest, recomputedTenants: input.tenantId === null ? recomputed.length : recomputed.length > 0 ? 1 : 0 },
      });
      return { version: made, created: true, recomputed, agents };
    });
  try {
    return await attempt();
  } catch (err) {
    if (isUniqueViolation(err)) return attempt();
    throw err;
  }
}

/**
 * Marks a provider version yanked (it stays readable; resolution skips it). Verdicts that followed
 * it are recomputed through the newest version left. A tenant yanks only its own providers.
 * Returns the version and, by tenant, the agents running programs that pin its major (their
 * `agent.poll` answers change: invalidate them).
 */
export async function yankProvider(db: Db, input: { tenantId: string | null; actor: Actor; name: string; version: string; reason: string; now: Date }) {
  const scope = input.tenantId ?? INSTANCE_SCOPE;
  return db.$transaction(async (tx) => {
    const v = await tx.providerVersion.findFirst({ where: { version: input.version, provider: { scope, name: input.name } }, select: { id: true, major: true, prerelease: true, yankedAt: true } });
    if (!v) throw notFound('provider version', `${input.name}@${input.version}`);
    if (v.yankedAt) throw new RegistryError('conflict', `provider.yank: ${input.name}@${input.version} was yanked at ${v.yankedAt.toISOString()}`);
    const updated = await tx.providerVersion.update({ where: { id: v.id }, data: { yankedAt: input.now, yankReason: input.reason }, select: providerVersionSelect });
    const recomputed = v.prerelease === '' ? await recomputeUsers(tx, scope, input.name, v.major) : [];
    const agents = await agentsPinning(tx, recomputed, input.name, v.major);
    await writeAudit(tx, {
      tenantId: input.tenantId,
      actor: input.actor,
      action: 'provider.yank',
      targetType: 'provider_version',
      targetId: v.id,
      detail: { provider: input.name, version: input.version, reason: input.reason },
    });
    return { version: updated, agents };
  });
}

/** The most versions `provider.pinnedBy` lists (newest of each program first). */
export const maxPinnedByRows = 500;

/**
 * The tenant's program versions that pin `name` (any major), by program name then newest version
 * first; at most `maxPinnedByRows` (`more` says there are others). Only the tenant's own versions:
 * another tenant's pins of the same instance-wide provider are never read.
 */
export async function versionsPinning(db: Db | Tx, tenantId: string, name: string) {
  const rows = await db.$queryRaw<{ program: string; version: string; major: number; yanked: boolean; publishedAt: Date }[]>`
    SELECT p.name AS program, v.version, (v."providerPins" ->> ${name})::int AS major, v."yankedAt" IS NOT NULL AS yanked, v."publishedAt"
    FROM "ProgramVersion" v JOIN "Program" p ON p.id = v."programId"
    WHERE v."tenantId" = ${tenantId} AND p."tenantId" = ${tenantId} AND (v."providerPins" -> ${name}) IS NOT NULL
    ORDER BY p.name ASC, v.major DESC, v.minor DESC, v.patch DESC, v.prerelease ASC
    LIMIT ${maxPinnedByRows + 1}`;
  return { versions: rows.slice(0, maxPinnedByRows), more: rows.length > maxPinnedByRows };
}
