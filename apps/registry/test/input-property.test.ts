// A property over EVERY procedure of the router (enumerated from `appRouter`, so a new procedure
// is covered without touching this file), over real HTTP against a running registry on PGlite and
// on PostgreSQL: inputs shaped after the procedure's own zod schema but filled with hostile values
// (NUL, lone surrogates, huge strings, nesting up to 100,000 levels, wrong types, extra keys,
// numbers such as 1e308, -0 and 1e400 — Infinity once parsed) and sent with each kind of
// credential. No answer may be a 5xx, no request may log an internal error, and /healthz answers
// after each procedure. `PROBEYARD_PROPERTY_RUNS` sets the runs per procedure (default 5).
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAdminCredential } from '../src/auth/admin-credential.js';
import { createToken } from '../src/data/tokens.js';
import { appRouter } from '../src/router.js';
import { type RunningRegistry, startRegistry } from '../src/server/registry.js';
import { backends, createPostgresDatabase, pgliteTemplate, skipReason } from './harness.js';
import { insertVersion } from './support/fleet.js';

const runsPerProcedure = Number(process.env.PROBEYARD_PROPERTY_RUNS ?? 5);

// ---- hostile JSON: values that JSON.stringify cannot write are raw tokens spliced into the text.

const raws: string[] = [];
/** A value that becomes `text` verbatim in the request body (a marker string until then). */
function raw(text: string): string {
  raws.push(text);
  return `\u0001RAW:${raws.length - 1}`;
}
function toJson(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(/"\\u0001RAW:(\d+)"/g, (_, i: string) => raws[Number(i)] ?? 'null');
}

const deepArray = (n: number) => raw(`${'['.repeat(n)}0${']'.repeat(n)}`);
const deepObject = (n: number) => raw(`${'{"a":'.repeat(n)}1${'}'.repeat(n)}`);
const hostileDeep = fc.constantFrom(deepArray(33), deepArray(41), deepArray(1_000), deepArray(100_000), deepObject(41), deepObject(100_000));
const hostileNumber = fc.oneof(
  fc.constantFrom(0, 1, -1, 0.5, 2 ** 31, 2 ** 53, 2 ** 64, 1e308, -1e308, Number.MIN_VALUE, raw('-0'), raw('1e400'), raw('-1e400'), raw('1e-400')),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const huge = [raw(JSON.stringify('x'.repeat(300_000))), raw(JSON.stringify(`${'é'.repeat(100_000)}\u0000`)), raw(JSON.stringify('A'.repeat(7 * 1024 * 1024)))];
const poison = ['\u0000', '\ud800', '\udfff', '\ud83d', 'a\u0000b', '\u0000'.repeat(64), '\u001b[2J', '\u202e', '../../etc/passwd', "'; DROP TABLE \"Tenant\"; --", '%00', '\\u0000'];
/** Strings: the fixture's real names and ids (to get past lookups), random text, poisoned text, huge text. */
function hostileString(pool: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...pool), weight: 3 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
    { arbitrary: fc.tuple(fc.constantFrom(...pool), fc.constantFrom(...poison), fc.nat(8)).map(([s, p, at]) => s.slice(0, at) + p + s.slice(at)), weight: 3 },
    { arbitrary: fc.constantFrom(...huge), weight: 1 },
  );
}
function anything(pool: string[], depth: number): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(hostileString(pool), hostileNumber, fc.boolean(), fc.constant(null), hostileDeep);
  if (depth <= 0) return leaf;
  return fc.oneof(
    { arbitrary: leaf, weight: 4 },
    { arbitrary: fc.array(anything(pool, depth - 1), { maxLength: 4 }), weight: 1 },
    { arbitrary: fc.dictionary(hostileString(pool), anything(pool, depth - 1), { maxKeys: 4 }), weight: 1 },
  );
}

// ---- arbitraries shaped after a zod schema: its keys, its element types, its enums — and,
// everywhere, the chance of something else instead.

