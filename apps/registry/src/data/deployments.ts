import { isCompatError, type RodataValue, setRodata, specFromJson } from '@probeyard/compat';
import type { Db } from '../db/open.js';
import { notFound, RegistryError } from '../errors.js';
import type { DesiredState, Prisma } from '../generated/prisma/client.js';
import type { Actor, Tx } from './tx.js';
import { writeAudit } from './audit.js';
import { resolvedPins } from './providers.js';

/** A label selector: `{ env: "prod" }` matches agents whose labels include every pair exactly. */
export type Selector = Record<string, string>;
export type Labels = Record<string, string>;
/** `.rodata` options by variable name: decimal text (`"42"`, `"-1"`) or `"true"`/`"false"`. */
export type DeploymentOptions = Record<string, string>;

/** An option's stored text as {@link setRodata} takes it. */
export function optionValue(text: string): RodataValue {
  return text === 'true' ? true : text === 'false' ? false : BigInt(text);
}

/**
 * Whether `options` fit the version's spec: each names a read-only (`.rodata`) variable of the
 * object and its value fits the variable's size. A problem is `bad_request` in words (the
 * variables there are, or the size), so nothing is written.
 */
export function checkOptions(specJson: unknown, options: DeploymentOptions, what: string, operation = 'deployment create'): void {
  if (Object.keys(options).length === 0) return;
  try {
    setRodata(specFromJson(specJson), Object.fromEntries(Object.entries(options).map(([k, v]) => [k, optionValue(v)])));
  } catch (err) {
    if (isCompatError(err)) throw new RegistryError('bad_request', `${operation}: ${what}: ${err.message.replace(/^rodata: /, 'option ')}`, { options }, { cause: err });
    throw err;
  }
}

/** Whether `labels` has every pair of `selector` (exact key and value). */
export function matchesSelector(selector: Selector, labels: Labels): boolean {
  for (const [k, v] of Object.entries(selector)) if (labels[k] !== v) return false;
  return true;
}

/** What a target should do: run while its deployment runs and its agent still matches. */
export function desiredStateOf(deployment: { desiredState: DesiredState; selector: unknown }, agent: { labels: unknown; revokedAt: Date | null }): DesiredState {
  return deployment.desiredState === 'running' && !agent.revokedAt && matchesSelector(deployment.selector as Selector, (agent.labels ?? {}) as Labels)
    ? 'running'
    : 'stopped';
}

export const deploymentSelect = {
  id: true,
  versionId: true,
  selector: true,
  options: true,
  desiredState: true,
  createdById: true,
  createdAt: true,
  updatedAt: true,
  version: { select: { version: true, digest: true, yankedAt: true, program: { select: { name: true } } } },
} as const satisfies Prisma.DeploymentSelect;

export const targetSelect = {
  id: true,
  agentId: true,
  status: true,
  reason: true,
  detail: true,
  createdAt: true,
  updatedAt: true,
  agent: { select: { hostname: true, labels: true, revokedAt: true } },
} as const satisfies Prisma.DeploymentTargetSelect;

export type DeploymentRow = Prisma.DeploymentGetPayload<{ select: typeof deploymentSelect }>;
export type TargetRow = Prisma.DeploymentTargetGetPayload<{ select: typeof targetSelect }>;

/** A version of the tenant by program name and version text; another tenant's is `not_found`. */
export async function findVersion(db: Db | Tx, tenantId: string, name: string, version: string) {
  const v = await db.programVersion.findFirst({
    where: { tenantId, version, program: { tenantId, name } },
    select: { id: true, version: true, yankedAt: true, yankReason: true },
  });
  if (!v) throw notFound('program version', `${name}@${version}`);
  return v;
}

/** Counts of a deployment's targets by status. */
export async function targetCounts(db: Db | Tx, tenantId: string, deploymentIds: string[]) {
  const rows = await db.deploymentTarget.groupBy({ by: ['deploymentId', 'status'], where: { tenantId, deploymentId: { in: deploymentIds } }, _count: { _all: true } });
  const out = new Map<string, Record<string, number>>();
  for (const r of rows) {
    const c = out.get(r.deploymentId) ?? {};
    c[r.status] = r._count._all;
    out.set(r.deploymentId, c);
  }
  return out;
}

