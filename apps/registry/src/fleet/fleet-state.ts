// Process-wide state that keeps agent polls cheap: agent credentials and each agent's assignments
// in memory, with per-tenant and per-agent generations so that a change made through this process
// invalidates exactly what it touches, and last-seen times written to the database in batches.
//
// Several registries on one PostgreSQL: each reads the audit log (written in the same transaction as
// every change) every `syncMs` and invalidates what other replicas changed, so they agree within
// a few seconds without any per-poll query.
import type { Db } from '../db/open.js';
import { liveAgentWakes } from '../data/live.js';

/** What `agent.poll` hands an agent: its assignments and their ETag (content-derived). */
export interface CachedAssignments<T> {
  etag: string;
  assignments: T;
}

interface AgentEntry<T> {
  tenantGeneration: number;
  agentGeneration: number;
  value: CachedAssignments<T>;
}

export interface FleetStateOptions {
  /** How often batched last-seen times are written (0: only on `flushLastSeen`). */
  lastSeenFlushMs?: number;
  /** How often the audit log is read for changes made by other replicas (0: never). */
  syncMs?: number;
  /** Invalidating more agents of a tenant than this at once reloads the tenant in bulk instead. */
  bulkThreshold?: number;
  onError?: (err: unknown) => void;
}

interface AgentGroup {
  tenantId: string;
  agentIds: readonly string[];
  loading?: Promise<void>;
}

export interface FleetStats {
  /** Polls answered from memory. */
  cacheHits: number;
  /** Agents whose assignments were read from the database one by one. */
  loads: number;
  /** Bulk reloads of a whole tenant's assignments. */
  tenantLoads: number;
  /** Bulk reloads of the agents one change touched (a deployment made or stopped). */
  groupLoads: number;
  /** Batched last-seen writes (one statement each). */
  lastSeenFlushes: number;
  /** Changes of other replicas picked up from the audit log. */
  synced: number;
}

const lastSeenChunk = 250;

