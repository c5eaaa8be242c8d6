// Live sessions (issue 18): a program run on some agents now, for a few seconds, that is not a
// version. Stored with its source, who started it, its agents and its duration; audited (start,
// stop); every query scoped by tenant here. A session's state is derived from its rows (see
// `sessionState`), so nothing has to run when its duration passes: agents end it themselves.
import { EventEmitter } from 'node:events';
import type { Db } from '../db/open.js';
import { notFound, RegistryError } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { writeAudit } from './audit.js';
import { effectiveLiveLimits, type LiveCeilings } from './live-limits.js';
import { resolveProviderReleases } from './providers.js';
import type { Selector } from './deployments.js';
import type { Actor, Tx } from './tx.js';

export const liveLanguages = ['script', 'asm'] as const;
export type LiveLanguage = (typeof liveLanguages)[number];
export const liveStates = ['starting', 'running', 'ended', 'stopped', 'failed'] as const;
export type LiveState = (typeof liveStates)[number];
/** What an agent reports of its run: the states after `starting`. */
export const liveAgentReportStates = ['running', 'ended', 'stopped', 'failed'] as const;
export type LiveAgentReportState = (typeof liveAgentReportStates)[number];
export const liveOutputKinds = ['map_snapshot', 'events', 'counters'] as const;
export type LiveOutputKind = (typeof liveOutputKinds)[number];

/** Agents one session may run on (a live session is interactive; a fleet-wide run is a deployment). */
export const maxLiveAgents = 50;
/** The duration when none is given. */
export const defaultLiveDurationSeconds = 10;
/**
 * After its end (duration or stop), how long a session waits for its agents' last outputs before it
 * counts as over without them (an agent gone away never reports).
 */
export const liveEndGraceMs = 15_000;

const terminal = (s: string) => s === 'ended' || s === 'stopped' || s === 'failed';

/** Signals after a commit that changed a session (outputs, states, stop); event name: the session id. */
export const liveChanges = new EventEmitter().setMaxListeners(0);
/** Signals that an agent's live sessions changed (a start or stop); event name: the agent id. */
export const liveAgentWakes = new EventEmitter().setMaxListeners(0);

export const liveSessionSelect = {
  id: true,
  language: true,
  source: true,
  target: true,
  startedById: true,
  startedByEmail: true,
  startedAt: true,
  durationSeconds: true,
  endsAt: true,
  cpuBudgetPercent: true,
  endedAt: true,
  stoppedAt: true,
  agents: {
    select: { agentId: true, state: true, error: true, verdict: true, outputs: true, updatedAt: true, agent: { select: { hostname: true } } },
    orderBy: { agentId: 'asc' },
  },
} as const satisfies Prisma.LiveSessionSelect;
export type LiveSessionRow = Prisma.LiveSessionGetPayload<{ select: typeof liveSessionSelect }>;

/** When a session stops producing: stopped, or at its end (then its agents send their last outputs). */
function endOf(row: Pick<LiveSessionRow, 'stoppedAt' | 'endsAt'>): Date {
  return row.stoppedAt && row.stoppedAt < row.endsAt ? row.stoppedAt : row.endsAt;
}

/** Whether no more outputs will come: every agent reported its end, or the grace after the end passed. */
export function sessionFinished(row: Pick<LiveSessionRow, 'stoppedAt' | 'endsAt' | 'endedAt' | 'agents'>, now: Date): boolean {
  if (row.endedAt) return true;
  if (row.agents.every((a) => terminal(a.state))) return true;
  return now.getTime() >= endOf(row).getTime() + liveEndGraceMs;
}

/** The session's state: `stopped` (by a user), `ended`/`failed` (duration over or every agent done), `running` (an agent runs it), `starting`. */
export function sessionState(row: Pick<LiveSessionRow, 'stoppedAt' | 'endsAt' | 'endedAt' | 'agents'>, now: Date): LiveState {
  if (row.stoppedAt) return 'stopped';
  const allDone = row.agents.every((a) => terminal(a.state));
  if (row.endedAt || allDone || now >= row.endsAt) {
    return row.agents.length > 0 && row.agents.every((a) => a.state === 'failed') ? 'failed' : 'ended';
  }
  return row.agents.some((a) => a.state === 'running') ? 'running' : 'starting';
}

/** An agent's state as shown: one that never reported its end by the end of the grace is `failed`, saying so. */
export function agentStateOf(row: LiveSessionRow, a: LiveSessionRow['agents'][number], now: Date): { state: LiveState; error: string | null } {
  if (terminal(a.state) || !sessionFinished(row, now)) return { state: a.state as LiveState, error: a.error };
  return { state: 'failed', error: a.error ?? `no end reported by the agent within ${liveEndGraceMs / 1000} s of the session's end (is it running?)` };
}

