// `probeyard serve`, `admin create-tenant`, `login` and `tokens` against a real registry on PGlite.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 600_000 });
// Test support of the registry: a data folder with a ready PGlite cluster (initdb takes ~30 s).
import { prepareDataFolder } from '@probeyard/registry/testing';
import { adminCommand } from '../src/commands/admin.js';
import { invitationsCommand } from '../src/commands/invitations.js';
import { loginCommand } from '../src/commands/login.js';
import { membersCommand } from '../src/commands/members.js';
import { loadRegistryServer } from '../src/commands/serve.js';
import { settingsCommand } from '../src/commands/settings.js';
import { tokensCommand } from '../src/commands/tokens.js';
import type { Command } from '../src/command.js';
import { CliError, type CliIo } from '../src/io.js';

function dataFolder(): Promise<string> {
  return prepareDataFolder('probeyard-cli-');
}

/** Runs a command as main.ts does (errors become exit codes), capturing its output. */
async function run(command: Command, args: string[], stdin = '') {
  const io = {
    out: '',
    err: '',
    stdout: (t: string) => {
      io.out += t;
    },
    stderr: (t: string) => {
      io.err += t;
    },
    readStdin: async () => new TextEncoder().encode(stdin),
    readFile: async () => new Uint8Array(0),
    writeFile: async () => {},
  } satisfies CliIo & { out: string; err: string };
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
beforeAll(() => {
  configDir = mkdtempSync(join(tmpdir(), 'probeyard-config-'));
  process.env.PROBEYARD_CONFIG = join(configDir, 'config.json');
  delete process.env.PROBEYARD_REGISTRY;
  delete process.env.PROBEYARD_TOKEN;
  delete process.env.DATABASE_URL;
});
afterAll(() => {
  process.env = saved;
  rmSync(configDir, { recursive: true, force: true });
});

describe('with a running registry', () => {
  let dataDir: string;
  let registry: Awaited<ReturnType<Awaited<ReturnType<typeof loadRegistryServer>>['startRegistry']>>;
  beforeAll(async () => {
    dataDir = await dataFolder();
    const server = await loadRegistryServer();
    registry = await server.startRegistry({ dataDir, port: 0, logger: () => {} });
  });
  afterAll(async () => {
    await registry?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('admin create-tenant, login, tokens create/list/revoke', async () => {
    const made = await run(adminCommand, ['create-tenant', 'acme', '--owner', 'Owner@Acme.example', '--data', dataDir]);
    expect(made.err).toContain(`through the registry at ${registry.url}`);
    expect(made.code).toBe(0);
    expect(made.out).toContain('tenant acme (');
    expect(made.last).toMatch(/^pyt_[A-Za-z0-9_-]{43}$/);

    const login = await run(loginCommand, ['--registry', registry.url, '--token', made.last]);
    expect(login.code).toBe(0);
    expect(login.out).toContain(`logged in to ${registry.url} as owner@acme.example (owner) in tenant acme`);
    const configFile = process.env.PROBEYARD_CONFIG ?? '';
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(configFile, 'utf8'))).toEqual({ registry: registry.url, token: made.last });

    const created = await run(tokensCommand, ['create', 'ci', '--role', 'viewer']);
    expect(created.code).toBe(0);
    expect(created.last).toMatch(/^pyt_/);
    const listed = await run(tokensCommand, ['list', '--json']);
    expect(listed.code).toBe(0);
    const tokens = JSON.parse(listed.out) as { id: string; name: string; role: string }[];
    const ci = tokens.find((t) => t.name === 'ci');
    expect(ci?.role).toBe('viewer');
    expect(listed.out).not.toContain(created.last);
    const table = await run(tokensCommand, ['list']);
    expect(table.out.split('\n')[0]).toMatch(/^ID\s+NAME\s+ROLE/);

    // The viewer token cannot make an owner token: refused, exit 1.
    const escalate = await run(tokensCommand, ['create', 'x', '--role', 'owner', '--token', created.last]);
    expect(escalate.code).toBe(1);
    expect(escalate.err).toContain('token create: a token of role owner needs that role, the caller has viewer');

    const revoked = await run(tokensCommand, ['revoke', ci?.id ?? '']);
    expect(revoked).toMatchObject({ code: 0, out: `revoked token ${ci?.id} 'ci'\n` });
    const useRevoked = await run(tokensCommand, ['list', '--token', created.last]);
    expect(useRevoked.code).toBe(1);
    expect(useRevoked.err).toContain('unauthorized: token revoked');

    const missing = await run(tokensCommand, ['revoke', '01900000-0000-7000-8000-000000000000']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('token not found');
  });

  it('login --email trades a password (from stdin) for a session token', async () => {
    const made = await run(adminCommand, ['create-tenant', 'pwd', '--owner', 'boss@pwd.example', '--data', dataDir]);
    const invited = await run(membersCommand, ['invite', 'dev@pwd.example', '--role', 'publisher', '--registry', registry.url, '--token', made.last]);
    expect(invited.code).toBe(0);
    const accepted = await run(invitationsCommand, ['accept', invited.last, '--registry', registry.url, '--password-stdin'], 'a long enough password\n');
    expect(accepted).toMatchObject({ code: 0, out: expect.stringContaining('dev@pwd.example joined tenant pwd as publisher (account created)') });
    const r = await run(loginCommand, ['--registry', registry.url, '--email', 'dev@pwd.example', '--password-stdin'], 'a long enough password\n');
    expect(r.code).toBe(0);
    expect(r.out).toContain('as dev@pwd.example (publisher) in tenant pwd');
    expect(JSON.parse(readFileSync(process.env.PROBEYARD_CONFIG ?? '', 'utf8')).token).toMatch(/^pys_/);
    const wrong = await run(loginCommand, ['--registry', registry.url, '--email', 'dev@pwd.example', '--password-stdin'], 'not the password\n');
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain('login: invalid email, password or tenant');
  });

  it('members invite / invitations / revoke-invitation, and invitations accept as the signed-in account', async () => {
    const a = await run(adminCommand, ['create-tenant', 'inv-a', '--owner', 'boss@inv-a.example', '--data', dataDir]);
    const b = await run(adminCommand, ['create-tenant', 'inv-b', '--owner', 'boss@inv-b.example', '--data', dataDir]);
    const as = (token: string) => ['--registry', registry.url, '--token', token];
    // A's owner invites B's owner (an existing account) and a new person; both answers look alike.
    const known = await run(membersCommand, ['invite', 'boss@inv-b.example', '--role', 'admin', '--json', ...as(a.last)]);
    const fresh = await run(membersCommand, ['invite', 'new@inv-a.example', '--role', 'viewer', '--json', ...as(a.last)]);
    expect(Object.keys(JSON.parse(known.out)).sort()).toEqual(Object.keys(JSON.parse(fresh.out)).sort());
    const pending = await run(membersCommand, ['invitations', ...as(a.last)]);
    expect(pending.out).toMatch(/^ID\s+EMAIL\s+ROLE/);
    expect(pending.out).toContain('boss@inv-b.example');
    // The secret alone does not let anyone in as an existing account.
    const knownSecret = JSON.parse(known.out).secret as string;
    const noCredential = await run(invitationsCommand, ['accept', knownSecret, '--registry', registry.url, '--password-stdin'], 'some guess of a password\n');
    expect(noCredential.code).toBe(1);
    expect(noCredential.err).toContain("accept invitation: the password is not the account's password");
    // B's owner accepts with its own (full-role) token.
    const accepted = await run(invitationsCommand, ['accept', knownSecret, '--signed-in', ...as(b.last)]);
    expect(accepted).toMatchObject({ code: 0, out: expect.stringContaining('boss@inv-b.example joined tenant inv-a as admin\n') });
    const members = await run(membersCommand, ['list', ...as(a.last)]);
    expect(members.out).toContain('boss@inv-b.example');
    // Revoke the other one: it no longer works.
    const id = JSON.parse(fresh.out).invitation.id as string;
    expect(await run(membersCommand, ['revoke-invitation', id, ...as(a.last)])).toMatchObject({ code: 0, out: 'revoked the invitation of new@inv-a.example (viewer)\n' });
    const late = await run(invitationsCommand, ['accept', JSON.parse(fresh.out).secret, '--registry', registry.url, '--password-stdin'], 'a long enough password\n');
    expect(late.code).toBe(1);
    expect(late.err).toContain('no such invitation');
    expect((await run(membersCommand, ['invitations', ...as(a.last)])).out).toBe('no pending invitations\n');
    // B's owner cannot revoke A's invitations: NOT_FOUND.
    const other = await run(membersCommand, ['revoke-invitation', id, ...as(b.last)]);
    expect(other.code).toBe(1);
    expect(other.err).toContain(`invitation not found: ${id}`);
  });

  it('settings shows and changes the compat settings and the live limits (admin, within the ceilings), a viewer is refused, and another tenant is untouched', async () => {
    const a = await run(adminCommand, ['create-tenant', 'set-a', '--owner', 'boss@set-a.example', '--data', dataDir]);
    const b = await run(adminCommand, ['create-tenant', 'set-b', '--owner', 'boss@set-b.example', '--data', dataDir]);
    const as = (token: string) => ['--registry', registry.url, '--token', token];
    expect(await run(settingsCommand, as(a.last))).toMatchObject({
      code: 0,
      out: expect.stringMatching(/^strict-char-sign {2}off\nengine {12}\S+\nlive-sessions {5}4 \(ceiling 16\)\nlive-duration {5}300 s \(ceiling 3600 s\)\nlive-cpu {10}10% \(ceiling 50%\)\n$/),
    });
    const on = await run(settingsCommand, ['--strict-char-sign', 'on', ...as(a.last)]);
    expect(on.code).toBe(0);
    expect(on.out).toMatch(/^strict-char-sign on: the matrix is being computed again \(compat job [0-9a-f-]{36};/);
    expect(await run(settingsCommand, ['--strict-char-sign', 'on', ...as(a.last)])).toMatchObject({ code: 0, out: 'strict-char-sign is already on: nothing to recompute\n' });
    expect(JSON.parse((await run(settingsCommand, ['--json', ...as(a.last)])).out)).toMatchObject({ strictCharSign: true });
    // B's settings did not move.
    expect(JSON.parse((await run(settingsCommand, ['--json', ...as(b.last)])).out)).toMatchObject({ strictCharSign: false });
    // A viewer may look but not change.
    const viewer = (await run(tokensCommand, ['create', 'look', '--role', 'viewer', ...as(a.last)])).last;
    expect((await run(settingsCommand, as(viewer))).code).toBe(0);
    const refused = await run(settingsCommand, ['--strict-char-sign', 'off', ...as(viewer)]);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/admin/);
    const bad = await run(settingsCommand, ['--strict-char-sign', 'maybe', ...as(a.last)]);
    expect(bad).toMatchObject({ code: 2, err: expect.stringContaining("--strict-char-sign: on or off, not 'maybe'") });

    // live limits: the admin changes them, within the instance's ceilings
    const live = await run(settingsCommand, ['--live-sessions', '2', '--live-duration', '600', '--live-cpu', '20', ...as(a.last)]);
    expect(live).toMatchObject({
      code: 0,
      out: 'live limits changed (sessions started from now on get them):\nlive-sessions     2 (ceiling 16)\nlive-duration     600 s (ceiling 3600 s)\nlive-cpu          20% (ceiling 50%)\n',
    });
    expect(await run(settingsCommand, ['--live-sessions', '2', ...as(a.last)])).toMatchObject({ code: 0, out: expect.stringMatching(/^live limits already so: nothing changed\n/) });
    expect(JSON.parse((await run(settingsCommand, ['--json', ...as(a.last)])).out).live).toEqual({
      limits: { maxSessions: 2, maxDurationSeconds: 600, cpuBudgetPercent: 20 },
      ceilings: { maxSessions: 16, maxDurationSeconds: 3600, cpuBudgetPercent: 50 },
    });
    expect(JSON.parse((await run(settingsCommand, ['--json', ...as(b.last)])).out).live.limits).toEqual({ maxSessions: 4, maxDurationSeconds: 300, cpuBudgetPercent: 10 });
    const over = await run(settingsCommand, ['--live-duration', '7200', ...as(a.last)]);
    expect(over.code).toBe(2);
    expect(over.err).toContain("live limits: a duration of 7200 s is over the instance's ceiling of 3600 s (PROBEYARD_LIVE_DURATION_CEILING_SECONDS)");
    const viewerLive = await run(settingsCommand, ['--live-sessions', '8', ...as(viewer)]);
    expect(viewerLive.code).toBe(1);
    expect(viewerLive.err).toMatch(/admin/);
    expect(await run(settingsCommand, ['--live-cpu', 'lots', ...as(a.last)])).toMatchObject({ code: 2, err: expect.stringContaining("--live-cpu: a whole number of at least 1, not 'lots'") });
  });

  it.each([
    [['create', 'x', '--role', 'root'], '--role must be one of'],
    [['create'], 'expected one NAME'],
    [['frobnicate'], "unknown subcommand 'frobnicate'"],
    [['list', '--colour'], "Unknown option '--colour'"],
    [['revoke', "1' OR '1'='1"], 'not a token id'],
  ])('tokens %j is unusable input (exit 2)', async (args, message) => {
    const r = await run(tokensCommand, [...args, '--registry', registry.url, '--token', 'pyt_x']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
  });

  it('refuses a second tenant of the same name (exit 1) and a bad token at login (exit 1)', async () => {
    await run(adminCommand, ['create-tenant', 'twice', '--owner', 'a@example.com', '--data', dataDir]);
    const again = await run(adminCommand, ['create-tenant', 'twice', '--owner', 'a@example.com', '--data', dataDir]);
    expect(again.code).toBe(1);
    expect(again.err).toContain('tenant exists: twice');
    const bad = await run(loginCommand, ['--registry', registry.url, '--token', 'pyt_made-up']);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('unauthorized: unknown token');
  });
});

describe('admin create-tenant with no registry running', () => {
  it('opens the database itself and prints the owner token last', async () => {
    const dataDir = await dataFolder();
    try {
      const r = await run(adminCommand, ['create-tenant', 'solo', '--owner', 'me@solo.example', '--data', dataDir]);
      expect(r.err).toContain('opening the database directly');
      expect(r.code).toBe(0);
      expect(r.last).toMatch(/^pyt_/);
      expect(statSync(join(dataDir, 'admin-credential')).mode & 0o777).toBe(0o600);
      expect(existsSync(join(dataDir, 'registry.lock'))).toBe(false);
      const bad = await run(adminCommand, ['create-tenant', "x'; DROP TABLE", '--owner', 'me@solo.example', '--data', dataDir]);
      expect(bad.code).toBe(2);
      expect(bad.err).toContain('create tenant: name:');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('probeyard serve', () => {
  // tsx as a loader (not its CLI, which would run the command in a grandchild process).
  const tsxLoader = new URL('../../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
  const fixture = fileURLToPath(new URL('fixtures/serve.ts', import.meta.url));
  function serve(dataDir: string): ChildProcess & { stderrText: () => string; exited: Promise<number | null> } {
    const child = spawn(process.execPath, ['--conditions=@probeyard/source', '--import', tsxLoader, fixture, '--port', '0', '--data', dataDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DATABASE_URL: '' },
    });
    let err = '';
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.stdout?.resume();
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return Object.assign(child, { stderrText: () => err, exited });
  }

  it('refuses a --trusted-proxy that is not an address or subnet (exit 2), before opening the data folder', async () => {
    const { serveCommand } = await import('../src/commands/serve.js');
    const r = await run(serveCommand, ['--trusted-proxy', 'web.internal', '--data', join(tmpdir(), 'probeyard-never-made')]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('trusted proxy: not an address or subnet: web.internal');
    expect(existsSync(join(tmpdir(), 'probeyard-never-made'))).toBe(false);
  });

  it('serves, refuses a second server on the same data folder, and stops on SIGTERM', { timeout: 240_000 }, async () => {
    const dataDir = await dataFolder();
    const first = serve(dataDir);
    try {
      const deadline = Date.now() + 120_000;
      while (!/registry on (http:\/\/\S+)/.test(first.stderrText())) {
        if (Date.now() > deadline || first.exitCode !== null) throw new Error(`serve did not start: ${first.stderrText()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const url = /registry on (http:\/\/\S+)/.exec(first.stderrText())?.[1] ?? '';
      expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ ready: true });

      const second = serve(dataDir);
      expect(await second.exited).toBe(1);
      expect(second.stderrText()).toContain(`data folder ${dataDir} is in use by pid ${first.pid}`);

      first.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      expect(existsSync(join(dataDir, 'registry.lock'))).toBe(false);
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    } finally {
      first.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
