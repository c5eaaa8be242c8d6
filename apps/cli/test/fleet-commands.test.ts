// `probeyard deploy` and `probeyard deployments` against a real registry on PGlite, over HTTP.
// The version to deploy is put straight into the registry's database (publishing is not this
// test's business); agents enrol through the API.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readProgramSpec, specToJson } from '@probeyard/compat';
import { prepareDataFolder } from '@probeyard/registry/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Command } from '../src/command.js';
import { adminCommand } from '../src/commands/admin.js';
import { deployCommand } from '../src/commands/deploy.js';
import { deploymentsCommand } from '../src/commands/deployments.js';
import { loadRegistryServer } from '../src/commands/serve.js';
import { CliError } from '../src/io.js';
import { registryClient } from '../src/registry.js';
import { bufferIo } from './support/buffer-io.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 600_000 });

async function run(command: Command, args: string[]) {
  const io = bufferIo();
  let code: number;
  try {
    code = await command.run(args, io);
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    io.err += `${err.message}\n`;
    code = err.exitCode;
  }
  return { code, out: io.out, err: io.err, last: io.out.trimEnd().split('\n').at(-1) ?? '' };
}

const saved = { ...process.env };
let configDir: string;
let dataDir: string;
let registry: Awaited<ReturnType<Awaited<ReturnType<typeof loadRegistryServer>>['startRegistry']>>;
let owner: string;
let viewer: string;
let other: string;
let target: string[];

beforeAll(async () => {
  configDir = mkdtempSync(join(tmpdir(), 'probeyard-config-'));
  process.env.PROBEYARD_CONFIG = join(configDir, 'config.json');
  delete process.env.PROBEYARD_REGISTRY;
  delete process.env.PROBEYARD_TOKEN;
  delete process.env.DATABASE_URL;
  dataDir = await prepareDataFolder('probeyard-cli-fleet-');
  registry = await (await loadRegistryServer()).startRegistry({ dataDir, port: 0, logger: () => {} });
  owner = (await run(adminCommand, ['create-tenant', 'fleet', '--owner', 'owner@fleet.example', '--data', dataDir])).last;
  other = (await run(adminCommand, ['create-tenant', 'elsewhere', '--owner', 'owner@elsewhere.example', '--data', dataDir])).last;
  const api = registryClient(registry.url, owner);
  const me = await api.whoami.query();
  viewer = (await api.token.create.mutate({ name: 'ro', role: 'viewer' })).secret;
  // A published version, straight into the database.
  const db = registry.db.prisma;
  const program = await db.program.create({ data: { tenantId: me.tenant.id, name: 'runqlat' }, select: { id: true } });
  for (const [version, yankReason] of [
    ['1.0.0', null],
    ['0.9.0', 'wrong offsets'],
  ] as const) {
    const artifact = Buffer.from(`; runqlat ${version}\nmov r0, 0\nexit\n`);
    const [major = 0, minor = 0, patch = 0] = version.split('.').map(Number);
    await db.programVersion.create({
      data: {
        tenantId: me.tenant.id,
        programId: program.id,
        version,
        major,
        minor,
        patch,
        artifactKind: 'asm',
        artifact,
        digest: createHash('sha256').update(artifact).digest('hex'),
        size: artifact.length,
        spec: {},
        manifest: {},
        verifierReport: {},
        ...(yankReason ? { yankedAt: new Date(), yankReason } : {}),
      },
    });
  }
  // libbpf-tools' syscount as built in examples/libbpf: its .rodata options are what --set sets.
  const syscount = readFileSync(join(import.meta.dirname, '../../../examples/libbpf/syscount.bpf.o'));
  const sysProgram = await db.program.create({ data: { tenantId: me.tenant.id, name: 'syscount' }, select: { id: true } });
  await db.programVersion.create({
    data: {
      tenantId: me.tenant.id,
      programId: sysProgram.id,
      version: '1.0.0',
      major: 1,
      minor: 0,
      patch: 0,
      artifactKind: 'elf',
      artifact: syscount,
      digest: createHash('sha256').update(syscount).digest('hex'),
      size: syscount.length,
      spec: specToJson(await readProgramSpec(syscount)) as never,
      manifest: {},
      verifierReport: {},
    },
  });
  target = ['--registry', registry.url, '--token', owner];
  for (const [hostname, env] of [
    ['prod-1', 'prod'],
    ['prod-2', 'prod'],
    ['dev-1', 'dev'],
  ] as const) {
    const { enrollmentToken } = await api.agent.createEnrollmentToken.mutate({ labels: { env, zone: 'a' } });
    await registryClient(registry.url).agent.enroll.mutate({ enrollmentToken, hostname });
  }
});
afterAll(async () => {
  await registry?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  process.env = saved;
  rmSync(configDir, { recursive: true, force: true });
});