export type LiveTarget = { agentId: string } | { selector: Selector };

export interface StartLiveInput {
  tenantId: string;
  userId: string;
  email: string;
  language: LiveLanguage;
  source: string;
  target: LiveTarget;
  durationSeconds: number | undefined;
  now: Date;
  /** The instance's ceilings: a tenant limit set above one (before the operator lowered it) counts as the ceiling. */
  ceilings?: LiveCeilings | undefined;
}

/** The agents a target names: not revoked, of the tenant; at most `maxLiveAgents` + 1 (to say there are too many). */
async function agentsOf(tx: Tx, tenantId: string, target: LiveTarget): Promise<string[]> {
  if ('agentId' in target) {
    const a = await tx.agent.findFirst({ where: { id: target.agentId, tenantId }, select: { id: true, revokedAt: true } });
    if (!a) throw notFound('agent', target.agentId);
    if (a.revokedAt) throw new RegistryError('bad_request', `live start: agent ${target.agentId} is revoked`);
    return [a.id];
  }
  // labels @> selector: every pair of the selector among the agent's labels (exact key and value)
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM "Agent"
    WHERE "tenantId" = ${tenantId} AND "revokedAt" IS NULL AND labels @> ${JSON.stringify(target.selector)}::jsonb
    ORDER BY id LIMIT ${maxLiveAgents + 1}`;
  return rows.map((r) => r.id);
}

const selectorText = (s: Selector) =>
  Object.entries(s)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/**
 * Starts a session (the program already checked by the caller): the tenant's row is locked, so two
 * starts at once cannot both take the last free session. Refusals: an unknown agent (`not_found`),
 * no agent matching (`bad_request`), too many agents, a duration over the tenant's limit, too many
 * sessions running (`conflict`). Audited `live.start`.
 */
export async function startLiveSession(tx: Tx, input: StartLiveInput): Promise<{ id: string; agentIds: string[] }> {
  const { tenantId, now } = input;
  await tx.$queryRaw`SELECT id FROM "Tenant" WHERE id = ${tenantId} FOR UPDATE`;
  const row = await tx.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { liveMaxSessions: true, liveMaxDurationSeconds: true, liveCpuBudgetPercent: true } });
  const limits = effectiveLiveLimits({ maxSessions: row.liveMaxSessions, maxDurationSeconds: row.liveMaxDurationSeconds, cpuBudgetPercent: row.liveCpuBudgetPercent }, input.ceilings);
  const tenant = { liveMaxSessions: limits.maxSessions, liveMaxDurationSeconds: limits.maxDurationSeconds, liveCpuBudgetPercent: limits.cpuBudgetPercent };
  const duration = input.durationSeconds ?? Math.min(defaultLiveDurationSeconds, tenant.liveMaxDurationSeconds);
  if (duration > tenant.liveMaxDurationSeconds) {
    throw new RegistryError('bad_request', `live start: a duration of ${duration} s is over the tenant's limit of ${tenant.liveMaxDurationSeconds} s`, { limit: tenant.liveMaxDurationSeconds });
  }
  const agentIds = await agentsOf(tx, tenantId, input.target);
  if (agentIds.length === 0) {
    const what = 'selector' in input.target ? `the selector ${selectorText(input.target.selector)}` : 'the target';
    throw new RegistryError('bad_request', `live start: no agent of the tenant matches ${what}`);
  }
  if (agentIds.length > maxLiveAgents) {
    throw new RegistryError('bad_request', `live start: more than ${maxLiveAgents} agents match; a live session runs on at most ${maxLiveAgents} (deploy a version to run on a fleet)`, { limit: maxLiveAgents });
  }
  const running = await tx.liveSession.count({ where: { tenantId, stoppedAt: null, endedAt: null, endsAt: { gt: now } } });
  if (running >= tenant.liveMaxSessions) {
    throw new RegistryError('conflict', `live start: ${running} live sessions are running, the tenant's limit is ${tenant.liveMaxSessions}: stop one or wait for it to end`, { limit: tenant.liveMaxSessions });
  }
  const target = 'agentId' in input.target ? { agentId: input.target.agentId } : { selector: input.target.selector };
  const session = await tx.liveSession.create({
    data: {
      tenantId,
      language: input.language,
      source: input.source,
      target,
      startedById: input.userId,
      startedByEmail: input.email,
      startedAt: now,
      durationSeconds: duration,
      endsAt: new Date(now.getTime() + duration * 1000),
      cpuBudgetPercent: tenant.liveCpuBudgetPercent,
      agents: { create: agentIds.map((agentId) => ({ tenantId, agentId })) },
    },
    select: { id: true },
  });
  await writeAudit(tx, {
    tenantId,
    actor: { kind: 'user', id: input.userId },
    action: 'live.start',
    targetType: 'live_session',
    targetId: session.id,
    detail: { language: input.language, target, durationSeconds: duration, agentIds, sourceBytes: Buffer.byteLength(input.source) },
  });
  return { id: session.id, agentIds };
}

