// The rules every input follows (issue 13, findings 6 and 9), on PGlite and PostgreSQL: a NUL or a
// lone UTF-16 surrogate in any text field is a 400 that names the field (PostgreSQL refuses both:
// they were 500s), nesting is bounded (no "Maximum call stack size exceeded", no payload 1,000
// levels deep served back), label keys follow one grammar everywhere, and a format file holding a
// NUL is an upload error rather than a failed insert.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRPCError } from '@trpc/server';
import { beforeAll, describe, expect, it } from 'vitest';
import { maxInputDepth, maxPayloadDepth } from '../src/schemas.js';
import { backends, type Caller, useHarness } from './harness.js';
import { fleetCounts, insertVersion } from './support/fleet.js';

const fixtures = fileURLToPath(new URL('../../../packages/formats/test/fixtures/formats/', import.meta.url));
const asm = Buffer.from('mov r0, 0\nexit\n').toString('base64');

/** `[[[…0…]]]` `depth` levels deep, built without recursion. */
function nested(depth: number): unknown {
  let v: unknown = 0;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

/** The refusal of `p`: its tRPC code and its words as the API answers them (`path: message; …`). */
async function refusal(p: Promise<unknown>): Promise<{ code: string; words: string }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TRPCError);
  const e = err as TRPCError;
  const issues = (e.cause as { issues?: { path: PropertyKey[]; message: string }[] } | undefined)?.issues;
  return { code: e.code, words: issues ? issues.map((i) => (i.path.length ? `${i.path.map(String).join('.')}: ${i.message}` : i.message)).join('; ') : e.message };
}

const bad = [
  ['a NUL', 'ab\u0000cd', 'contains a NUL character (U+0000) at character 2, which cannot be stored'],
  ['a lone high surrogate', 'ab\ud800cd', 'contains a lone UTF-16 surrogate (U+D800) at character 2, which is not Unicode text and cannot be stored'],
  ['a lone low surrogate', 'ab\udc00', 'contains a lone UTF-16 surrogate (U+DC00) at character 2, which is not Unicode text and cannot be stored'],
] as const;

