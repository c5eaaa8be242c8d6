// How many of a tenant's fleet transactions may hold a database connection at once.
//
// A fleet transaction (an enrolment, a relabel, a deployment: whatever matches agents against
// deployments) takes the tenant's fleet lock (`lockTenantFleet`, a PostgreSQL advisory lock held to
// the transaction's end), so one tenant's fleet transactions run one after another in the
// database, across every registry replica. A transaction waiting for that lock still holds its
// pooled connection, though: thirty agents of one tenant enrolling at once held all ten of a
// replica's connections, waiting in turn, and every other tenant's requests waited for a
// connection or ended in 503 (`test/fleet-burst.test.ts`). So each waits here first, holding no
// connection: at most `perTenant` of one tenant's fleet transactions (and `total` of all tenants')
// are open at once per pool, the others queue per tenant, served round-robin between tenants, for at
// most the transaction's own wait (`maxWait`) and at most `maxQueuedPerTenant` of them; past either
// bound the answer is `unavailable` (503 with Retry-After), nothing written, the same request good
// to send again. A cap per process is a cap per pool, which is what a replica has to protect.
import type { Db } from '../db/open.js';
import { RegistryError, retryAfterSeconds } from '../errors.js';
import type { Tx } from './tx.js';

export interface FleetGateLimits {
  /** Fleet transactions of one tenant open at once. */
  perTenant: number;
  /** Fleet transactions of all tenants open at once (what is left of the pool stays for everything else). */
  total: number;
  /** Fleet transactions of one tenant waiting; one more is refused at once. */
  maxQueuedPerTenant: number;
  /** How long one waits here at most, unless its transaction says (its `maxWait`: the same wait, to start). */
  maxWaitMs: number;
}

/**
 * The limits for a pool of `poolSize` connections whose transactions wait `maxWaitMs` to start: a
 * quarter of the pool per tenant and half of it for all fleet transactions (at least one each), 256
 * waiting per tenant. PGlite has one session (a pool of one): one fleet transaction at a time, and
 * the next one asks for the session only after it, so any other request asking meanwhile goes
 * between them.
 */
export function fleetGateLimits(poolSize: number, maxWaitMs: number): FleetGateLimits {
  const perTenant = Math.max(1, Math.floor(poolSize / 4));
  return { perTenant, total: Math.max(perTenant, Math.floor(poolSize / 2)), maxQueuedPerTenant: 256, maxWaitMs };
}

/** One tenant's fleet transactions in this process. */
export interface FleetLoad {
  running: number;
  waiting: number;
}

interface Waiter {
  admit(): void;
}

interface TenantQueue {
  running: number;
  waiting: Waiter[];
}

/** The counters since the gate was made (tests and logs). */
export interface FleetGateStats {
  /** Fleet transactions let through (at once or after a wait). */
  admitted: number;
  /** Of those, the ones that waited. */
  waited: number;
  /** Refused after waiting their whole `maxWait`. */
  timedOut: number;
  /** Refused at once: their tenant already had `maxQueuedPerTenant` waiting. */
  queueFull: number;
}

/** Per-tenant FIFO queues in front of the fleet transactions of one database pool. */
export class FleetGate {
  private running = 0;
  private readonly tenants = new Map<string, TenantQueue>();
  /** Tenants with waiters, in the order they are served next (round-robin). */
  private readonly turn: string[] = [];
  readonly stats: FleetGateStats = { admitted: 0, waited: 0, timedOut: 0, queueFull: 0 };

  constructor(readonly limits: FleetGateLimits) {
    if (!(limits.perTenant >= 1 && limits.total >= limits.perTenant && limits.maxQueuedPerTenant >= 0 && limits.maxWaitMs >= 0)) {
      throw new RangeError(`fleet gate: limits must have 1 <= perTenant <= total, maxQueuedPerTenant >= 0 and maxWaitMs >= 0, got ${JSON.stringify(limits)}`);
    }
  }

  /** A tenant's fleet transactions running and waiting now. */
  load(tenantId: string): FleetLoad {
    const t = this.tenants.get(tenantId);
    return { running: t?.running ?? 0, waiting: t?.waiting.length ?? 0 };
  }

  /** Fleet transactions of all tenants running now. */
  get runningTotal(): number {
    return this.running;
  }