/** A session of the tenant; another tenant's is `not_found` as a missing one. */
export async function getLiveSession(db: Db | Tx, tenantId: string, id: string): Promise<LiveSessionRow> {
  const row = await db.liveSession.findFirst({ where: { id, tenantId }, select: liveSessionSelect });
  if (!row) throw notFound('live session', id);
  return row;
}

/** The tenant's sessions, newest first. */
export function listLiveSessions(db: Db, tenantId: string, limit: number): Promise<LiveSessionRow[]> {
  return db.liveSession.findMany({ where: { tenantId }, orderBy: { startedAt: 'desc' }, take: limit, select: liveSessionSelect });
}

/**
 * Stops a session (the starter, or an admin: `may` says whether this user may stop another's).
 * A session already over is unchanged. Audited `live.stop`.
 */
export async function stopLiveSession(tx: Tx, tenantId: string, actor: Actor & { id: string }, sessionId: string, mayStopOthers: boolean, now: Date): Promise<{ changed: boolean; agentIds: string[] }> {
  const row = await getLiveSession(tx, tenantId, sessionId);
  if (row.startedById !== actor.id && !mayStopOthers) {
    throw new RegistryError('forbidden', `live stop: session ${sessionId} was started by ${row.startedByEmail}; only they or an admin may stop it`);
  }
  const state = sessionState(row, now);
  if (state !== 'starting' && state !== 'running') return { changed: false, agentIds: [] };
  await tx.liveSession.update({ where: { id: row.id }, data: { stoppedAt: now, stoppedById: actor.id }, select: { id: true } });
  await writeAudit(tx, { tenantId, actor, action: 'live.stop', targetType: 'live_session', targetId: row.id, detail: { agentIds: row.agents.map((a) => a.agentId) } });
  return { changed: true, agentIds: row.agents.map((a) => a.agentId) };
}

/** What an agent is told of one of its live sessions. */
export interface LiveAssignment {
  sessionId: string;
  language: LiveLanguage;
  source: string;
  durationSeconds: number;
  /** Milliseconds left by the registry's clock (the agent ends it by its own clock after this, or `durationSeconds`, whichever is less). */
  remainingMs: number;
  cpuBudgetPercent: number;
  desiredState: 'running' | 'stopped';
  /**
   * A script naming provider probes (`io:::done`): the newest release of each provider the tenant
   * sees (its own, else the instance's), name, version and published text, to compile through.
   */
  providers?: { name: string; version: string; text: string }[];
}

/** Provider names a script's probes name (`io:::done` → `io`); a cheap scan, the compiler has the last word. */
export function providerNamesOf(source: string): Set<string> {
  return new Set([...source.matchAll(/(?<![A-Za-z0-9_:])([a-z][a-z0-9_]*):::/g)].map((m) => m[1]!));
}

/** The sessions an agent has not reported done: to run, or (stopped by a user) to stop. */
export async function liveAssignments(db: Db, tenantId: string, agentId: string, now: Date): Promise<LiveAssignment[]> {
  const rows = await db.liveSessionAgent.findMany({
    where: { tenantId, agentId, state: { in: ['starting', 'running'] }, session: { tenantId, endedAt: null, endsAt: { gt: new Date(now.getTime() - liveEndGraceMs) } } },
    select: { session: { select: { id: true, language: true, source: true, durationSeconds: true, endsAt: true, cpuBudgetPercent: true, stoppedAt: true } } },
    orderBy: { sessionId: 'asc' },
  });
  const named = new Set(rows.flatMap(({ session: s }) => (s.language === 'script' ? [...providerNamesOf(s.source)] : [])));
  const releases = named.size > 0 ? (await resolveProviderReleases(db, tenantId)).filter((r) => named.has(r.name)) : [];
  return rows.map(({ session: s }) => {
    const remainingMs = Math.max(0, s.endsAt.getTime() - now.getTime());
    const names = s.language === 'script' ? providerNamesOf(s.source) : new Set<string>();
    const providers = releases.filter((r) => names.has(r.name)).map((r) => ({ name: r.name, version: r.version, text: r.text }));
    return {
      ...(providers.length > 0 ? { providers } : {}),
      sessionId: s.id,
      language: s.language as LiveLanguage,
      source: s.source,
      durationSeconds: s.durationSeconds,
      remainingMs,
      cpuBudgetPercent: s.cpuBudgetPercent,
      // past its end it is still `running` with nothing left: an agent that never started it ends it at once as `ended`
      desiredState: s.stoppedAt ? 'stopped' : 'running',
    };
  });
}