describe.each(backends)('input rules on %s', (backend) => {
  const { skip, h } = useHarness(backend);
  let owner: Caller;
  let agent: Caller;
  let anon: Caller;
  let agentId: string;
  let targetId: string;
  let deploymentId: string;
  let enrollmentToken: string;
  beforeAll(async () => {
    if (skip) return;
    const t = await h.tenant('input');
    owner = t.owner;
    anon = await h.caller();
    await insertVersion(h.db.prisma, t.id, 'runqlat', '1.0.0');
    const first = await owner.agent.createEnrollmentToken({ labels: { env: 'prod' } });
    const enrolled = await anon.agent.enroll({ enrollmentToken: first.enrollmentToken, hostname: 'node-1' });
    agentId = enrolled.agent.id;
    agent = await h.caller(enrolled.credential);
    deploymentId = (await owner.deployment.create({ name: 'runqlat', version: '1.0.0', selector: 'env=prod' })).deployment.id;
    const poll = await agent.agent.poll({});
    if (poll.notModified) throw new Error('expected assignments');
    targetId = poll.assignments[0]!.targetId;
    enrollmentToken = (await owner.agent.createEnrollmentToken({})).enrollmentToken;
  });
  // Every text field the issue lists, and their neighbours: [procedure, field path, call with `s` there].
  const fields: [string, string, (s: string) => Promise<unknown>][] = [
    ['agent.uploadOutputs', 'batches.0.payload.events.0.text', (s) => agent.agent.uploadOutputs({ batches: [{ targetId, sequence: 1, kind: 'events', payload: { v: 1, runId: 'r', events: [{ timeNs: '1', cpu: 0, source: 'printk', text: s }], dropped: 0 } }] })],
    ['agent.uploadOutputs', 'batches.0.payload.maps.0.entries.0.key', (s) => agent.agent.uploadOutputs({ batches: [{ targetId, sequence: 2, kind: 'map_snapshot', payload: { maps: [{ entries: [{ key: s, value: 1 }] }] } }] })],
    ['agent.reportStatus', 'targets.0.message', (s) => agent.agent.reportStatus({ targets: [{ targetId, status: 'failed', message: s }] })],
    ['agent.reportStatus', 'targets.0.detail.moves.0', (s) => agent.agent.reportStatus({ targets: [{ targetId, status: 'running', detail: { code: 'relocated', moves: [s] } }] })],
    ['agent.reportStatus', 'targets.0.detail.fault.message', (s) => agent.agent.reportStatus({ targets: [{ targetId, status: 'failed', detail: { code: 'load-fault', fault: { message: s } } }] })],
    ['agent.reportProfile', 'release', (s) => agent.agent.reportProfile({ release: s, machine: 'x86_64', tarball: '' })],
    ['agent.reportProfile', 'machine', (s) => agent.agent.reportProfile({ release: '6.1', machine: s, tarball: '' })],
    ['agent.enroll', 'hostname', (s) => anon.agent.enroll({ enrollmentToken, hostname: s })],
    ['agent.enroll', 'agentVersion', (s) => anon.agent.enroll({ enrollmentToken, hostname: 'n', agentVersion: s })],
    ['agent.enroll', 'labels.env', (s) => anon.agent.enroll({ enrollmentToken, hostname: 'n', labels: { env: s } })],
    ['agent.setLabels', 'labels.env', (s) => owner.agent.setLabels({ agentId, labels: { env: s } })],
    ['agent.createEnrollmentToken', 'labels.env', (s) => owner.agent.createEnrollmentToken({ labels: { env: s } })],
    ['kernel.upload', 'release', (s) => owner.kernel.upload({ name: 'k', release: s, tarball: '' })],
    ['kernel.upload', 'machine', (s) => owner.kernel.upload({ name: 'k', machine: s, tarball: '' })],
    ['program.publish', 'description', (s) => owner.program.publish({ name: 'p', version: '1.0.0', artifact: asm, description: s })],
    ['program.publish', 'tags.0', (s) => owner.program.publish({ name: 'p', version: '1.0.0', artifact: asm, tags: [s] })],
    ['deployment.create', 'version', (s) => owner.deployment.create({ name: 'runqlat', version: s, selector: 'env=prod' })],
    ['deployment.create', 'selector', (s) => owner.deployment.create({ name: 'runqlat', version: '1.0.0', selector: `env=${s}` })],
    ['token.create', 'name', (s) => owner.token.create({ name: s })],
    ['version.yank', 'reason', (s) => owner.version.yank({ name: 'runqlat', version: '1.0.0', reason: s })],
    ['auth.login', 'password', (s) => anon.auth.login({ email: 'owner@example.com', password: s })],
    ['auth.setPassword', 'newPassword', (s) => owner.auth.setPassword({ newPassword: `long enough ${s}` })],
    ['member.invite', 'email', (s) => owner.member.invite({ email: `x${s}@example.com`, role: 'viewer' })],
    ['auth.acceptInvitation', 'password', (s) => anon.auth.acceptInvitation({ secret: 'pyv_x', password: `long enough ${s}` })],
    ['program.list', 'q', (s) => owner.program.list({ q: s })],
    ['agent.list', 'q', (s) => owner.agent.list({ q: s })],
    ['output.events', 'filter', (s) => owner.output.events({ deploymentId, filter: s })],
  ];

  describe.each(bad)('%s', (_, s, words) => {
    it.skipIf(skip).each(fields)('%s: %s is a 400 naming the field, and nothing is written', async (_proc, path, call) => {
      const before = [await h.counts(), await fleetCounts(h.db.prisma)];
      const err = await refusal(call(s));
      // The position is the field's own (some calls put the text inside a longer value).
      expect(err.code).toBe('BAD_REQUEST');
      expect(err.words.replace(/at character \d+/, 'at character 2')).toBe(`${path}: ${words}`);
      expect([await h.counts(), await fleetCounts(h.db.prisma)]).toEqual(before);
    });
  });

  it.skipIf(skip)('stores real Unicode text as sent (astral characters, tabs, newlines)', async () => {
    const text = 'crab 🦀, naïve\tcafé\nline 2';
    await agent.agent.reportStatus({ targets: [{ targetId, status: 'running', message: text }] });
    expect((await owner.deployment.get({ id: deploymentId })).targets[0]?.reason).toBe(text);
    const payload = { v: 1, runId: 'r', events: [{ timeNs: '1', cpu: 0, source: 'printk', text }], dropped: 0 };
    await agent.agent.uploadOutputs({ batches: [{ targetId, sequence: 10, kind: 'events', payload }] });
    const { batches } = await owner.deployment.outputs({ id: deploymentId });
    expect(batches.find((b) => b.sequence === 10)?.payload).toEqual(payload);
  });

  it.skipIf(skip)('refuses a key holding a NUL, naming the object it is in', async () => {
    const err = await refusal(agent.agent.uploadOutputs({ batches: [{ targetId, sequence: 11, kind: 'counters', payload: { 'a\u0000b': 1 } }] }));
    expect(err).toEqual({ code: 'BAD_REQUEST', words: 'batches.0.payload: a key contains a NUL character (U+0000) at character 1, which cannot be stored' });
  });

  describe('nesting', () => {
    it.skipIf(skip)(`takes an output payload ${maxPayloadDepth} levels deep, refuses ${maxPayloadDepth + 1} in words, and serves back nothing deeper`, async () => {
      const ok = await agent.agent.uploadOutputs({ batches: [{ targetId, sequence: 20, kind: 'events', payload: nested(maxPayloadDepth) as never }] });
      expect(ok.accepted).toBe(1);
      const before = await fleetCounts(h.db.prisma);
      const err = await refusal(agent.agent.uploadOutputs({ batches: [{ targetId, sequence: 21, kind: 'events', payload: nested(maxPayloadDepth + 1) as never }] }));
      expect(err.code).toBe('BAD_REQUEST');
      expect(err.words).toContain(`batches.0.payload: nested more than ${maxPayloadDepth} levels deep (the limit of an output payload is ${maxPayloadDepth})`);
      expect(await fleetCounts(h.db.prisma)).toEqual(before);
      const { batches } = await owner.deployment.outputs({ id: deploymentId });
      let deepest = 0;
      for (const b of batches) {
        let d = 0;
        for (let v: unknown = b.payload; v !== null && typeof v === 'object'; v = Array.isArray(v) ? v[0] : Object.values(v)[0]) d++;
        deepest = Math.max(deepest, d);
      }
      expect(deepest).toBe(maxPayloadDepth);
    });

    it.skipIf(skip).each([41, 1_000, 100_000])('refuses an input %i levels deep anywhere in words, not with a stack overflow', async (depth) => {
      for (const call of [
        () => agent.agent.uploadOutputs({ batches: [{ targetId, sequence: 30, kind: 'events', payload: nested(depth) as never }] }),
        () => owner.token.create({ name: nested(depth) as never }),
        () => owner.token.create({ name: 'x', extra: nested(depth) } as never),
        () => owner.whoami(nested(depth) as never),
      ]) {
        const err = await refusal(call());
        expect(err.code).toBe('BAD_REQUEST');
        expect(err.words).toContain(`nested more than ${maxInputDepth} levels deep (the limit is ${maxInputDepth})`);
        expect(err.words).not.toContain('call stack');
      }
    });
  });

  describe('labels', () => {
    it.skipIf(skip).each([
      ['../x', 'label key "../x": the prefix before "/" is not a DNS subdomain'],
      ['/x', 'label key "/x": the prefix before "/" is not a DNS subdomain'],
      ['a/../b', 'label key "a/../b" is not'],
      ['a//b', 'label key "a//b" is not'],
      ['-x', 'label key "-x" is not'],
      ['x.', 'label key "x." is not'],
      ['Example.com/x', 'label key "Example.com/x": the prefix before "/" is not a DNS subdomain'],
      ['a b', 'label key "a b" is not'],
      ['x'.repeat(64), 'is not an optional DNS prefix'],
    ])('refuses the key %j in labels, enrolment labels and selectors, in words', async (key, words) => {
      const before = [await h.counts(), await fleetCounts(h.db.prisma)];
      for (const call of [
        () => owner.agent.setLabels({ agentId, labels: { [key]: 'v' } }),
        () => owner.agent.createEnrollmentToken({ labels: { [key]: 'v' } }),
        () => anon.agent.enroll({ enrollmentToken, hostname: 'n', labels: { [key]: 'v' } }),
        () => owner.deployment.create({ name: 'runqlat', version: '1.0.0', selector: `${key}=v` }),
        () => owner.deployment.preview({ name: 'runqlat', version: '1.0.0', selector: `${key}=v` }),
        () => owner.agent.list({ selector: `${key}=v` }),
      ]) {
        const err = await refusal(call());
        expect(err.code).toBe('BAD_REQUEST');
        expect(err.words).toContain(words);
      }
      expect([await h.counts(), await fleetCounts(h.db.prisma)]).toEqual(before);
    });

    it.skipIf(skip).each([
      ['env', 'a,b', 'the value contains a control character, "," or "="'],
      ['env', 'a=b', 'the value contains a control character, "," or "="'],
      ['env', ' a', 'the value begins or ends with white space'],
      ['env', 'v'.repeat(64), 'the value has 64 characters, the limit is 63'],
    ])('refuses the label %s=%j in words', async (key, value, words) => {
      const err = await refusal(owner.agent.setLabels({ agentId, labels: { [key]: value } }));
      expect(err.code).toBe('BAD_REQUEST');
      expect(err.words).toContain(`labels.${key}: ${words}`);
    });

    it.skipIf(skip)("takes the labels agents and `probeyard up` use, and selectors match them", async () => {
      const labels = {
        node: 'local',
        env: 'prod',
        os: 'linux',
        arch: 'x86_64',
        hostname: 'ip-10-0-0-1.ec2.internal',
        'kernel.release': '6.1.0-rc1+',
        'probeyard.dev/zone': 'eu-west_1',
        ['x'.repeat(63)]: '',
      };
      const { agent: a } = await owner.agent.setLabels({ agentId, labels });
      expect(a.labels).toEqual(labels);
      const { agents } = await owner.agent.list({ selector: 'node=local,kernel.release=6.1.0-rc1+,probeyard.dev/zone=eu-west_1' });
      expect(agents.map((x) => x.id)).toEqual([agentId]);
      await owner.agent.setLabels({ agentId, labels: { env: 'prod' } });
    });
  });

  it.skipIf(skip)('lists a format file holding a NUL among the upload errors and keeps the rest of the tree', async () => {
    const tree = mkdtempSync(join(tmpdir(), 'probeyard-nul-tree-'));
    try {
      cpSync(join(fixtures, 'linux-6.18'), tree, { recursive: true });
      mkdirSync(join(tree, 'evil', 'nul'), { recursive: true });
      writeFileSync(join(tree, 'evil', 'nul', 'format'), 'name: nul\u0000x\nID: 9999\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\nprint fmt: ""\n');
      const tarball = execFileSync('tar', ['-C', tree, '-czf', '-', '.']).toString('base64');
      const up = await owner.kernel.upload({ name: 'with-nul', release: '6.18.0', tarball });
      expect(up.errors).toContainEqual({ path: expect.stringContaining('evil/nul/format'), message: 'contains a NUL character (U+0000), which cannot be stored' });
      expect(up.profile.formats).toBeGreaterThan(5);
      const got = await owner.kernel.get({ name: 'with-nul' });
      expect(got.events.map((e) => e.system)).not.toContain('evil');
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });
});