  /**
   * Runs `fn` once the tenant may open one more fleet transaction, waiting at most `maxWaitMs`
   * (the gate's own by default). `what` names the request in the refusal (`agent enroll`).
   */
  async run<T>(tenantId: string, what: string, fn: () => Promise<T>, maxWaitMs = this.limits.maxWaitMs): Promise<T> {
    let t = this.tenants.get(tenantId);
    if (!t) {
      t = { running: 0, waiting: [] };
      this.tenants.set(tenantId, t);
    }
    if (t.waiting.length === 0 && t.running < this.limits.perTenant && this.running < this.limits.total) {
      this.start(t);
    } else {
      await this.wait(tenantId, t, what, maxWaitMs);
      this.stats.waited++;
    }
    try {
      return await fn();
    } finally {
      t.running--;
      this.running--;
      if (t.running === 0 && t.waiting.length === 0) this.tenants.delete(tenantId);
      this.dispatch();
    }
  }

  private start(t: TenantQueue): void {
    t.running++;
    this.running++;
    this.stats.admitted++;
  }

  private wait(tenantId: string, t: TenantQueue, what: string, maxWaitMs: number): Promise<void> {
    if (t.waiting.length >= this.limits.maxQueuedPerTenant) {
      this.stats.queueFull++;
      if (t.running === 0 && t.waiting.length === 0) this.tenants.delete(tenantId);
      return Promise.reject(
        busy(`${what}: ${t.waiting.length} fleet changes of this tenant are already waiting (at most ${this.limits.perTenant} at a time per registry process)`),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        const at = t.waiting.indexOf(waiter);
        if (at < 0) return;
        t.waiting.splice(at, 1);
        if (t.waiting.length === 0) this.leaveTurn(tenantId);
        if (t.running === 0 && t.waiting.length === 0) this.tenants.delete(tenantId);
        this.stats.timedOut++;
        reject(busy(`${what}: this tenant's fleet changes queued longer than ${Math.round(maxWaitMs / 100) / 10} s (at most ${this.limits.perTenant} at a time per registry process)`));
      }, maxWaitMs);
      if (t.waiting.length === 0) this.turn.push(tenantId);
      t.waiting.push(waiter);
    });
  }

  private leaveTurn(tenantId: string): void {
    const at = this.turn.indexOf(tenantId);
    if (at >= 0) this.turn.splice(at, 1);
  }

  /** Lets waiters in while there is room: the next tenant in turn that is under its own cap. */
  private dispatch(): void {
    while (this.running < this.limits.total) {
      const at = this.turn.findIndex((id) => this.tenants.get(id)!.running < this.limits.perTenant);
      if (at < 0) return;
      const tenantId = this.turn[at]!;
      const t = this.tenants.get(tenantId)!;
      const waiter = t.waiting.shift()!;
      this.turn.splice(at, 1);
      // Still waiting: to the back of the turn, behind the other tenants.
      if (t.waiting.length > 0) this.turn.push(tenantId);
      this.start(t);
      waiter.admit();
    }
  }
}

function busy(detail: string): RegistryError {
  return new RegistryError('unavailable', `database busy: ${detail}; try again in ${retryAfterSeconds} s`, { retryAfterSeconds });
}

const gates = new WeakMap<Db, FleetGate>();

/** Prisma's default `maxWait` (2 s), for a client made without transaction options. */
const prismaDefaultMaxWaitMs = 2000;

/**
 * The gate of the pool behind `db` (`openDatabase` sets it; a client made otherwise gets one for
 * node-postgres's default pool of ten and Prisma's default wait).
 */
export function fleetGateOf(db: Db): FleetGate {
  let gate = gates.get(db);
  if (!gate) {
    gate = new FleetGate(fleetGateLimits(10, prismaDefaultMaxWaitMs));
    gates.set(db, gate);
  }
  return gate;
}

/** Sets the gate of the pool behind `db` (`openDatabase`, for its pool's size). */
export function setFleetGate(db: Db, gate: FleetGate): void {
  gates.set(db, gate);
}

/** Options of a fleet transaction, as Prisma's `$transaction` takes them. */
export interface FleetTransactionOptions {
  /** How long to wait to start, at the gate and then for a connection (the gate's and the client's `maxWait` by default). */
  maxWait?: number;
  /** How long the transaction may run once started (the client's `timeout` by default). */
  timeout?: number;
}

/**
 * An interactive transaction that takes the tenant's fleet lock (`createDeployment`,
 * `reconcileAgentTargets`), opened once the tenant's share of the pool has room (`FleetGate`).
 */
export function fleetTransaction<T>(db: Db, tenantId: string, what: string, fn: (tx: Tx) => Promise<T>, options: FleetTransactionOptions = {}): Promise<T> {
  const txOptions: FleetTransactionOptions = {};
  if (options.maxWait !== undefined) txOptions.maxWait = options.maxWait;
  if (options.timeout !== undefined) txOptions.timeout = options.timeout;
  return fleetGateOf(db).run(tenantId, what, () => db.$transaction(fn, txOptions), options.maxWait);
}
