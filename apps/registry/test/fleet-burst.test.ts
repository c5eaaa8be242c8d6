// One tenant's burst of fleet transactions (enrolments, relabels, deployments: each takes the
// tenant's fleet lock, `lockTenantFleet`) must not hold the database for the other tenants.
//
// PostgreSQL: tenant A's fleet lock is held from a connection of its own (as another replica's
// long deployment would hold it) while A fires more enrolments than the registry's pool has
// connections. Tenant B's requests — a `program.list`, an agent's first poll, an enrolment and a
// deployment of its own — must all succeed while A's lock is still held. Before the per-tenant cap
// (src/data/fleet-gate.ts) every pooled connection sat in one of A's transactions waiting for the
// lock, so B's list waited for a connection until the lock went, and B's enrolment ended in a 503
// ("database busy").
//
// Both databases, no lock held: B's `program.list`, sent once A's burst is under way, waits for at
// most A's share of the pool, not for the burst. PGlite's one session runs one transaction at a
// time, first come first served: A's burst queued all 30 of its transactions for the session and
// B's list ran after every one of them (on PostgreSQL after 21 of them, the pool's queue). PGlite
// runs on its own thread here, as the server runs it: on the test's thread (the harness's default)
// a burst of statements never lets the event loop turn, so B's request could not even be sent.
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { fleetGateOf } from '../src/data/fleet-gate.js';
import { postgresPoolSize } from '../src/db/open.js';
import { backends, type Caller, useHarness } from './harness.js';
import { insertVersion } from './support/fleet.js';

/** More of one tenant's enrolments at once than the registry's pool has connections. */
const burst = postgresPoolSize + 6;

type Outcome = { ok: true } | { ok: false; code: string; message: string };
const outcome = (p: Promise<unknown>): Promise<Outcome> =>
  p.then(
    () => ({ ok: true as const }),
    (err: { code?: string; message?: string }) => ({ ok: false as const, code: String(err.code), message: String(err.message) }),
  );

vi.stubEnv('PROBEYARD_TEST_PGLITE_THREAD', 'worker');

