// The agent against a real registry (PGlite): enrolment with a token from `probeyard agents
// enroll-token`, the credential kept 0600 and never shown, the profile reported, polls, /metrics
// and /healthz, `agents list | label | revoke`, and a revoked credential stopping the agent.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Agent } from '../src/agent.js';
import { enroll } from '../src/enroll.js';
import { isAgentError } from '../src/errors.js';
import { jsonLogger } from '../src/log.js';
import { startTestRegistry, type TestRegistry } from './support/registry.js';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 600_000 });

const recording = fileURLToPath(new URL('../../../examples/recordings/sched-small.dat', import.meta.url));

async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

let reg: TestRegistry;
let tmp: string;
beforeAll(async () => {
  reg = await startTestRegistry();
  tmp = mkdtempSync(join(tmpdir(), 'probeyard-agent-test-'));
});
afterAll(async () => {
  await reg?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('an enrolled agent and the registry', () => {
  it('enrols once with a token, reports its profile, polls, serves metrics, and stops when revoked', async () => {
    const made = await reg.cli(['agents', 'enroll-token', '--label', 'env=test', '--label', 'team=obs']);
    expect(made.err).toBe('');
    expect(made.code).toBe(0);
    const token = made.last;
    expect(token).toMatch(/^pye_/);

    const state = join(tmp, 'node-1');
    const enrolled = await enroll({ registry: reg.url, token, state, labels: { role: 'replay', env: 'mine' }, feed: recording, hostname: 'node-1' });
    const credentialFile = join(state, 'credential.json');
    expect(statSync(credentialFile).mode & 0o777).toBe(0o600);
    expect(statSync(state).mode & 0o777).toBe(0o700);
    const credential = JSON.parse(readFileSync(credentialFile, 'utf8')).credential as string;
    expect(credential).toMatch(/^pya_/);
    expect(JSON.stringify(enrolled)).not.toContain(credential);
    // the token's labels win over the agent's own; the recording's kernel gives kernel.release and arch
    expect(enrolled.labels).toMatchObject({ env: 'test', team: 'obs', role: 'replay', arch: 'x86_64', os: 'linux', hostname: expect.any(String) });
    expect(enrolled.labels['kernel.release']).toMatch(/^6\.18/);

    // the token is spent, and a folder holding a credential is not enrolled again by accident
    const again = await enroll({ registry: reg.url, token, state: join(tmp, 'node-2') }).catch((e) => e);
    expect(isAgentError(again) && again.code).toBe('unauthorized');
    const twice = await enroll({ registry: reg.url, token: 'pye_x', state }).catch((e) => e);
    expect(isAgentError(twice) && twice.code).toBe('state');
    expect(twice.message).toContain('already holds the credential');

    const logs: string[] = [];
    const agent = await Agent.start({
      state,
      feed: { kind: 'file', path: recording, loop: false, pace: 'max' },
      metrics: '127.0.0.1:0',
      pollIntervalMs: 200,
      backoff: { baseMs: 100, capMs: 500 },
      log: jsonLogger({ write: (l) => logs.push(l), minLevel: 'debug' }),
    });
    try {
      const listed = await waitFor('the profile on the agent', async () => {
        const r = await reg.cli(['agents', 'list', '--json']);
        const a = (JSON.parse(r.out) as { id: string; kernelProfileId: string | null; hostname: string }[]).find((x) => x.id === enrolled.agentId);
        return a?.kernelProfileId ? a : undefined;
      });
      expect(listed.hostname).toBe('node-1');
      const kernels = await reg.cli(['kernels', 'list', '--json']);
      expect(kernels.out).toContain(listed.kernelProfileId!);
      // a replaying node knows only the recorded events: its profile is partial
      expect((JSON.parse(kernels.out) as { id: string; complete: boolean }[]).find((p) => p.id === listed.kernelProfileId)?.complete).toBe(false);
      await waitFor('two polls', () => agent.metrics.polls.get().then((m) => (m.values.reduce((s, v) => s + v.value, 0) >= 2 ? true : undefined)));

      const metrics = await (await fetch(`${agent.metricsUrl}/metrics`)).text();
      expect(metrics).toMatch(/^probeyard_agent_polls_total\{result="changed"\} 1$/m);
      expect(metrics).toMatch(/^probeyard_agent_spool_bytes 0$/m);
      expect(metrics).toMatch(/^# TYPE probeyard_agent_poll_duration_seconds histogram$/m);
      expect(metrics).toMatch(/^probeyard_agent_process_resident_memory_bytes \d+/m);
      const health = await fetch(`${agent.metricsUrl}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ ok: true, agentId: enrolled.agentId, kernel: { complete: false } });

      const table = await reg.cli(['agents', 'list']);
      expect(table.out.split('\n')[0]).toMatch(/^ID\s+HOSTNAME\s+LABELS\s+KERNEL PROFILE\s+VERSION\s+LAST SEEN\s+STATE/);
      expect(table.out).toMatch(new RegExp(`${enrolled.agentId}\\s+node-1\\s+arch=x86_64,env=test,.*\\s+active`));
      const relabelled = await reg.cli(['agents', 'label', enrolled.agentId, 'zone=b', 'team-']);
      expect(relabelled.code).toBe(0);
      expect(relabelled.out).toContain('zone=b');
      expect(relabelled.out).not.toContain('team=');

      const revoked = await reg.cli(['agents', 'revoke', enrolled.agentId]);
      expect(revoked).toMatchObject({ code: 0, out: `revoked agent ${enrolled.agentId} (node-1): its credential no longer works\n` });
      expect(await agent.done).toBe(1);
    } finally {
      await agent.stop('test over');
    }
    const all = logs.join('');
    expect(all).toContain('does not accept this agent');
    expect(all).not.toContain(credential);
    expect(all).not.toContain(token);
  });
});