/**
 * Serialises, per tenant, the transactions that match agents against deployments: a deployment
 * being created reads the agents, an agent enrolling (or relabelled) reads the running
 * deployments, and under READ COMMITTED neither sees the other's uncommitted row, so without this
 * an agent enrolling while a deployment is created got no target of it. The lock is held to the
 * end of the transaction; the read after it sees whatever the other committed.
 */
export async function lockTenantFleet(tx: Tx, tenantId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`fleet:${tenantId}`}, 0))`;
}

/**
 * Makes a deployment of a version (by name@version) with one target per matching, unrevoked agent
 * of the tenant. A yanked version is refused.
 */
export async function createDeployment(tx: Tx, input: { tenantId: string; actor: Actor; name: string; version: string; selector: Selector; options?: DeploymentOptions }) {
  await lockTenantFleet(tx, input.tenantId);
  const v = await findVersion(tx, input.tenantId, input.name, input.version);
  if (v.yankedAt) {
    throw new RegistryError('conflict', `deployment create: ${input.name}@${input.version} is yanked${v.yankReason ? ` (${v.yankReason})` : ''} and cannot be deployed`, {
      name: input.name,
      version: input.version,
    });
  }
  const options = input.options ?? {};
  if (Object.keys(options).length > 0) {
    const { spec } = await tx.programVersion.findFirstOrThrow({ where: { id: v.id, tenantId: input.tenantId }, select: { spec: true } });
    checkOptions(spec, options, `${input.name}@${input.version}`);
  }
  const made = await tx.deployment.create({
    data: { tenantId: input.tenantId, versionId: v.id, selector: input.selector, options, createdById: input.actor.kind === 'user' ? input.actor.id : null },
    select: { id: true },
  });
  // The database picks the matching agents (one label equality per pair), so a deployment to
  // 250 agents of 10,000 reads 250 rows; the same rule is checked again here.
  const agents = await tx.agent.findMany({
    where: { tenantId: input.tenantId, revokedAt: null, AND: Object.entries(input.selector).map(([k, v]) => ({ labels: { path: [k], equals: v } })) },
    select: { id: true, labels: true },
  });
  const matching = agents.filter((a) => matchesSelector(input.selector, (a.labels ?? {}) as Labels));
  for (let i = 0; i < matching.length; i += 5000) {
    await tx.deploymentTarget.createMany({
      data: matching.slice(i, i + 5000).map((a) => ({ tenantId: input.tenantId, deploymentId: made.id, agentId: a.id })),
    });
  }
  await writeAudit(tx, {
    tenantId: input.tenantId,
    actor: input.actor,
    action: 'deployment.create',
    targetType: 'deployment',
    targetId: made.id,
    detail: { program: input.name, version: input.version, versionId: v.id, selector: input.selector, options, targets: matching.length },
  });
  return { id: made.id, agentIds: matching.map((a) => a.id) };
}

export function listDeployments(db: Db, tenantId: string, page: { limit: number; cursor?: string | undefined; state?: DesiredState | undefined }) {
  return db.deployment.findMany({
    where: { tenantId, ...(page.state ? { desiredState: page.state } : {}), ...(page.cursor ? { id: { lt: page.cursor } } : {}) },
    orderBy: { id: 'desc' },
    take: page.limit,
    select: deploymentSelect,
  });
}

export async function getDeployment(db: Db | Tx, tenantId: string, id: string) {
  const d = await db.deployment.findFirst({ where: { id, tenantId }, select: deploymentSelect });
  if (!d) throw notFound('deployment', id);
  return d;
}

export function listTargets(db: Db | Tx, tenantId: string, deploymentId: string) {
  return db.deploymentTarget.findMany({ where: { tenantId, deploymentId }, orderBy: { id: 'asc' }, select: targetSelect });
}

/** Sets a deployment's desired state to stopped (a no-op when it is already stopped). */
export async function stopDeployment(tx: Tx, tenantId: string, actor: Actor, id: string) {
  const before = await getDeployment(tx, tenantId, id);
  if (before.desiredState === 'stopped') return { changed: false, agentIds: [] as string[] };
  await tx.deployment.update({ where: { id: before.id }, data: { desiredState: 'stopped' }, select: { id: true } });
  await writeAudit(tx, { tenantId, actor, action: 'deployment.stop', targetType: 'deployment', targetId: id, detail: { from: 'running', to: 'stopped' } });
  const targets = await tx.deploymentTarget.findMany({ where: { tenantId, deploymentId: id }, select: { agentId: true } });
  return { changed: true, agentIds: targets.map((t) => t.agentId) };
}

/**
 * After an agent enrolled or its labels changed: a target for every running deployment of the
 * tenant it now matches (a stopped target of one it matches again goes back to pending). Targets
 * of deployments it no longer matches stay, with desired state stopped, so their outputs remain;
 * the agent is told to stop them at its next poll. Returns the deployments gained and lost.
 */
export async function reconcileAgentTargets(tx: Tx, tenantId: string, actor: Actor, agentId: string, labels: Labels) {
  await lockTenantFleet(tx, tenantId);
  const running = await tx.deployment.findMany({ where: { tenantId, desiredState: 'running' }, select: { id: true, selector: true } });
  const existing = await tx.deploymentTarget.findMany({ where: { tenantId, agentId, deploymentId: { in: running.map((d) => d.id) } }, select: { id: true, deploymentId: true, status: true } });
  const byDeployment = new Map(existing.map((t) => [t.deploymentId, t]));
  const gained: string[] = [];
  const lost: string[] = [];
  for (const d of running) {
    const has = byDeployment.get(d.id);
    if (matchesSelector(d.selector as Selector, labels)) {
      if (!has) {
        await tx.deploymentTarget.create({ data: { tenantId, deploymentId: d.id, agentId }, select: { id: true } });
        gained.push(d.id);
      } else if (has.status === 'stopped') {
        await tx.deploymentTarget.update({ where: { id: has.id }, data: { status: 'pending', reason: null }, select: { id: true } });
        gained.push(d.id);
      }
    } else if (has && has.status !== 'stopped') {
      lost.push(d.id);
    }
  }
  if (gained.length > 0 || lost.length > 0) {
    await writeAudit(tx, { tenantId, actor, action: 'deployment.retarget', targetType: 'agent', targetId: agentId, detail: { labels, gained, lost } });
  }
  return { gained, lost };
}

/** One assignment of an agent, as `agent.poll` answers it. */
export interface Assignment {
  targetId: string;
  deploymentId: string;
  program: { name: string; version: string };
  versionId: string;
  digest: string;
  size: number;
  artifactKind: string;
  /** The deployment's `.rodata` options, set before load (`{}` when none). */
  options: DeploymentOptions;
  desiredState: DesiredState;
  /**
   * For a program that pins providers: the release each pin resolves to now (`io@1.1.0`), sorted.
   * A provider release changes it, so the answer and its ETag change and the agent restarts the
   * target through the new definitions (`agent.artifact` hands them over). Absent otherwise.
   */
  providers?: string[];
  /**
   * The tenant's compat setting (`compat.setSettings`): also refuse a read of a plain `char` field
   * whose signedness changed, as the tenant's matrix does. Present only when on.
   */
  strictCharSign?: true;
}

function assignmentsSelect(tenantId: string) {
  return {
    id: true,
    labels: true,
    revokedAt: true,
    tenant: { select: { strictCharSign: true } },
    targets: {
      where: { tenantId, OR: [{ deployment: { desiredState: 'running' as const } }, { status: { not: 'stopped' as const } }] },
      orderBy: { id: 'asc' as const },
      select: {
        id: true,
        status: true,
        deployment: {
          select: {
            id: true,
            selector: true,
            options: true,
            desiredState: true,
            version: { select: { id: true, version: true, digest: true, size: true, artifactKind: true, providerPins: true, program: { select: { name: true } } } },
          },
        },
      },
    },
  } satisfies Prisma.AgentSelect;
}

/**
 * What an agent should run (desired running) or stop (desired stopped, until it reports the target
 * stopped), by target id. Null when the agent is gone.
 */
export async function loadAssignments(db: Db, tenantId: string, agentId: string): Promise<Assignment[] | null> {
  const agent = await db.agent.findFirst({ where: { id: agentId, tenantId }, select: assignmentsSelect(tenantId) });
  if (!agent) return null;
  const pins = await pinsOf(db, tenantId, [agent]);
  return toAssignments(agent, pins);
}

/** The assignments of every unrevoked agent of a tenant, in a handful of queries (poll cache warm-up). */
export async function loadTenantAssignments(db: Db, tenantId: string): Promise<Map<string, Assignment[]>> {
  const agents = await db.agent.findMany({ where: { tenantId, revokedAt: null }, select: assignmentsSelect(tenantId) });
  const pins = await pinsOf(db, tenantId, agents);
  return new Map(agents.map((a) => [a.id, toAssignments(a, pins)]));
}

/** The given unrevoked agents of a tenant with their assignments (one query; others are absent). */
export async function loadAgentsAssignments(db: Db, tenantId: string, agentIds: readonly string[]): Promise<Map<string, Assignment[]>> {
  const agents = await db.agent.findMany({ where: { tenantId, revokedAt: null, id: { in: [...agentIds] } }, select: assignmentsSelect(tenantId) });
  const pins = await pinsOf(db, tenantId, agents);
  return new Map(agents.map((a) => [a.id, toAssignments(a, pins)]));
}

type AssignmentsRow = Prisma.AgentGetPayload<{ select: ReturnType<typeof assignmentsSelect> }>;

const pinsOfVersion = (providerPins: unknown) => Object.entries((providerPins ?? {}) as Record<string, number>);

/** The releases the provider pins of these agents' programs resolve to now (two queries at most). */
async function pinsOf(db: Db, tenantId: string, agents: readonly AssignmentsRow[]): Promise<Map<string, string>> {
  const pins = agents.flatMap((a) => a.targets.flatMap((t) => pinsOfVersion(t.deployment.version.providerPins)));
  return pins.length === 0 ? new Map() : resolvedPins(db, tenantId, pins);
}

function toAssignments(agent: AssignmentsRow, resolved: ReadonlyMap<string, string>): Assignment[] {
  const out: Assignment[] = [];
  for (const t of agent.targets) {
    const desiredState = desiredStateOf(t.deployment, agent);
    if (desiredState === 'stopped' && t.status === 'stopped') continue;
    const v = t.deployment.version;
    out.push({
      targetId: t.id,
      deploymentId: t.deployment.id,
      program: { name: v.program.name, version: v.version },
      versionId: v.id,
      digest: v.digest,
      size: v.size,
      artifactKind: v.artifactKind,
      options: (t.deployment.options ?? {}) as DeploymentOptions,
      desiredState,
      ...(agent.tenant.strictCharSign ? { strictCharSign: true as const } : {}),
    });
    const pins = pinsOfVersion(v.providerPins);
    if (pins.length > 0) {
      // a pin without a release left (all yanked) is listed as `io@1.x: none`: the agent refuses it, saying so
      out[out.length - 1]!.providers = pins.map(([name, major]) => resolved.get(`${name}@${major}`) ?? `${name}@${major}.x: none`).sort();
    }
  }
  return out;
}

/** Targets of one agent by id; any id that is not this agent's is `not_found` (nothing changes). */
export async function agentTargets(db: Db | Tx, tenantId: string, agentId: string, targetIds: string[]) {
  const rows = await db.deploymentTarget.findMany({ where: { tenantId, agentId, id: { in: targetIds } }, select: { id: true, status: true, deploymentId: true } });
  const found = new Map(rows.map((r) => [r.id, r]));
  for (const id of targetIds) if (!found.has(id)) throw notFound('deployment target', id);
  return found;
}
