// A deployment's `.rodata` options (issue 21, item 2), on PGlite and on PostgreSQL: checked against
// the version's spec when the deployment is made (unknown variables and values that do not fit are
// a 400 in words, and nothing is written), stored, shown by get/list, carried by the agent's poll,
// and never another tenant's business.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readProgramSpec, specToJson } from '@probeyard/compat';
import { beforeAll, describe, expect, it } from 'vitest';
import { drainCompatJobs } from '../src/jobs/compat-runner.js';
import { backends, type Caller, useHarness } from './harness.js';
import { fleetCounts, insertVersion } from './support/fleet.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
/** libbpf-tools' syscount in the style of its own sources: options `filter_cg`, `filter_pid`, `count_by_process`, `measure_latency`, `filter_failed`, `filter_errno`. */
const syscountSpec = async () => specToJson(await readProgramSpec(readFileSync(`${root}examples/libbpf/syscount.bpf.o`)));

describe.each(backends)('deployment options on %s', (backend) => {
  const { skip, h } = useHarness(backend);
  let spec: unknown;
  beforeAll(async () => {
    spec = await syscountSpec();
  });

  async function enrol(owner: Caller, hostname: string, labels: Record<string, string>) {
    const { enrollmentToken } = await owner.agent.createEnrollmentToken({ labels });
    const r = await (await h.caller()).agent.enroll({ enrollmentToken, hostname });
    return { id: r.agent.id, caller: await h.caller(r.credential) };
  }

  it.skipIf(skip)('stores the options (as decimal text), shows them in get and list, audits them and gives them to the agent', async () => {
    const t = await h.tenant();
    await insertVersion(h.db.prisma, t.id, 'syscount', '1.0.0', { spec });
    const node = await enrol(t.owner, 'n1', { node: 'local' });
    const { deployment } = await t.owner.deployment.create({
      name: 'syscount',
      version: '1.0.0',
      selector: 'node=local',
      options: { filter_failed: 'true', filter_pid: 42, filter_errno: '-2', count_by_process: false, measure_latency: '0x1' },
    });
    const want = { filter_failed: 'true', filter_pid: '42', filter_errno: '-2', count_by_process: 'false', measure_latency: '1' };
    expect(deployment.options).toEqual(want);
    expect((await t.owner.deployment.get({ id: deployment.id })).deployment.options).toEqual(want);
    expect((await t.owner.deployment.list()).deployments.map((d) => d.options)).toEqual([want]);
    const poll = await node.caller.agent.poll();
    expect(poll.notModified === false && poll.assignments.map((a) => [a.deploymentId, a.options])).toEqual([[deployment.id, want]]);
    const audit = await h.db.prisma.auditEntry.findFirstOrThrow({ where: { tenantId: t.id, action: 'deployment.create', targetId: deployment.id } });
    expect((audit.detail as { options: unknown }).options).toEqual(want);

    // Without options: none, and the agent gets `{}`.
    const plain = await t.owner.deployment.create({ name: 'syscount', version: '1.0.0', selector: 'node=local' });
    expect(plain.deployment.options).toEqual({});
    const again = await node.caller.agent.poll();
    expect(again.notModified === false && again.assignments.find((a) => a.deploymentId === plain.deployment.id)?.options).toEqual({});
  });

  it.each([
    ['a name the object has no read-only variable of', { filter_pdi: '1' }, 'deployment create: syscount@1.0.0: option no read-only variable filter_pdi (the object\'s: '],
    ['a value too large for a 1-byte bool', { filter_failed: 256 }, 'deployment create: syscount@1.0.0: option filter_failed has 1 bytes, 256 does not fit'],
    ['a value too large for a 4-byte pid', { filter_pid: '0x100000000' }, 'filter_pid has 4 bytes, 4294967296 does not fit'],
    ['a negative value below a 4-byte int', { filter_errno: '-2147483649' }, 'filter_errno has 4 bytes, -2147483649 does not fit'],
    ['a value that is not an integer', { filter_pid: 'yes' }, "option filter_pid: 'yes' is not an integer (decimal, 0x hex) or true/false"],
    ['a fractional number', { filter_pid: 1.5 }, 'option filter_pid: 1.5 is not an integer that JSON carries exactly'],
    ['a name that is not a C identifier', { 'filter-pid': '1' }, "option 'filter-pid' is not a C variable name"],
    ['a NUL in a value', { filter_pid: '1\u0000' }, 'NUL'],
    ['an object as a value', { filter_pid: { a: 1 } }, ''],
    ['a value longer than 40 characters', { filter_pid: '1'.repeat(41) }, ''],
  ])('refuses %s with BAD_REQUEST in words and writes nothing', async (_, options, message) => {
    if (skip) return;
    const t = await h.tenant();
    await insertVersion(h.db.prisma, t.id, 'syscount', '1.0.0', { spec });
    await enrol(t.owner, 'n1', { node: 'local' });
    const before = await fleetCounts(h.db.prisma);
    await expect(t.owner.deployment.create({ name: 'syscount', version: '1.0.0', selector: 'node=local', options: options as never })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringContaining(message),
    });
    expect(await fleetCounts(h.db.prisma)).toEqual(before);
  });

  it.skipIf(skip)('refuses options for a version without read-only variables, naming none', async () => {
    const t = await h.tenant();
    await insertVersion(h.db.prisma, t.id, 'plain', '1.0.0', { spec: { ...(spec as object), globals: [] } });
    const before = await fleetCounts(h.db.prisma);
    await expect(t.owner.deployment.create({ name: 'plain', version: '1.0.0', selector: 'node=local', options: { filter_pid: '1' } })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: "deployment create: plain@1.0.0: option no read-only variable filter_pid (the object's: none)",
    });
    expect(await fleetCounts(h.db.prisma)).toEqual(before);
  });

  it.skipIf(skip)("never checks options against another tenant's version (NOT_FOUND, not its variable names), nor shows them", async () => {
    const a = await h.tenant('a');
    const b = await h.tenant('b');
    await insertVersion(h.db.prisma, a.id, 'syscount', '1.0.0', { spec });
    await enrol(a.owner, 'a-node', { node: 'local' });
    const bNode = await enrol(b.owner, 'b-node', { node: 'local' });
    const made = await a.owner.deployment.create({ name: 'syscount', version: '1.0.0', selector: 'node=local', options: { filter_pid: '7' } });
    const before = await fleetCounts(h.db.prisma);
    for (const options of [{ filter_pid: '7' }, { nope: '1' }] as Record<string, string>[]) {
      const err = await b.owner.deployment.create({ name: 'syscount', version: '1.0.0', selector: 'node=local', options }).catch((e: Error) => e);
      expect(err).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('program version not found: syscount@1.0.0') });
      expect((err as Error).message).not.toContain('filter_');
    }
    await expect(b.owner.deployment.get({ id: made.deployment.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await b.owner.deployment.list()).deployments).toEqual([]);
    const poll = await bNode.caller.agent.poll();
    expect(poll.notModified === false && poll.assignments).toEqual([]);
    expect(await fleetCounts(h.db.prisma)).toEqual(before);
  });
  it.skipIf(skip)('previews a deployment with its options: each kernel verdict computed with them, since a read an option guards is dead while it is off', async () => {
    const t = await h.tenant('preview-options');
    await t.owner.program.publish({ name: 'syscount', version: '1.0.0', artifact: readFileSync(`${root}examples/libbpf/syscount.bpf.o`).toString('base64') });
    // Two kernels: this machine kind's sys_exit (the object's build: compatible), and a synthetic one without `ret` (syscount reads `ret` only
    // under filter_failed or filter_errno).
    const tarball = (tree: string) => execFileSync('tar', ['-C', `${root}packages/compat/test/fixtures/formats/${tree}`, '-czf', '-', '.']).toString('base64');
    for (const [host, tree] of [
      ['with-ret', 'syscalls-6.18'],
      ['no-ret', 'syscalls-no-ret'],
    ] as const) {
      const node = await enrol(t.owner, host, { env: 'prod' });
      await node.caller.agent.reportProfile({ release: tree, machine: 'x86_64', tarball: tarball(tree) });
    }
    await drainCompatJobs(h.db.prisma);
    const before = await fleetCounts(h.db.prisma);
    const verdicts = async (options?: Record<string, string | boolean | number>) => {
      const p = await t.owner.deployment.preview({ name: 'syscount', version: '1.0.0', selector: 'env=prod', ...(options ? { options } : {}) });
      return { byHost: Object.fromEntries(p.agents.map((a) => [a.hostname, a.verdict])), counts: p.counts, options: p.options, note: p.optionsNote, reasons: p.agents.map((a) => a.reason ?? '').join(' ') };
    };
    // The defaults (the stored matrix): runs on both.
    expect(await verdicts()).toMatchObject({ byHost: { 'with-ret': 'compatible', 'no-ret': 'relocated' }, options: {}, note: null });
    // Failed calls only: the `ret` read is live, and the kernel without it refuses.
    const failed = await verdicts({ filter_failed: true });
    expect(failed).toMatchObject({ byHost: { 'with-ret': 'compatible', 'no-ret': 'incompatible' }, counts: { compatible: 1, incompatible: 1 }, options: { filter_failed: 'true' }, note: null });
    expect(failed.reasons).toContain('ret');
    expect(await verdicts({ filter_errno: 2, count_by_process: true })).toMatchObject({ byHost: { 'no-ret': 'incompatible' }, options: { filter_errno: '2', count_by_process: 'true' } });
    expect(await verdicts({ filter_failed: false, measure_latency: '1' })).toMatchObject({ byHost: { 'with-ret': 'compatible', 'no-ret': 'relocated' } });
    // Checked as create checks them, and nothing is written.
    await expect(t.owner.deployment.preview({ name: 'syscount', version: '1.0.0', selector: 'env=prod', options: { filter_pdi: '1' } })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringContaining('deployment preview: syscount@1.0.0: option no read-only variable filter_pdi'),
    });
    expect(await fleetCounts(h.db.prisma)).toEqual(before);
    // Another tenant's preview of the same name is NOT_FOUND, options or not, and never names the variables.
    const other = await h.tenant('preview-options-b');
    const err = await other.owner.deployment.preview({ name: 'syscount', version: '1.0.0', selector: 'env=prod', options: { nope: '1' } }).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'NOT_FOUND' });
    expect((err as Error).message).not.toContain('filter_');
  });
});