describe('probeyard deploy and deployments', () => {
  it('deploys to the matching agents, lists, shows and stops', async () => {
    const made = await run(deployCommand, ['runqlat@1.0.0', '--selector', 'env=prod,zone=a', ...target]);
    expect(made.err).toBe('');
    expect(made.code).toBe(0);
    expect(made.out).toContain('deployed runqlat@1.0.0 to 2 agents matching env=prod,zone=a');
    const id = made.last;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const listed = await run(deploymentsCommand, ['list', '--json', ...target]);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out)).toMatchObject([{ id, program: { name: 'runqlat', version: '1.0.0' }, desiredState: 'running', targets: { total: 2, pending: 2 } }]);
    const tableOut = await run(deploymentsCommand, target);
    expect(tableOut.out.split('\n')[0]).toMatch(/^ID\s+PROGRAM\s+SELECTOR\s+DESIRED\s+TARGETS/);
    expect(tableOut.out).toContain(`${id}  runqlat@1.0.0  env=prod,zone=a  running  2 (2 pending)`);

    const shown = await run(deploymentsCommand, ['show', id, ...target]);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain('selector  env=prod,zone=a');
    expect(shown.out).toMatch(/prod-1\s+pending\s+running/);
    expect(shown.out).not.toContain('dev-1');
    const shownJson = JSON.parse((await run(deploymentsCommand, ['show', id, '--json', ...target])).out);
    expect(shownJson.targets.map((t: { hostname: string }) => t.hostname).sort()).toEqual(['prod-1', 'prod-2']);

    // A viewer reads but cannot deploy or stop (refused, exit 1).
    const asViewer = ['--registry', registry.url, '--token', viewer];
    expect((await run(deploymentsCommand, ['show', id, ...asViewer])).code).toBe(0);
    const vDeploy = await run(deployCommand, ['runqlat@1.0.0', '--selector', 'env=dev', ...asViewer]);
    expect(vDeploy.code).toBe(1);
    expect(vDeploy.err).toContain('forbidden: this needs the publisher role, the token has viewer');
    expect((await run(deploymentsCommand, ['stop', id, ...asViewer])).code).toBe(1);

    // Another tenant's token: not found (exit 1).
    const foreign = await run(deploymentsCommand, ['stop', id, '--registry', registry.url, '--token', other]);
    expect(foreign.code).toBe(1);
    expect(foreign.err).toContain(`deployment not found: ${id}`);

    const stopped = await run(deploymentsCommand, ['stop', id, ...target]);
    expect(stopped).toMatchObject({ code: 0, out: `stopped deployment ${id}\n` });
    expect((await run(deploymentsCommand, ['stop', id, ...target])).out).toBe(`deployment ${id} was already stopped\n`);
    expect(JSON.parse((await run(deploymentsCommand, ['list', '--state', 'running', '--json', ...target])).out)).toEqual([]);
  });

  it('deploys with .rodata options (--set), shown by deploy, list and show', async () => {
    const made = await run(deployCommand, ['syscount@1.0.0', '--selector', 'env=dev', '--set', 'filter_failed=true', '--set', 'filter_pid=0x2a', ...target]);
    expect(made.err).toBe('');
    expect(made.code).toBe(0);
    expect(made.out).toContain('deployed syscount@1.0.0 to 1 agent matching env=dev with filter_failed=true filter_pid=42\n');
    const id = made.last;
    const listed = JSON.parse((await run(deploymentsCommand, ['list', '--json', ...target])).out) as { id: string; options: Record<string, string> }[];
    expect(listed.find((d) => d.id === id)?.options).toEqual({ filter_failed: 'true', filter_pid: '42' });
    const shown = await run(deploymentsCommand, ['show', id, ...target]);
    expect(shown.out).toContain('options   filter_failed=true filter_pid=42\n');
    // without --set: no options line
    const plain = await run(deployCommand, ['syscount@1.0.0', '--selector', 'env=dev', ...target]);
    expect(plain.out).not.toContain(' with ');
    expect((await run(deploymentsCommand, ['show', plain.last, ...target])).out).not.toContain('options');
    await run(deploymentsCommand, ['stop', id, ...target]);
    await run(deploymentsCommand, ['stop', plain.last, ...target]);
  });

  it.each([
    [deployCommand, ['syscount@1.0.0', '--selector', 'env=dev', '--set', 'filter_pdi=1'], 2, 'option no read-only variable filter_pdi (the object'],
    [deployCommand, ['syscount@1.0.0', '--selector', 'env=dev', '--set', 'filter_failed=2000'], 2, 'option filter_failed has 1 bytes, 2000 does not fit'],
    [deployCommand, ['syscount@1.0.0', '--selector', 'env=dev', '--set', 'filter_pid=yes'], 2, '--set: filter_pid: "yes" is not an integer or true/false'],
    [deployCommand, ['syscount@1.0.0', '--selector', 'env=dev', '--set', 'filter_pid'], 2, '--set: "filter_pid" is not NAME=VALUE'],
    [deployCommand, ['syscount@1.0.0', '--selector', 'env=dev', '--set', 'a.b=1'], 2, "--set: 'a.b' is not a C variable name"],
    [deployCommand, ['syscount@1.0.0', '--selector', 'env=dev', '--set', 'filter_pid=1', '--set', 'filter_pid=2'], 2, '--set: filter_pid given twice'],
    [deployCommand, ['runqlat@0.9.0', '--selector', 'env=prod'], 1, 'runqlat@0.9.0 is yanked (wrong offsets) and cannot be deployed'],
    [deployCommand, ['runqlat@7.0.0', '--selector', 'env=prod'], 1, 'program version not found: runqlat@7.0.0'],
    [deploymentsCommand, ['show', '01900000-0000-7000-8000-000000000000'], 1, 'deployment not found'],
    [deployCommand, ['runqlat', '--selector', 'env=prod'], 2, "expected NAME@VERSION, got 'runqlat'"],
    [deployCommand, ['runqlat@1.0.0'], 2, '--selector k=v is required'],
    [deployCommand, ['runqlat@1.0.0', '--selector', 'env'], 2, "--selector: 'env' is not k=v"],
    [deployCommand, ['runqlat@1.0.0', '--selector', 'a=1,a=2'], 2, "key 'a' given twice"],
    [deployCommand, ['runqlat@1.0.0', '--selector', '../x=1'], 2, "--selector: label key '../x' is not an optional DNS prefix"],
    [deploymentsCommand, ['show', "1' OR '1'='1"], 2, 'not a deployment id'],
    [deploymentsCommand, ['frobnicate'], 2, "unknown subcommand 'frobnicate'"],
    [deploymentsCommand, ['list', '--state', 'paused'], 2, '--state is running or stopped'],
    [deploymentsCommand, ['list', '--colour'], 2, "Unknown option '--colour'"],
  ])('%#: refuses with exit %i', async (command, args, code, message) => {
    const before = await registry.db.prisma.deployment.count();
    const r = await run(command as Command, [...(args as string[]), ...target]);
    expect(r.err).toContain(message);
    expect(r.code).toBe(code);
    expect(await registry.db.prisma.deployment.count()).toBe(before);
  });
});
