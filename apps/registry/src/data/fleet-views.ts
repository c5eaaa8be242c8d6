// Views of the fleet for the web app: pages of agents with their kernel and targets, one agent's
// targets, and a deployment's preview (the agents a selector matches, each with the version's
// computed verdict on that agent's own kernel) before anything is written.
import type { Db } from '../db/open.js';
import { notFound, RegistryError } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { agentSelect } from './agents.js';
import { type CellComputer, cellsWithOptions, computeCellHere } from './compat.js';
import { checkOptions, type DeploymentOptions, desiredStateOf, findVersion, type Labels, matchesSelector, type Selector } from './deployments.js';

const agentPageSelect = {
  ...agentSelect,
  kernelProfile: { select: { name: true, release: true, machine: true } },
} as const satisfies Prisma.AgentSelect;

/** Agents of the tenant by id, after `cursor`, optionally those whose hostname contains `search` or whose labels match `selector`. */
export async function listAgentsPage(db: Db, tenantId: string, q: { cursor?: string | undefined; limit: number; search?: string | undefined; selector?: Selector | undefined }) {
  const agents = await db.agent.findMany({
    where: {
      tenantId,
      ...(q.cursor ? { id: { gt: q.cursor } } : {}),
      ...(q.search ? { hostname: { contains: q.search, mode: 'insensitive' } } : {}),
      ...(q.selector ? { AND: Object.entries(q.selector).map(([k, v]) => ({ labels: { path: [k], equals: v } })) } : {}),
    },
    orderBy: { id: 'asc' },
    take: q.limit,
    select: agentPageSelect,
  });
  const counts = agents.length
    ? await db.deploymentTarget.groupBy({ by: ['agentId', 'status'], where: { tenantId, agentId: { in: agents.map((a) => a.id) } }, _count: { _all: true } })
    : [];
  const byAgent = new Map<string, Record<string, number>>();
  for (const c of counts) byAgent.set(c.agentId, { ...byAgent.get(c.agentId), [c.status]: c._count._all });
  return agents.map((a) => ({ ...a, targetCounts: byAgent.get(a.id) ?? {} }));
}

/** One agent with every target it has (deployment, program@version, status and reason, counters). */
export async function getAgentDetail(db: Db, tenantId: string, id: string) {
  const a = await db.agent.findFirst({ where: { id, tenantId }, select: agentPageSelect });
  if (!a) throw notFound('agent', id);
  const targets = await db.deploymentTarget.findMany({
    where: { tenantId, agentId: id },
    orderBy: { id: 'desc' },
    take: 500,
    select: {
      id: true,
      status: true,
      reason: true,
      detail: true,
      updatedAt: true,
      deployment: { select: { id: true, desiredState: true, selector: true, version: { select: { version: true, program: { select: { name: true } } } } } },
    },
  });
  return {
    agent: a,
    targets: targets.map((t) => ({
      id: t.id,
      deploymentId: t.deployment.id,
      program: { name: t.deployment.version.program.name, version: t.deployment.version.version },
      status: t.status,
      desiredState: desiredStateOf(t.deployment, a),
      reason: t.reason,
      counters: ((t.detail ?? null) as { counters?: Record<string, number> } | null)?.counters ?? null,
      updatedAt: t.updatedAt,
    })),
  };
}

/**
 * What `deployment.create` would do, without doing it: the unrevoked agents matching the
 * selector (first `limit`, and how many in all), each with the version's verdict on its kernel
 * profile (null while not computed; the agent has no profile yet: `profile` null).
 */
export async function previewDeployment(
  db: Db,
  tenantId: string,
  input: { name: string; version: string; selector: Selector; limit: number; options?: DeploymentOptions | undefined },
  cellOf: CellComputer = computeCellHere,
) {
  const v = await findVersion(db, tenantId, input.name, input.version);
  if (v.yankedAt) {
    throw new RegistryError('conflict', `deployment preview: ${input.name}@${input.version} is yanked${v.yankReason ? ` (${v.yankReason})` : ''} and cannot be deployed`);
  }
  const options = input.options ?? {};
  if (Object.keys(options).length > 0) {
    const { spec } = await db.programVersion.findFirstOrThrow({ where: { id: v.id, tenantId }, select: { spec: true } });
    checkOptions(spec, options, `${input.name}@${input.version}`, 'deployment preview');
  }
  const where: Prisma.AgentWhereInput = {
    tenantId,
    revokedAt: null,
    AND: Object.entries(input.selector).map(([k, val]) => ({ labels: { path: [k], equals: val } })),
  };
  const [agents, total] = await Promise.all([
    db.agent.findMany({ where, orderBy: { id: 'asc' }, take: input.limit, select: agentPageSelect }),
    db.agent.count({ where }),
  ]);
  const matching = agents.filter((a) => matchesSelector(input.selector, (a.labels ?? {}) as Labels));
  const profileIds = [...new Set(matching.map((a) => a.kernelProfileId).filter((x): x is string => x !== null))];
  const results = profileIds.length
    ? await db.compatResult.findMany({ where: { tenantId, versionId: v.id, profileId: { in: profileIds } }, select: { profileId: true, verdict: true, reasons: true } })
    : [];
  const byProfile = new Map<string, { verdict: string; reasons: unknown }>(results.map((r) => [r.profileId, r]));
  // With options the stored verdicts (the object's defaults) may not hold: the listed agents'
  // kernels are computed again with them, most agents first.
  let optionsNote: string | null = null;
  if (Object.keys(options).length > 0) {
    const agentsOn = new Map<string, number>();
    for (const a of matching) if (a.kernelProfileId) agentsOn.set(a.kernelProfileId, (agentsOn.get(a.kernelProfileId) ?? 0) + 1);
    const order = [...agentsOn.keys()].sort((a, b) => agentsOn.get(b)! - agentsOn.get(a)! || (a < b ? -1 : 1));
    const computed = await cellsWithOptions(db, tenantId, v.id, options, order, cellOf);
    optionsNote = computed.note;
    if (computed.cells.size > 0) {
      byProfile.clear();
      for (const [profileId, cell] of computed.cells) byProfile.set(profileId, cell);
    }
  }
  const counts: Record<string, number> = {};
  const rows = matching.map((a) => {
    const r = a.kernelProfileId ? byProfile.get(a.kernelProfileId) : undefined;
    const verdict = (r?.verdict ?? null) as 'compatible' | 'relocated' | 'incompatible' | 'unknown' | null;
    const key = verdict ?? (a.kernelProfileId ? 'pending' : 'no-profile');
    counts[key] = (counts[key] ?? 0) + 1;
    const reasons = ((r?.reasons ?? null) as { reasons?: { text: string }[] } | null)?.reasons ?? [];
    return { agent: a, verdict, reason: reasons.map((x) => x.text).join('; ') || null };
  });
  return { versionId: v.id, total, rows, counts, options, optionsNote };
}
