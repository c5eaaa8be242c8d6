// Fleet views the web app needs: pages of agents with kernel and targets, one agent, a deployment's
// preview with each agent's predicted verdict, pages of tokens and members; each tenant-scoped.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { drainCompatJobs } from '../src/jobs/compat-runner.js';
import { backends, type Caller, useHarness } from './harness.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64');
const tarball = (tree: string) => execFileSync('tar', ['-C', `${root}packages/compat/test/fixtures/formats/${tree}`, '-czf', '-', '.']).toString('base64');

describe.each(backends)('web fleet views on %s', (backend) => {
  const { skip, h } = useHarness(backend);

  async function enroll(owner: Caller, hostname: string, labels: Record<string, string>, tree?: string) {
    const { enrollmentToken } = await owner.agent.createEnrollmentToken({ labels });
    const r = await (await h.caller()).agent.enroll({ enrollmentToken, hostname });
    const agent = await h.caller(r.credential);
    if (tree) await agent.agent.reportProfile({ release: tree, machine: 'x86_64', tarball: tarball(tree) });
    return { id: r.agent.id, api: agent };
  }

  describe.skipIf(skip)('deployment.preview, agent.list, agent.get, token.list, member.list', () => {
    it('previews a deployment: the matching agents, each with the verdict on its own kernel, and writes nothing', async () => {
      const t = await h.tenant('preview');
      await t.owner.program.publish({ name: 'forkcomm', version: '1.0.0', artifact: b64(readFileSync(`${root}examples/c/forkcomm.o`)) });
      const linux = await enroll(t.owner, 'new-node', { env: 'prod' }, 'linux-6.18');
      const android = await enroll(t.owner, 'old-node', { env: 'prod' }, 'android-3.10.49');
      await enroll(t.owner, 'bare-node', { env: 'prod' });
      await enroll(t.owner, 'staging-node', { env: 'staging' });
      await drainCompatJobs(h.db.prisma);
      const before = await h.db.prisma.deployment.count();
      const p = await t.owner.deployment.preview({ name: 'forkcomm', version: '1.0.0', selector: 'env=prod' });
      expect(p.total).toBe(3);
      const byHost = Object.fromEntries(p.agents.map((a) => [a.hostname, a]));
      expect(byHost['new-node']).toMatchObject({ verdict: 'incompatible', profile: { release: 'linux-6.18' } });
      expect(byHost['new-node']?.reason).toContain('parent_comm');
      expect(byHost['old-node']).toMatchObject({ verdict: 'compatible' });
      expect(byHost['bare-node']).toMatchObject({ verdict: null, profile: null });
      expect(p.counts).toEqual({ incompatible: 1, compatible: 1, 'no-profile': 1 });
      expect(await h.db.prisma.deployment.count()).toBe(before);
      await expect(t.owner.deployment.preview({ name: 'forkcomm', version: '9.9.9', selector: 'env=prod' })).rejects.toMatchObject({ code: 'NOT_FOUND' });

      // Agents: a page with kernel and targets by status; one agent with its targets.
      const d = await t.owner.deployment.create({ name: 'forkcomm', version: '1.0.0', selector: 'env=prod' });
      await linux.api.agent.reportStatus({ targets: [{ targetId: (await t.owner.deployment.get({ id: d.deployment.id })).targets.find((x) => x.agentId === linux.id)!.id, status: 'refused', message: 'parent_comm became __data_loc' }] });
      const page1 = await t.owner.agent.list({ limit: 2 });
      expect(page1.agents).toHaveLength(2);
      expect(page1.nextCursor).toBe(page1.agents[1]!.id);
      const page2 = await t.owner.agent.list({ limit: 2, cursor: page1.nextCursor! });
      expect([...page1.agents, ...page2.agents].map((a) => a.hostname).sort()).toEqual(['bare-node', 'new-node', 'old-node', 'staging-node']);
      const all = await t.owner.agent.list();
      expect(all.agents.find((a) => a.id === linux.id)).toMatchObject({ kernel: { release: 'linux-6.18', machine: 'x86_64' }, targets: { refused: 1 } });
      expect((await t.owner.agent.list({ q: 'old' })).agents.map((a) => a.hostname)).toEqual(['old-node']);
      expect((await t.owner.agent.list({ selector: 'env=staging' })).agents.map((a) => a.hostname)).toEqual(['staging-node']);
      const one = await t.owner.agent.get({ id: linux.id });
      expect(one.targets).toMatchObject([{ program: { name: 'forkcomm', version: '1.0.0' }, status: 'refused', reason: 'parent_comm became __data_loc', desiredState: 'running' }]);
      expect(android.id).toBeTruthy();
    });

    it('pages tokens (newest first) and members', async () => {
      const t = await h.tenant('pages-tm');
      for (let i = 0; i < 3; i++) await t.owner.token.create({ name: `t${i}` });
      const first = await t.owner.token.list({ limit: 2 });
      expect(first.tokens.map((x) => x.name)).toEqual(['t2', 't1']);
      const rest = await t.owner.token.list({ limit: 2, cursor: first.nextCursor! });
      expect(rest.tokens.map((x) => x.name)).toContain('t0');
      expect((await t.owner.token.list({ kind: 'session' })).tokens).toEqual([]);
      await h.member(t.owner, 'viewer');
      const m1 = await t.owner.member.list({ limit: 1 });
      expect(m1.members.map((m) => m.role)).toEqual(['owner']);
      const m2 = await t.owner.member.list({ limit: 1, cursor: m1.nextCursor! });
      expect(m2.members.map((m) => m.role)).toEqual(['viewer']);
    });

    it('keeps each tenant to its own: another tenant’s agents, previews and tokens are NOT_FOUND or absent', async () => {
      const a = await h.tenant('fleet-a');
      const b = await h.tenant('fleet-b');
      await a.owner.program.publish({ name: 'forkcomm', version: '1.0.0', artifact: b64(readFileSync(`${root}examples/c/forkcomm.o`)) });
      const agent = await enroll(a.owner, 'a-node', { env: 'prod' });
      await expect(b.owner.agent.get({ id: agent.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect((await b.owner.agent.list()).agents).toEqual([]);
      await expect(b.owner.deployment.preview({ name: 'forkcomm', version: '1.0.0', selector: 'env=prod' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect((await b.owner.token.list()).tokens.every((x) => x.user.email.endsWith(`${b.name}.example`))).toBe(true);
      expect((await b.owner.member.list()).members.map((m) => m.email)).toEqual([`owner@${b.name}.example`]);
      const viewer = await h.member(a.owner, 'viewer');
      await expect(viewer.caller.deployment.preview({ name: 'forkcomm', version: '1.0.0', selector: 'env=prod' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    });
  });
});
