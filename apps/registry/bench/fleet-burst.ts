// One tenant's enrolment burst against another tenant's request, with and without the fleet gate
// (src/data/fleet-gate.ts), side by side in one process: rounds interleaved (gate order reversed
// every other round), each round a new tenant enrolling `PROBEYARD_BENCH_BURST` agents at once
// (default 30) and, once the first of them is done, the other tenant's `program.list`. Prints per
// gate the list's latency, how many of the burst finished before it, and how long the whole burst
// took (median and range). Calls go through the router (`createCaller`), not HTTP.
//
//   pnpm --filter @probeyard/registry exec tsx --conditions=@probeyard/source bench/fleet-burst.ts
//
//   PROBEYARD_BENCH_BACKENDS  `pglite,postgres` (default both; PGlite on its own thread, as the server runs it)
//   PROBEYARD_BENCH_ROUNDS    rounds per gate (default 8)
//   PROBEYARD_BENCH_BURST     enrolments of the bursting tenant (default 30)
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import pg from 'pg';
import { ensureAdminCredential } from '../src/auth/admin-credential.js';
import { createContextFactory, createDeps } from '../src/context.js';
import { FleetGate, type FleetGateLimits, setFleetGate } from '../src/data/fleet-gate.js';
import { openDatabase } from '../src/db/open.js';
import { createCaller } from '../src/router.js';
import { prepareDataFolder } from '../src/testing.js';

const backends = (process.env.PROBEYARD_BENCH_BACKENDS ?? 'pglite,postgres').split(',').map((s) => s.trim());
const rounds = Number(process.env.PROBEYARD_BENCH_ROUNDS ?? 8);
const burst = Number(process.env.PROBEYARD_BENCH_BURST ?? 30);
const postgresAdminUrl = process.env.PROBEYARD_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const range = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;

async function bench(backend: string) {
  const dataDir = await prepareDataFolder(`probeyard-burst-${backend}-`);
  let drop: (() => Promise<void>) | undefined;
  let databaseUrl: string | undefined;
  if (backend === 'postgres') {
    const name = `probeyard_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const u = new URL(postgresAdminUrl);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
    drop = async () => {
      const c = new pg.Client({ connectionString: postgresAdminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    };
  }
  const db = await openDatabase({ dataDir, ...(databaseUrl ? { databaseUrl } : { pgliteThread: 'worker' as const }) });
  const deps = createDeps(db.prisma);
  try {
    await db.migrate();
    const adminSecret = await ensureAdminCredential(dataDir, db.prisma);
    const factory = createContextFactory(deps);
    const caller = async (secret?: string) => createCaller(await factory({ authorization: secret ? `Bearer ${secret}` : undefined, ip: '10.0.0.1' }));
    const admin = await caller(adminSecret);
    let n = 0;
    const tenant = async (prefix: string) => {
      const r = await admin.tenant.create({ name: `${prefix}-${++n}`, ownerEmail: `owner@${prefix}-${n}.example` });
      return { id: r.tenant.id, owner: await caller(r.ownerToken) };
    };
    const other = await tenant('neighbour');
    await other.owner.program.list();
    const anon = await caller();
    const gated: FleetGateLimits = db.fleetGate.limits;
    const gates: Record<string, FleetGate> = {
      'no gate': new FleetGate({ perTenant: 100_000, total: 100_000, maxQueuedPerTenant: 100_000, maxWaitMs: gated.maxWaitMs }),
      [`gate ${gated.perTenant}/${gated.total}`]: new FleetGate(gated),
    };
    const results = new Map<string, { listMs: number[]; before: number[]; burstMs: number[] }>();
    for (let round = 0; round < rounds; round++) {
      const names = Object.keys(gates);
      for (const name of round % 2 === 0 ? names : names.reverse()) {
        setFleetGate(db.prisma, gates[name]!);
        const a = await tenant('burst');
        const tokens = await Promise.all(Array.from({ length: burst }, async () => (await a.owner.agent.createEnrollmentToken({ labels: { env: 'prod' } })).enrollmentToken));
        let finished = 0;
        const t0 = performance.now();
        const enrolments = tokens.map((t, i) =>
          anon.agent.enroll({ enrollmentToken: t, hostname: `n${i}` }).then(
            () => finished++,
            () => finished++,
          ),
        );
        while (finished === 0) await new Promise((r) => setImmediate(r));
        const t1 = performance.now();
        await other.owner.program.list();
        const listMs = performance.now() - t1;
        const before = finished;
        await Promise.all(enrolments);
        const r = results.get(name) ?? { listMs: [], before: [], burstMs: [] };
        r.listMs.push(listMs);
        r.before.push(before);
        r.burstMs.push(performance.now() - t0);
        results.set(name, r);
      }
    }
    for (const [name, r] of results) {
      console.log(
        `${backend} ${name}: other tenant's list ${median(r.listMs).toFixed(0)} ms (${range(r.listMs)}), after ${median(r.before)} of the burst (${range(r.before)}); burst of ${burst} ${median(r.burstMs).toFixed(0)} ms (${range(r.burstMs)})`,
      );
    }
  } finally {
    await deps.fleet.close();
    await deps.uploads.close();
    await deps.verifier.close();
    await db.close();
    await drop?.();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(`fleet burst bench: ${rounds} rounds per gate, bursts of ${burst}, load average at start ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
for (const backend of backends) await bench(backend);
console.log(`load average at end ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
