// A batch the registry can never store (a NUL in its payload, as an agent before C strings could
// spool from a kernel char array) against a real registry: the registry refuses it with a 400 in
// words, and the uploader drops and counts that batch alone — the others arrive, nothing is
// retried forever.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { AgentApi } from '../src/client.js';
import { Spool } from '../src/spool/spool.js';
import { Uploader } from '../src/spool/uploader.js';
import { startTestRegistry, type TestRegistry } from './support/registry.js';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 600_000 });

const program = fileURLToPath(new URL('../../../examples/c/switchcomm.o', import.meta.url));

let reg: TestRegistry;
let tmp: string;
beforeAll(async () => {
  reg = await startTestRegistry();
  tmp = mkdtempSync(join(tmpdir(), 'probeyard-refused-'));
});
afterAll(async () => {
  await reg?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

it('drops and counts only the batch the registry refuses for good, and never sends it again', async () => {
  expect((await reg.cli(['publish', program, '--name', 'switchcomm', '--version', '1.0.0'])).code).toBe(0);
  const owner = reg.api();
  const { enrollmentToken } = await owner.agent.createEnrollmentToken.mutate({ labels: { env: 'refused' } });
  const { credential } = await new AgentApi(reg.url, undefined).enroll({ enrollmentToken, hostname: 'node-refused' });
  const { deployment } = await owner.deployment.create.mutate({ name: 'switchcomm', version: '1.0.0', selector: 'env=refused' });
  const api = new AgentApi(reg.url, credential);
  const poll = await api.poll(undefined);
  if (poll.notModified) throw new Error('expected assignments');
  const targetId = poll.assignments[0]!.targetId;

  const spool = Spool.open(join(tmp, 'spool'));
  const events = (text: string) => ({ v: 1, runId: 'r', events: [{ timeNs: '1', cpu: 0, source: 'printk', text }], dropped: 0 });
  spool.append([
    { targetId, kind: 'events', payload: events('before'), eventsSeen: 1, eventsLost: 0 },
    { targetId, kind: 'events', payload: events('comm\u0000\u0000\u0000'), eventsSeen: 2, eventsLost: 0 },
    { targetId, kind: 'events', payload: events('after'), eventsSeen: 3, eventsLost: 0 },
  ]);
  const logs: string[] = [];
  const errors: string[] = [];
  const uploader = new Uploader(spool, api, { log: (_level, msg) => logs.push(msg), onError: (e) => errors.push(`${e.context.registryCode}: ${e.message}`) });
  expect(await uploader.drain()).toBe(2);
  expect(spool.batches).toBe(0);
  expect(spool.rejectedTotal).toBe(1);
  expect(errors.some((e) => e.startsWith('BAD_REQUEST') && e.includes('contains a NUL character (U+0000)'))).toBe(true);
  expect(logs.join('\n')).toMatch(/refused batch 1 of target .* for good, dropped/);

  const stored = await reg.outputs(deployment.id, targetId);
  expect(stored.map((b) => [b.sequence, (b.payload as ReturnType<typeof events>).events[0]?.text])).toEqual([
    [0, 'before'],
    [2, 'after'],
  ]);
  // Nothing is left to send: a second drain makes no request.
  const before = errors.length;
  expect(await uploader.drain()).toBe(0);
  expect(errors.length).toBe(before);
});