/** A uuid v7 lower bound for ids made at `ms` (the first 48 bits of a v7 id are its Unix ms). */
function uuid7Floor(ms: number): string {
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-7000-8000-000000000000`;
}

export class FleetState {
  readonly stats: FleetStats = { cacheHits: 0, loads: 0, tenantLoads: 0, groupLoads: 0, lastSeenFlushes: 0, synced: 0 };
  private readonly tenantGenerations = new Map<string, number>();
  /** Bumped by {@link invalidateEveryTenant}; part of every tenant's generation. */
  private epoch = 0;
  private readonly agentGenerations = new Map<string, number>();
  private readonly assignments = new Map<string, AgentEntry<unknown>>();
  /** Tenant generation of the last bulk load per tenant, and the load in flight. */
  private readonly tenantLoaded = new Map<string, number>();
  private readonly tenantLoading = new Map<string, Promise<void>>();
  /** Agents invalidated together by one change, reloaded together at the first poll of any. */
  private readonly pendingGroups = new Map<string, AgentGroup>();
  private readonly credentials = new Map<string, { tenantId: string; agentId: string }>();
  private readonly credentialOf = new Map<string, string>();
  private seen = new Set<string>();
  private flushing: Promise<void> | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly bulkThreshold: number;
  /** Audit entries already applied (ids), for the overlap window of the sync. */
  private syncedIds = new Map<string, number>();
  private syncFromMs = Date.now();
  /** Changes older than this process are in what it loads at start (`warmFleet`, after this). */
  private readonly syncFloorMs = Date.now();
  /** Ids of audit entries this process wrote (nothing to invalidate again). */
  private readonly ownTargets = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly opts: FleetStateOptions = {},
  ) {
    this.bulkThreshold = opts.bulkThreshold ?? 50;
    const every = opts.lastSeenFlushMs ?? 30_000;
    if (every > 0) this.every(every, () => this.flushLastSeen());
    const sync = opts.syncMs ?? 5_000;
    if (sync > 0) this.every(sync, () => this.syncFromAudit());
  }

  private every(ms: number, fn: () => Promise<void>): void {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      fn()
        .catch((err) => this.opts.onError?.(err))
        .finally(() => {
          running = false;
        });
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }

  /** Every agent of the tenant reloads (in one bulk load) at its next poll. */
  invalidateTenant(tenantId: string): void {
    this.tenantGenerations.set(tenantId, (this.tenantGenerations.get(tenantId) ?? 0) + 1);
  }

  /**
   * Every agent of every tenant reloads at its next poll (one bulk load per tenant): what another
   * replica's instance-wide provider release may have changed (which tenants' agents it touched is
   * not in its audit row; the replica that made it invalidated exactly those).
   */
  invalidateEveryTenant(): void {
    this.epoch++;
  }

  /** A tenant's generation: its own invalidations plus every-tenant ones (both only grow). */
  private tenantGeneration(tenantId: string): number {
    return (this.tenantGenerations.get(tenantId) ?? 0) + this.epoch;
  }

  /** One agent's labels, targets or credential changed. */
  invalidateAgent(agentId: string): void {
    this.agentGenerations.set(agentId, (this.agentGenerations.get(agentId) ?? 0) + 1);
    this.assignments.delete(agentId);
  }

  /**
   * Many agents of a tenant changed (a deployment made or stopped): each is invalidated, and when
   * they are many, the first poll of any of them reloads them all in one query (never the whole
   * tenant: a change to 250 agents of 10,000 reads 250).
   */
  invalidateAgents(tenantId: string, agentIds: readonly string[], auditTargetId?: string): void {
    if (auditTargetId) this.ownTargets.add(auditTargetId);
    for (const id of agentIds) this.invalidateAgent(id);
    if (agentIds.length > this.bulkThreshold) {
      const group: AgentGroup = { tenantId, agentIds: [...agentIds] };
      for (const id of agentIds) this.pendingGroups.set(id, group);
    }
  }

  /**
   * Loads the group `agentId` was invalidated with, if any (concurrent polls of its agents share
   * one load); false when the agent is in no pending group.
   */
  async ensureGroupLoaded<T>(agentId: string, load: (tenantId: string, agentIds: readonly string[]) => Promise<Map<string, CachedAssignments<T>>>): Promise<boolean> {
    const group = this.pendingGroups.get(agentId);
    if (!group) return false;
    group.loading ??= (async () => {
      const tenantGeneration = this.tenantGeneration(group.tenantId);
      const agentGenerations = new Map(group.agentIds.map((id) => [id, this.agentGenerations.get(id) ?? 0]));
      try {
        const all = await load(group.tenantId, group.agentIds);
        this.stats.groupLoads++;
        for (const [id, value] of all) this.assignments.set(id, { tenantGeneration, agentGeneration: agentGenerations.get(id) ?? 0, value });
      } finally {
        for (const id of group.agentIds) if (this.pendingGroups.get(id) === group) this.pendingGroups.delete(id);
      }
    })();
    await group.loading;
    return true;
  }

  /** An agent was revoked: its credential is checked against the database again. */
  forgetCredential(agentId: string): void {
    const hash = this.credentialOf.get(agentId);
    if (hash) this.credentials.delete(hash);
    this.credentialOf.delete(agentId);
    this.invalidateAgent(agentId);
  }

  generations(tenantId: string, agentId: string): { tenant: number; agent: number } {
    return { tenant: this.tenantGeneration(tenantId), agent: this.agentGenerations.get(agentId) ?? 0 };
  }

  /** The cached assignments of an agent when nothing changed since they were loaded. */
  cachedAssignments<T>(tenantId: string, agentId: string): CachedAssignments<T> | undefined {
    const e = this.assignments.get(agentId);
    if (!e || e.tenantGeneration !== this.tenantGeneration(tenantId) || e.agentGeneration !== (this.agentGenerations.get(agentId) ?? 0)) {
      return undefined;
    }
    this.stats.cacheHits++;
    return e.value as CachedAssignments<T>;
  }

  /**
   * Keeps what was loaded with the generations read before loading: a change made meanwhile makes
   * the entry stale at once, so the next poll loads again.
   */
  storeAssignments<T>(agentId: string, generations: { tenant: number; agent: number }, value: CachedAssignments<T>): void {
    this.assignments.set(agentId, { tenantGeneration: generations.tenant, agentGeneration: generations.agent, value });
  }

  /** Counts a one-agent load. */
  countLoad(): void {
    this.stats.loads++;
  }

  /**
   * Whether the tenant needs a bulk load (never loaded, or invalidated as a whole since), and runs
   * it: concurrent polls of the tenant share one load.
   */
  async ensureTenantLoaded<T>(tenantId: string, load: () => Promise<Map<string, CachedAssignments<T>>>): Promise<void> {
    const generation = this.tenantGeneration(tenantId);
    if (this.tenantLoaded.get(tenantId) === generation) return;
    const inFlight = this.tenantLoading.get(tenantId);
    if (inFlight) return inFlight;
    const agentGenerations = new Map(this.agentGenerations);
    const p = (async () => {
      try {
        const all = await load();
        this.stats.tenantLoads++;
        for (const [agentId, value] of all) {
          this.assignments.set(agentId, { tenantGeneration: generation, agentGeneration: agentGenerations.get(agentId) ?? 0, value });
        }
        this.tenantLoaded.set(tenantId, generation);
      } finally {
        this.tenantLoading.delete(tenantId);
      }
    })();
    this.tenantLoading.set(tenantId, p);
    return p;
  }

  /** A known, unrevoked agent credential (by its hash), if cached. */
  cachedCredential(hash: string): { tenantId: string; agentId: string } | undefined {
    return this.credentials.get(hash);
  }

  rememberCredential(hash: string, agent: { tenantId: string; agentId: string }): void {
    this.credentials.set(hash, agent);
    this.credentialOf.set(agent.agentId, hash);
  }

  /** Loads every unrevoked agent credential in one query (at start-up, before serving). */
  async warmCredentials(): Promise<number> {
    const rows = await this.db.agent.findMany({ where: { revokedAt: null }, select: { id: true, tenantId: true, credentialHash: true } });
    for (const r of rows) this.rememberCredential(r.credentialHash, { tenantId: r.tenantId, agentId: r.id });
    return rows.length;
  }

  /**
   * Applies changes other replicas made: audit entries since the last sync (with a minute of
   * overlap for clock skew and late commits; ids already applied are skipped).
   */
  async syncFromAudit(): Promise<void> {
    const now = Date.now();
    const entries = await this.db.auditEntry.findMany({
      where: {
        id: { gte: uuid7Floor(Math.max(this.syncFloorMs, this.syncFromMs - 60_000)) },
        action: { in: ['deployment.create', 'deployment.stop', 'deployment.retarget', 'agent.setLabels', 'agent.revoke', 'agent.reportStatus', 'live.start', 'live.stop', 'provider.publish', 'provider.yank'] },
      },
      select: { id: true, tenantId: true, actorId: true, action: true, targetId: true, detail: true },
    });
    for (const e of entries) {
      if (this.syncedIds.has(e.id)) continue;
      this.syncedIds.set(e.id, now);
      if (e.targetId && this.ownTargets.has(e.targetId)) continue;
      if (e.action === 'live.start' || e.action === 'live.stop') {
        // a session started or stopped through another replica: this one's waiting agents ask again
        // (a wake of one this replica made already is harmless: the agent's answer is unchanged)
        const ids = (e.detail as { agentIds?: unknown } | null)?.agentIds;
        if (Array.isArray(ids)) for (const id of ids) if (typeof id === 'string') liveAgentWakes.emit(id);
        continue;
      }
      if (e.action === 'provider.publish' || e.action === 'provider.yank') {
        // a provider release changes the assignments of agents running programs that pin it: a
        // tenant's own reaches only that tenant; an instance-wide one, any tenant
        if (e.tenantId) this.invalidateTenant(e.tenantId);
        else this.invalidateEveryTenant();
      } else if (e.action === 'deployment.create' || e.action === 'deployment.stop' || e.action === 'compat.setSettings') {
        if (e.tenantId) this.invalidateTenant(e.tenantId);
      } else if (e.action === 'agent.revoke') {
        if (e.targetId) this.forgetCredential(e.targetId);
      } else if (e.action === 'agent.reportStatus') {
        const d = e.detail as { from?: string; to?: string };
        if (e.actorId && (d.from === 'stopped' || d.to === 'stopped')) this.invalidateAgent(e.actorId);
      } else if (e.targetId) {
        this.invalidateAgent(e.targetId);
      }
      this.stats.synced++;
    }
    for (const [id, at] of this.syncedIds) if (now - at > 120_000) this.syncedIds.delete(id);
    if (this.ownTargets.size > 10_000) this.ownTargets.clear();
    this.syncFromMs = now;
  }

  /** Records that an agent was seen; written with the next batch. */
  markSeen(agentId: string): void {
    this.seen.add(agentId);
  }

  /** Writes the batched last-seen times (one statement per 250 agents). */
  async flushLastSeen(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.seen.size === 0) return;
    const ids = [...this.seen];
    this.seen = new Set();
    const at = new Date();
    this.flushing = (async () => {
      try {
        // Small statements with a turn of the event loop between them: on PGlite a query runs on
        // the server's own thread, and one statement for 10,000 agents would stall polls for a second.
        for (let i = 0; i < ids.length; i += lastSeenChunk) {
          const chunk = ids.slice(i, i + lastSeenChunk);
          await this.db.$executeRaw`UPDATE "Agent" SET "lastSeenAt" = ${at} WHERE "id" = ANY(${chunk}::text[])`;
          this.stats.lastSeenFlushes++;
          await new Promise((r) => setImmediate(r));
        }
      } catch (err) {
        for (const id of ids) this.seen.add(id);
        throw err;
      } finally {
        this.flushing = undefined;
      }
    })();
    await this.flushing;
  }

  /** Stops the timers and writes what is pending (call before closing the database). */
  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await this.flushLastSeen();
  }
}