describe.each(backends)('one tenant enrolling a burst of agents on %s', (backend) => {
  const { skip, h } = useHarness(backend);

  async function tokens(owner: Caller, n: number, labels: Record<string, string> = { env: 'prod' }) {
    return Promise.all(Array.from({ length: n }, async () => (await owner.agent.createEnrollmentToken({ labels })).enrollmentToken));
  }

  // A lock held from another session needs a second session: PostgreSQL only (PGlite has one).
  if (backend === 'postgres') {
    it.skipIf(skip)(
      "another tenant's list, poll, enrolment and deployment complete while the burst waits on its held fleet lock",
      async () => {
        const a = await h.tenant('burst');
        const b = await h.tenant('neighbour');
        await insertVersion(h.db.prisma, a.id, 'p', '1.0.0');
        await insertVersion(h.db.prisma, b.id, 'q', '1.0.0');
        await a.owner.deployment.create({ name: 'p', version: '1.0.0', selector: 'env=prod' });
        const anon = await h.caller();
        const bAgent = await anon.agent.enroll({ enrollmentToken: (await tokens(b.owner, 1))[0]!, hostname: 'b-0' });
        const bAgentCaller = await h.caller(bAgent.credential);
        const [bToken] = await tokens(b.owner, 1);
        const aTokens = await tokens(a.owner, burst);

        // The harness's database (its `where` is the URL, a password redacted: trust auth here has none).
        const url = h.db.where;
        const holder = new pg.Client({ connectionString: url });
        const watcher = new pg.Client({ connectionString: url });
        await holder.connect();
        await watcher.connect();
        try {
          // A's fleet lock, as lockTenantFleet takes it, held by another session.
          await holder.query('BEGIN');
          await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`fleet:${a.id}`]);
          const aEnrolments = aTokens.map((t, i) => outcome(anon.agent.enroll({ enrollmentToken: t, hostname: `a-${i}` })));

          // Until A's transactions that reach the lock have reached it: some wait on an advisory
          // lock, and their number has not changed for a second (or for 20 s, it keeps changing).
          const advisoryWaiters = async () =>
            Number(
              (await watcher.query("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'"))
                .rows[0].n,
            );
          await vi.waitFor(async () => expect(await advisoryWaiters()).toBeGreaterThan(0), { timeout: 60_000, interval: 50 });
          let seen = await advisoryWaiters();
          for (let stable = 0, tries = 0; stable < 10 && tries < 200; tries++) {
            await new Promise((r) => setTimeout(r, 100));
            const n = await advisoryWaiters();
            stable = n === seen ? stable + 1 : 0;
            seen = n;
          }
          const gate = fleetGateOf(h.db.prisma);
          const aLoad = gate.load(a.id);

          // B's requests, with A's lock still held. The lock goes when they are all answered, or
          // past B's transactions' wait for a connection (so a B stuck behind A shows as stuck).
          let released = false;
          const bRequests = Promise.all([
            outcome(b.owner.program.list()),
            outcome(bAgentCaller.agent.poll()),
            outcome(anon.agent.enroll({ enrollmentToken: bToken!, hostname: 'b-1' })),
            outcome(b.owner.deployment.create({ name: 'q', version: '1.0.0', selector: 'env=prod' })),
          ]).then((r) => ({ r, whileHeld: !released }));
          const holdLimit = new Promise<void>((resolve) => setTimeout(resolve, 12_000));
          await Promise.race([bRequests, holdLimit]);
          released = true;
          await holder.query('ROLLBACK');
          const bDone = await bRequests;

          expect(bDone.r).toEqual([{ ok: true }, { ok: true }, { ok: true }, { ok: true }]);
          expect(bDone.whileHeld, "B's requests were answered while A's fleet lock was held").toBe(true);
          // A held its share of the pool, no more: that many of its transactions waited on the lock
          // in the database, the rest of the burst waited in the registry holding no connection.
          expect(seen).toBe(gate.limits.perTenant);
          expect(gate.limits.perTenant).toBeLessThan(postgresPoolSize / 2);
          expect(aLoad).toEqual({ running: gate.limits.perTenant, waiting: burst - gate.limits.perTenant });

          // A's burst: each enrolment either went through once the lock was free, or was told to
          // come back (503, the token unspent); sent again, every one of them enrols.
          const aDone = await Promise.all(aEnrolments);
          for (const o of aDone) if (!o.ok) expect(o).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringMatching(/^database busy: .*try again in 2 s$/) });
          const retried = await Promise.all(aDone.map((o, i) => (o.ok ? o : outcome(anon.agent.enroll({ enrollmentToken: aTokens[i]!, hostname: `a-${i}` })))));
          expect(retried.filter((o) => !o.ok)).toEqual([]);
          expect(await h.db.prisma.agent.count({ where: { tenantId: a.id } })).toBe(burst);
          // Every one of them got a target of A's running deployment (the fleet lock's promise).
          expect(await h.db.prisma.deploymentTarget.count({ where: { tenantId: a.id } })).toBe(burst);
        } finally {
          await holder.query('ROLLBACK').catch(() => {});
          await holder.end();
          await watcher.end();
        }
      },
      180_000,
    );
  }

  it.skipIf(skip)("another tenant's query does not wait for the whole burst", async () => {
    const a = await h.tenant('burst');
    const b = await h.tenant('neighbour');
    await insertVersion(h.db.prisma, a.id, 'p', '1.0.0');
    await a.owner.deployment.create({ name: 'p', version: '1.0.0', selector: 'env=prod' });
    const anon = await h.caller();
    const n = 30;
    const aTokens = await tokens(a.owner, n);
    let aFinished = 0;
    const aEnrolments = aTokens.map((t, i) =>
      outcome(anon.agent.enroll({ enrollmentToken: t, hostname: `a-${i}` })).then((o) => {
        aFinished++;
        return o;
      }),
    );
    // B asks once A's burst is under way (its first enrolment done, the others sent).
    while (aFinished === 0) await new Promise((r) => setImmediate(r));
    const listed = await outcome(b.owner.program.list());
    const aBeforeB = aFinished;
    expect(listed).toEqual({ ok: true });
    expect(aBeforeB, `${aBeforeB} of A's ${n} enrolments finished before B's list`).toBeLessThan(n / 2);
    const aDone = await Promise.all(aEnrolments);
    expect(aDone.filter((o) => !o.ok)).toEqual([]);
    expect(await h.db.prisma.deploymentTarget.count({ where: { tenantId: a.id } })).toBe(n);
  });
});
