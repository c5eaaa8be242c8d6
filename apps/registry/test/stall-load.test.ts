// Issue 13's proof, small (bench/stall-load.ts is the full one, with the p99 target): while one
// tenant publishes programs the verifier takes long on (several at once) and uploads and deletes
// big kernel profiles, 50 agents of another tenant keep polling over HTTP, and every poll
// succeeds (PGlite and PostgreSQL). The heavy tenant's work is really under way meanwhile: the
// verifier's workers hold its publishes (at most its share of them), and its uploads complete.
import { readFileSync, rmSync } from 'node:fs';
import { createTRPCClient, httpLink } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { readAdminCredential } from '../src/auth/admin-credential.js';
import type { AppRouter } from '../src/index.js';
import { startRegistry } from '../src/server/registry.js';
import { prepareDataFolder } from '../src/testing.js';
import { backends, createPostgresDatabase, skipReason } from './harness.js';
import { eventsTree } from './support/tar.js';

const switchCount = readFileSync(new URL('../../../examples/sched-switch-count.s', import.meta.url));

function client(url: string, token?: string) {
  return createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/trpc`, headers: () => (token ? { authorization: `Bearer ${token}` } : {}) })] });
}

describe.each(backends)('one heavy tenant, 50 polling agents, on %s', (backend) => {
  const skip = skipReason(backend);
  it.skipIf(skip)("every agent's poll succeeds while the heavy tenant verifies and uploads", async () => {
    const dataDir = await prepareDataFolder(`probeyard-stall-${backend}-`);
    const pg = backend === 'postgres' ? await createPostgresDatabase() : undefined;
    // Each verification spins 1.5 s on its worker: a stand-in for a program the verifier takes long on.
    const registry = await startRegistry({ dataDir, databaseUrl: pg?.url, port: 0, logger: () => {}, verifier: { spinMs: (kind) => (kind === 'read' ? 1500 : 0) } });
    try {
      const admin = client(registry.url, readAdminCredential(dataDir) ?? '');
      const fleet = await admin.tenant.create.mutate({ name: 'fleet', ownerEmail: 'owner@fleet.example' });
      const heavy = await admin.tenant.create.mutate({ name: 'heavy', ownerEmail: 'owner@heavy.example' });
      const fleetOwner = client(registry.url, fleet.ownerToken);
      const heavyOwner = client(registry.url, heavy.ownerToken);
      const agents = [];
      for (let i = 0; i < 50; i++) {
        const { enrollmentToken } = await fleetOwner.agent.createEnrollmentToken.mutate({});
        const r = await client(registry.url).agent.enroll.mutate({ enrollmentToken, hostname: `node-${i}` });
        agents.push(client(registry.url, r.credential));
      }

      let stop = false;
      const heavyWork = (async () => {
        const outcomes: string[] = [];
        for (let round = 0; !stop; round++) {
          const publishes = [0, 1, 2].map((k) =>
            heavyOwner.program.publish.mutate({ name: 'count', version: `1.${round}.${k}`, artifact: Buffer.from(switchCount).toString('base64') }).then(
              () => 'published',
              (err: Error) => `publish: ${err.message}`,
            ),
          );
          const upload = heavyOwner.kernel.upload
            .mutate({ name: `big-${round}`, tarball: eventsTree(3000, `r${round}x`) })
            .then(() => heavyOwner.kernel.delete.mutate({ name: `big-${round}` }))
            .then(
              () => 'uploaded',
              (err: Error) => `upload: ${err.message}`,
            );
          outcomes.push(...(await Promise.all([...publishes, upload])));
        }
        return outcomes;
      })();

      // Polls, while the heavy tenant's publishes hold the verifier's workers.
      while (registry.deps.verifier.load(heavy.tenant.id).running === 0) await new Promise((r) => setTimeout(r, 10));
      let polls = 0;
      let busyPolls = 0;
      for (let round = 0; round < 10; round++) {
        const busy = registry.deps.verifier.load(heavy.tenant.id);
        // One tenant holds at most its share (1 of 2) of the verifier's workers.
        expect(busy.running).toBeLessThanOrEqual(1);
        const results = await Promise.all(agents.map((a) => a.agent.poll.query({})));
        for (const r of results) expect(r).toMatchObject({ etag: expect.any(String), pollAfterSeconds: 10 });
        polls += results.length;
        if (busy.running > 0) busyPolls += results.length;
        await new Promise((r) => setTimeout(r, 100));
      }
      stop = true;
      const outcomes = await heavyWork;
      expect(polls).toBe(500);
      expect(busyPolls).toBeGreaterThan(0);
      expect(outcomes.filter((o) => o !== 'published' && o !== 'uploaded')).toEqual([]);
      expect(outcomes).toContain('uploaded');
    } finally {
      await registry.close();
      rmSync(dataDir, { recursive: true, force: true });
      await pg?.drop();
    }
  });
});