interface ZodDef {
  type: string;
  shape?: Record<string, { _zod: { def: ZodDef } }>;
  element?: { _zod: { def: ZodDef } };
  innerType?: { _zod: { def: ZodDef } };
  in?: { _zod: { def: ZodDef } };
  valueType?: { _zod: { def: ZodDef } };
  options?: { _zod: { def: ZodDef } }[];
  entries?: Record<string, string>;
  values?: unknown[];
}
const defOf = (schema: unknown): ZodDef | undefined => (schema as { _zod?: { def: ZodDef } } | undefined)?._zod?.def;

function shaped(def: ZodDef | undefined, pool: string[], depth: number): fc.Arbitrary<unknown> {
  const other = anything(pool, 2);
  if (!def || depth > 8) return other;
  const mix = (a: fc.Arbitrary<unknown>) => fc.oneof({ arbitrary: a, weight: 5 }, { arbitrary: other, weight: 1 });
  switch (def.type) {
    case 'object': {
      const shape = def.shape ?? {};
      const fields = Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, shaped(v._zod.def, pool, depth + 1)]));
      const known = fc.record(fields, { requiredKeys: [] });
      return mix(
        fc.tuple(known, fc.option(fc.dictionary(hostileString(['extra', 'constructor', '__proto__', 'toString']), anything(pool, 1), { maxKeys: 2 }), { freq: 4 })).map(([k, extra]) => ({ ...(extra ?? {}), ...k })),
      );
    }
    case 'array':
      return mix(fc.array(shaped(def.element?._zod.def, pool, depth + 1), { maxLength: 3 }));
    case 'record':
      return mix(fc.dictionary(hostileString(pool), shaped(def.valueType?._zod.def, pool, depth + 1), { maxKeys: 3 }));
    case 'optional':
    case 'default':
    case 'nullable':
    case 'prefault':
    case 'readonly':
    case 'catch':
      return fc.oneof(fc.constant(undefined), shaped(def.innerType?._zod.def, pool, depth));
    case 'pipe':
      return shaped(def.in?._zod.def, pool, depth);
    case 'union':
      return fc.oneof(...(def.options ?? []).map((o) => shaped(o._zod.def, pool, depth)), other);
    case 'enum':
      return mix(fc.constantFrom(...Object.values(def.entries ?? { x: 'x' })));
    case 'literal':
      return mix(fc.constantFrom(...((def.values ?? [null]) as (string | number | boolean | null)[])));
    case 'string':
      return hostileString(pool);
    case 'number':
    case 'int':
      return fc.oneof(hostileNumber, fc.nat(600), hostileString(pool));
    case 'boolean':
      return fc.oneof(fc.boolean(), other);
    default:
      // z.json(), z.unknown(), …
      return anything(pool, 3);
  }
}

interface ProcedureDef {
  type: 'query' | 'mutation' | 'subscription';
  inputs: unknown[];
}
const procedures = Object.entries((appRouter as unknown as { _def: { procedures: Record<string, { _def: ProcedureDef }> } })._def.procedures)
  .map(([path, p]) => ({ path, type: p._def.type, input: p._def.inputs[0] }))
  .sort((a, b) => a.path.localeCompare(b.path));