export interface LiveReportInput {
  sessionId: string;
  state?: LiveAgentReportState | undefined;
  error?: string | undefined;
  verdict?: Prisma.InputJsonValue | undefined;
  outputs: { seq: number; kind: LiveOutputKind; payload: Prisma.InputJsonValue }[];
}

/**
 * An agent's report on one of its sessions: outputs (keyed by (session, agent, seq): a retry is a
 * no-op), and its state (a terminal state is final). When every agent is done the session is over.
 * Answers whether the session is stopped (so the agent learns it at its next report too).
 */
export async function reportLive(db: Db, tenantId: string, agentId: string, input: LiveReportInput, now: Date): Promise<{ accepted: number; stop: boolean }> {
  const r = await db.$transaction(
    async (tx) => {
      const share = await tx.liveSessionAgent.findFirst({
        where: { tenantId, agentId, sessionId: input.sessionId },
        select: { id: true, state: true, outputs: true, session: { select: { stoppedAt: true } } },
      });
      if (!share) throw notFound('live session', input.sessionId);
      let accepted = 0;
      if (input.outputs.length > 0) {
        const made = await tx.liveOutput.createMany({
          data: input.outputs.map((o) => ({ tenantId, sessionId: input.sessionId, agentId, seq: o.seq, kind: o.kind, payload: o.payload })),
          skipDuplicates: true,
        });
        accepted = made.count;
      }
      const outputs = Math.max(share.outputs, ...input.outputs.map((o) => o.seq + 1));
      const data: Prisma.LiveSessionAgentUpdateInput = { outputs };
      // a terminal state is final: a late `running` (a retry) does not bring it back
      if (input.state !== undefined && !terminal(share.state)) {
        data.state = input.state;
        if (input.error !== undefined) data.error = input.error;
        if (input.verdict !== undefined) data.verdict = input.verdict;
      }
      await tx.liveSessionAgent.update({ where: { id: share.id }, data, select: { id: true } });
      if (input.state !== undefined && terminal(input.state)) {
        const open = await tx.liveSessionAgent.count({ where: { tenantId, sessionId: input.sessionId, state: { in: ['starting', 'running'] } } });
        if (open === 0) await tx.liveSession.updateMany({ where: { id: input.sessionId, tenantId, endedAt: null }, data: { endedAt: now } });
      }
      // the end of its duration is the agent's to keep, by its own clock
      return { accepted, stop: share.session.stoppedAt !== null };
    },
    { timeout: 30_000, maxWait: 30_000 },
  );
  liveChanges.emit(input.sessionId, { tenantId });
  return r;
}

export interface LiveOutputRow {
  agentId: string;
  seq: number;
  kind: string;
  payload: Prisma.JsonValue;
  receivedAt: Date;
}

/**
 * A cursor over a session's outputs: per agent of the session (in the session's agent order), the
 * next sequence to read. Text: those numbers joined by `.` (`"4.0.12"`); empty: from the start.
 */
export function parseLiveCursor(text: string | undefined, agents: number): number[] {
  const out = new Array<number>(agents).fill(0);
  if (text === undefined || text === '') return out;
  const parts = text.split('.');
  if (parts.length !== agents || parts.some((p) => !/^\d{1,10}$/.test(p))) {
    throw new RegistryError('bad_request', `live outputs: cursor '${text.slice(0, 100)}' is not one of this session's cursors`);
  }
  return parts.map(Number);
}

/** Outputs of a session after a cursor (at most `limit`, by sequence), and the cursor after them. */
export async function liveOutputsAfter(db: Db, tenantId: string, session: LiveSessionRow, cursor: number[], limit: number): Promise<{ outputs: LiveOutputRow[]; cursor: number[] }> {
  const agents = session.agents.map((a) => a.agentId);
  const wanted = agents.flatMap((agentId, i) => (session.agents[i]!.outputs > cursor[i]! ? [{ agentId, seq: { gte: cursor[i]! } }] : []));
  if (wanted.length === 0) return { outputs: [], cursor };
  const outputs = await db.liveOutput.findMany({
    where: { tenantId, sessionId: session.id, OR: wanted },
    orderBy: [{ seq: 'asc' }, { agentId: 'asc' }],
    take: limit,
    select: { agentId: true, seq: true, kind: true, payload: true, receivedAt: true },
  });
  const next = [...cursor];
  for (const o of outputs) {
    const i = agents.indexOf(o.agentId);
    if (i >= 0 && o.seq + 1 > next[i]!) next[i] = o.seq + 1;
  }
  return { outputs, cursor: next };
}
