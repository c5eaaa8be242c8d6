import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentApi } from '../client.js';
import { isAgentError } from '../errors.js';
import { silentLogger } from '../log.js';
import { Spool } from './spool.js';
import { Uploader } from './uploader.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

type Batch = { targetId: string; sequence: number };
/** A fetch that answers `agent.uploadOutputs` as `answer` decides (tRPC's JSON shapes). */
function fakeRegistry(answer: (batches: Batch[]) => Response | Promise<Response>) {
  const requests: Batch[][] = [];
  const fetchImpl: typeof fetch = async (_url, init) => {
    const body = JSON.parse(String(init?.body)) as { batches: Batch[] };
    requests.push(body.batches);
    return answer(body.batches);
  };
  return { requests, fetch: fetchImpl };
}
const ok = (accepted: number) => Response.json({ result: { data: { accepted, duplicates: 0 } } });
const trpcError = (code: string, httpStatus: number, message: string) =>
  Response.json({ error: { message, code: -32600, data: { code, httpStatus } } }, { status: httpStatus });

function spoolWith(n: number): Spool {
  const d = mkdtempSync(join(tmpdir(), 'probeyard-upload-'));
  dirs.push(d);
  const s = Spool.open(d);
  s.append(Array.from({ length: n }, (_, i) => ({ targetId: 't1', kind: 'counters' as const, payload: { i }, eventsSeen: i, eventsLost: 0 })));
  return s;
}

describe('Uploader', () => {
  it('uploads oldest first in requests of at most 100 batches and empties the spool', async () => {
    const spool = spoolWith(250);
    const reg = fakeRegistry((b) => ok(b.length));
    const sent = await new Uploader(spool, new AgentApi('http://registry.test', 'pya_x', { fetch: reg.fetch }), { log: silentLogger }).drain();
    expect(sent).toBe(250);
    expect(reg.requests.map((r) => r.length)).toEqual([100, 100, 50]);
    expect(reg.requests.flat().map((b) => b.sequence)).toEqual(Array.from({ length: 250 }, (_, i) => i));
    expect(spool.batches).toBe(0);
  });

  it.each([
    ['a 500', () => trpcError('INTERNAL_SERVER_ERROR', 500, 'internal error'), 'INTERNAL_SERVER_ERROR'],
    ['garbage', () => new Response('<html>bad gateway</html>', { status: 200, headers: { 'content-type': 'text/html' } }), 'GARBAGE'],
    ['an error page', () => new Response('<html>bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } }), 'HTTP_502'],
    ['JSON of another shape', () => Response.json({ result: { data: { hello: 'world' } } }), 'GARBAGE'],
    ['no answer', () => Promise.reject(new TypeError('fetch failed')), 'NETWORK'],
    ['too many requests', () => trpcError('TOO_MANY_REQUESTS', 429, 'slow down'), 'TOO_MANY_REQUESTS'],
  ])('keeps everything after %s and says to try again', async (_what, answer, code) => {
    const spool = spoolWith(3);
    const reg = fakeRegistry(answer);
    const err = await new Uploader(spool, new AgentApi('http://registry.test', 'pya_x', { fetch: reg.fetch }), { log: silentLogger }).drain().catch((e) => e);
    expect(isAgentError(err) && err.retryable).toBe(true);
    expect(err.context.registryCode).toBe(code);
    expect(spool.batches).toBe(3);
    expect(spool.rejectedTotal).toBe(0);
  });

  it('finds the batch the registry refuses for good, drops and counts only that one', async () => {
    const spool = spoolWith(3);
    const reg = fakeRegistry((b) => (b.some((x) => x.sequence === 1) ? trpcError('CONFLICT', 409, 'batch 1 of target t1 was already received with different content') : ok(b.length)));
    const sent = await new Uploader(spool, new AgentApi('http://registry.test', 'pya_x', { fetch: reg.fetch }), { log: silentLogger }).drain();
    expect(sent).toBe(2);
    expect(reg.requests.map((r) => r.map((b) => b.sequence))).toEqual([[0, 1, 2], [0], [1], [2]]);
    expect(spool.batches).toBe(0);
    expect(spool.rejectedTotal).toBe(1);
    expect(spool.lostBatchesOf('t1')).toBe(1);
  });

  it('stops at a refused credential without dropping anything', async () => {
    const spool = spoolWith(2);
    const reg = fakeRegistry(() => trpcError('UNAUTHORIZED', 401, 'unauthorized: credential revoked'));
    const err = await new Uploader(spool, new AgentApi('http://registry.test', 'pya_x', { fetch: reg.fetch }), { log: silentLogger }).drain().catch((e) => e);
    expect(isAgentError(err) && err.code).toBe('unauthorized');
    expect(spool.batches).toBe(2);
  });
});