describe.each(backends)('every procedure under hostile input, over HTTP on %s', (backend) => {
  const skip = skipReason(backend);
  let dataDir: string;
  let registry: RunningRegistry;
  let drop: (() => Promise<void>) | undefined;
  const errors: Record<string, unknown>[] = [];
  const credentials: Record<string, string | undefined> = { none: undefined };
  const pool: string[] = ['runqlat', '1.0.0', 'env=prod', 'prod', 'env', 'linux-6.18', 'owner@prop.example', 'viewer', 'publisher', 'owner', 'running', 'events', 'x'];

  async function call(path: string, type: ProcedureDef['type'], body: string, credential: string | undefined): Promise<number> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (credential) headers.authorization = `Bearer ${credential}`;
    const url = `${registry.url}/trpc/${path}`;
    if (type === 'mutation') {
      const r = await fetch(url, { method: 'POST', headers, body });
      await r.arrayBuffer();
      return r.status;
    }
    // Queries and subscriptions are GETs; a subscription that is accepted streams, so only its status is read.
    const ac = new AbortController();
    const target = `${url}?input=${encodeURIComponent(body)}`;
    let r: Response;
    try {
      r = await fetch(target, { headers, signal: ac.signal });
    } catch (err) {
      // A request line over Node's header limit (16 KiB) is answered 431 and the socket closed at
      // once: a client still sending it may see the reset instead of the 431. Either way refused
      // before any procedure ran.
      if (target.length > 16 * 1024) return 431;
      throw err;
    }
    if (type === 'subscription') ac.abort();
    else await r.arrayBuffer();
    return r.status;
  }

  beforeAll(async () => {
    if (skip) return;
    dataDir = mkdtempSync(join(tmpdir(), `probeyard-property-${backend}-`));
    let databaseUrl: string | undefined;
    if (backend === 'postgres') {
      const pgdb = await createPostgresDatabase();
      databaseUrl = pgdb.url;
      drop = pgdb.drop;
    } else {
      cpSync(await pgliteTemplate(), join(dataDir, 'pglite'), { recursive: true });
    }
    registry = await startRegistry({ dataDir, databaseUrl, port: 0, logger: (l) => (l.level === 'error' ? errors.push(l) : undefined) });
    // biome-ignore lint/suspicious/noExplicitAny: the fixture's answers, read by field name
    const post = async (path: string, input: unknown, credential?: string): Promise<any> => {
      const r = await fetch(`${registry.url}/trpc/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(credential ? { authorization: `Bearer ${credential}` } : {}) }, body: JSON.stringify(input) });
      const j = (await r.json()) as { result?: { data: Record<string, unknown> } };
      if (!j.result) throw new Error(`${path}: ${JSON.stringify(j)}`);
      return j.result.data;
    };
    const admin = readAdminCredential(dataDir) ?? '';
    const made = await post('tenant.create', { name: 'prop', ownerEmail: 'owner@prop.example' }, admin);
    const owner: string = made.ownerToken;
    const tenantId: string = made.tenant.id;
    const version = await insertVersion(registry.db.prisma, tenantId, 'runqlat', '1.0.0');
    // a viewer: invited, and the invitation accepted by the person, who chooses a password
    const invited = await post('member.invite', { email: 'viewer@prop.example', role: 'viewer' }, owner);
    await post('auth.acceptInvitation', { secret: invited.secret, password: 'a viewer password of ours' });
    const viewerUser = await registry.db.prisma.user.findUniqueOrThrow({ where: { email: 'viewer@prop.example' }, select: { id: true } });
    const { secret: viewerToken } = await registry.db.prisma.$transaction((tx) =>
      createToken(tx, { tenantId, userId: viewerUser.id, kind: 'api', name: 'viewer', role: 'viewer', expiresAt: null }),
    );
    const enrolled = await post('agent.enroll', { enrollmentToken: (await post('agent.createEnrollmentToken', { labels: { env: 'prod' } }, owner)).enrollmentToken, hostname: 'node-1' });
    const spare = await post('agent.enroll', { enrollmentToken: (await post('agent.createEnrollmentToken', { labels: { env: 'dev' } }, owner)).enrollmentToken, hostname: 'node-2' });
    const { deployment } = await post('deployment.create', { name: 'runqlat', version: '1.0.0', selector: 'env=prod' }, owner);
    const target = await registry.db.prisma.deploymentTarget.findFirstOrThrow({ select: { id: true } });
    Object.assign(credentials, { owner, viewer: viewerToken, agent: enrolled.credential, admin });
    // Ids of this tenant (the spare agent's, not the agent whose credential the runs use: a run may revoke it).
    pool.push(deployment.id, target.id, version.id, spare.agent.id, tenantId);
  });
  afterAll(async () => {
    await registry?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await drop?.();
  });

  it.skipIf(skip)(`enumerates the router (${procedures.length} procedures)`, () => {
    expect(procedures.length).toBeGreaterThanOrEqual(50);
    expect(procedures.map((p) => p.path)).toEqual(expect.arrayContaining(['agent.uploadOutputs', 'program.publish', 'output.watch', 'health']));
  });

  it.skipIf(skip).each(procedures)('$path ($type): no 5xx for hostile input with any credential', async ({ path, type, input }) => {
    const seen: Record<number, number> = {};
    const errorsBefore = errors.length;
    const credential = fc.constantFrom('owner', 'owner', 'owner', 'agent', 'agent', 'admin', 'viewer', 'none');
    await fc.assert(
      fc.asyncProperty(shaped(defOf(input), pool, 0), credential, async (value, who) => {
        const body = toJson(value);
        const status = await call(path, type, body, credentials[who]);
        seen[status] = (seen[status] ?? 0) + 1;
        return status < 500;
      }),
      { numRuns: runsPerProcedure, endOnFailure: true },
    );
    expect(errors.slice(errorsBefore)).toEqual([]);
    expect((await fetch(`${registry.url}/healthz`)).status).toBe(200);
  });

  it.skipIf(skip)('says on the wire which field cannot be stored, and why', async () => {
    const r = await fetch(`${registry.url}/trpc/program.publish`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${credentials.owner}` },
      body: JSON.stringify({ name: 'p', version: '1.0.0', artifact: 'AA==', description: 'padded\u0000\u0000' }),
    });
    expect(r.status).toBe(400);
    const body = (await r.json()) as { error: { message: string; data: { issues: unknown } } };
    expect(body.error.message).toBe('invalid input: description: contains a NUL character (U+0000) at character 6, which cannot be stored');
    expect(body.error.data.issues).toEqual([{ path: 'description', message: 'contains a NUL character (U+0000) at character 6, which cannot be stored' }]);
    // a value that fits none of a union's forms says what each form missed, not zod's "Invalid input"
    const union = await fetch(`${registry.url}/trpc/deployment.create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${credentials.owner}` },
      body: JSON.stringify({ name: 'p', version: '1.0.0', selector: 'a=b', options: { pid: [1] } }),
    });
    expect(union.status).toBe(400);
    expect(((await union.json()) as { error: { message: string } }).error.message).toBe(
      'invalid input: options.pid: fits none of its 3 forms: (1) expected string, received array (2) expected number, received array (3) expected boolean, received array',
    );
    const deep = await fetch(`${registry.url}/trpc/token.create`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${credentials.owner}` }, body: toJson({ name: deepArray(100_000) }) });
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as { error: { message: string } }).error.message).toBe('invalid input: name.0.0.0.0.0.…: nested more than 40 levels deep (the limit is 40)');
  });

  it.skipIf(skip)('fixed hostile bodies reach every procedure: no 5xx', async () => {
    // (Deep objects, huge strings and the rest come from the property above.)
    const bodies = [deepArray(100_000), JSON.stringify({ a: '\u0000' }), JSON.stringify('\ud800'), '1e400', '{"__proto__":{"x":1}}'];
    const bad: string[] = [];
    const errorsBefore = errors.length;
    for (const { path, type } of procedures) {
      // The credential the procedure takes (the one it does not answer 401), so the bodies reach its input.
      let who: 'owner' | 'agent' | 'admin' = 'owner';
      for (const w of ['owner', 'agent', 'admin'] as const) {
        if ((await call(path, type, '{}', credentials[w])) !== 401) {
          who = w;
          break;
        }
      }
      for (const b of bodies) {
        const status = await call(path, type, toJson(b.startsWith('\u0001') ? b : raw(b)), credentials[who]);
        if (status >= 500) bad.push(`${path} ${who} ${b.slice(0, 40)} → ${status}`);
      }
    }
    expect(bad).toEqual([]);
    expect(errors.slice(errorsBefore)).toEqual([]);
    expect((await fetch(`${registry.url}/healthz`)).status).toBe(200);
  });
});
