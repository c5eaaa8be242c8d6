// `probeyard agents enroll-token | list | label | revoke` against a real registry on PGlite, over HTTP.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareDataFolder } from '@probeyard/registry/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Command } from '../src/command.js';
import { adminCommand } from '../src/commands/admin.js';
import { agentsCommand, parseLabelArgs } from '../src/commands/agents.js';
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
let owner: string[];
let viewer: string[];
let other: string[];

beforeAll(async () => {
  configDir = mkdtempSync(join(tmpdir(), 'probeyard-config-'));
  process.env.PROBEYARD_CONFIG = join(configDir, 'config.json');
  delete process.env.PROBEYARD_REGISTRY;
  delete process.env.PROBEYARD_TOKEN;
  delete process.env.DATABASE_URL;
  dataDir = await prepareDataFolder('probeyard-cli-agents-');
  registry = await (await loadRegistryServer()).startRegistry({ dataDir, port: 0, logger: () => {} });
  const ownerToken = (await run(adminCommand, ['create-tenant', 'nodes', '--owner', 'owner@nodes.example', '--data', dataDir])).last;
  const otherToken = (await run(adminCommand, ['create-tenant', 'elsewhere', '--owner', 'owner@elsewhere.example', '--data', dataDir])).last;
  const viewerToken = (await registryClient(registry.url, ownerToken).token.create.mutate({ name: 'ro', role: 'viewer' })).secret;
  owner = ['--registry', registry.url, '--token', ownerToken];
  viewer = ['--registry', registry.url, '--token', viewerToken];
  other = ['--registry', registry.url, '--token', otherToken];
});
afterAll(async () => {
  await registry?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  process.env = saved;
  rmSync(configDir, { recursive: true, force: true });
});

describe('probeyard agents', () => {
  it('makes a one-time enrolment token, lists, relabels and revokes the agent that spent it', async () => {
    const made = await run(agentsCommand, ['enroll-token', '--label', 'env=prod', '--expires-minutes', '30', ...owner]);
    expect(made.code).toBe(0);
    expect(made.out).toContain('with labels env=prod, one use, expires');
    expect(made.out).toContain('the token is shown once:');
    const token = made.last;
    expect(token).toMatch(/^pye_[A-Za-z0-9_-]{43}$/);

    const { agent } = await registryClient(registry.url).agent.enroll.mutate({ enrollmentToken: token, hostname: 'node-a', labels: { zone: 'a', env: 'dev' } });
    expect(agent.labels).toEqual({ zone: 'a', env: 'prod' });

    const listed = await run(agentsCommand, ['list', '--json', ...owner]);
    expect(JSON.parse(listed.out)).toMatchObject([{ id: agent.id, hostname: 'node-a', labels: { env: 'prod', zone: 'a' }, revokedAt: null }]);
    const tableOut = await run(agentsCommand, ['list', ...viewer]);
    expect(tableOut.code).toBe(0);
    expect(tableOut.out).toMatch(new RegExp(`^${agent.id}\\s+node-a\\s+env=prod,zone=a\\s+-\\s+-\\s+\\d+s ago\\s+active$`, 'm'));

    const merged = await run(agentsCommand, ['label', agent.id, 'rack=r1', 'zone-', ...owner]);
    expect(merged).toMatchObject({ code: 0, out: `agent ${agent.id} (node-a) labels: env=prod,rack=r1\n` });
    const replaced = await run(agentsCommand, ['label', agent.id, 'env=dev', '--replace', '--json', ...owner]);
    expect(JSON.parse(replaced.out).labels).toEqual({ env: 'dev' });

    // a viewer reads, but neither labels nor revokes; another tenant does not even find the agent
    expect((await run(agentsCommand, ['label', agent.id, 'x=y', '--replace', ...viewer])).err).toContain('forbidden: this needs the admin role, the token has viewer');
    expect((await run(agentsCommand, ['enroll-token', ...viewer])).code).toBe(1);
    const foreign = await run(agentsCommand, ['revoke', agent.id, ...other]);
    expect(foreign.code).toBe(1);
    expect(foreign.err).toContain(`agent not found: ${agent.id}`);
    expect((await run(agentsCommand, ['label', agent.id, 'x=y', ...other])).err).toContain(`agent not found: ${agent.id}`);
    expect(JSON.parse((await run(agentsCommand, ['list', '--json', ...other])).out)).toEqual([]);

    const revoked = await run(agentsCommand, ['revoke', agent.id, ...owner]);
    expect(revoked).toMatchObject({ code: 0, out: `revoked agent ${agent.id} (node-a): its credential no longer works\n` });
    expect((await run(agentsCommand, ['list', ...owner])).out).toMatch(/\s+revoked$/m);
  });

  it.each([
    [['bogus'], "unknown subcommand 'bogus' (enroll-token, list, label, revoke)"],
    [[], 'expected enroll-token, list, label or revoke'],
    [['label', 'nope', 'a=b'], "label: expected an agent ID, got 'nope'"],
    [['label', '01900000-0000-7000-8000-000000000000'], 'label: expected k=v (set) or k- (remove) words'],
    [['label', '01900000-0000-7000-8000-000000000000', 'a b=c'], "label: label key 'a b' is not an optional DNS prefix and /, then 1 to 63 letters, digits, -, _ and . starting and ending with a letter or digit"],
    [['enroll-token', '--label', 'novalue'], "--label: 'novalue' is not k=v (or k- to remove)"],
    [['enroll-token', '--expires-minutes', '0'], 'enroll-token: --expires-minutes takes 1 to 10080, not 0'],
    [['list', '--label', 'a=b'], 'list: --label belongs to enroll-token (label takes k=v words)'],
  ])('refuses %j as unusable input (exit 2)', async (args, message) => {
    const r = await run(agentsCommand, [...args, '--registry', 'http://127.0.0.1:9', '--token', 'pyt_x']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
  });

  it('parses label words: set and remove', () => {
    expect(parseLabelArgs(['a=1', 'b=', 'c-'], 'x')).toEqual({ set: { a: '1', b: '' }, remove: ['c'] });
    expect(() => parseLabelArgs([`a=${'v'.repeat(64)}`], 'x')).toThrow('value has 64 characters, the limit is 63');
  });
});
