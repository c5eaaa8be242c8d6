// `probeyard publish`, `versions`, `yank`, `kernels upload|list|diff` and `compat NAME[@VERSION]`
// against a real registry on PGlite over HTTP (its own compat job runner computes the matrix).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { prepareDataFolder } from '@probeyard/registry/testing';
import { loadRegistryServer } from '../src/commands/serve.js';
import { run } from '../src/main.js';
import { bufferIo } from './support/buffer-io.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 600_000 });

const root = fileURLToPath(new URL('../../../', import.meta.url));
const linuxTree = `${root}packages/compat/test/fixtures/formats/linux-6.18`;
const androidTree = `${root}packages/compat/test/fixtures/formats/android-3.10.49`;
const runqlat = `${root}examples/c/runqlat.o`;
const forkcomm = `${root}examples/c/forkcomm.o`;
const switchCount = `${root}examples/sched-switch-count.s`;
const traceDat = `${root}examples/recordings/sched-small.dat`;

/** Runs `probeyard ARGS` as bin/probeyard does (errors become exit codes), with real files. */
async function cli(args: string[]) {
  const io = bufferIo({ disk: true });
  const code = await run(args, io);
  return { code, out: io.out, err: io.err };
}

const saved = { ...process.env };
let dataDir: string;
let scratch: string;
let registry: Awaited<ReturnType<Awaited<ReturnType<typeof loadRegistryServer>>['startRegistry']>>;
let viewerToken: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'probeyard-publish-cli-'));
  process.env.PROBEYARD_CONFIG = join(scratch, 'config.json');
  delete process.env.DATABASE_URL;
  dataDir = await prepareDataFolder('probeyard-cli-publish-');
  const server = await loadRegistryServer();
  registry = await server.startRegistry({ dataDir, port: 0, logger: () => {} });
  const made = await cli(['admin', 'create-tenant', 'pubco', '--owner', 'owner@pubco.example', '--data', dataDir]);
  expect(made.code).toBe(0);
  process.env.PROBEYARD_REGISTRY = registry.url;
  process.env.PROBEYARD_TOKEN = made.out.trimEnd().split('\n').at(-1) ?? '';
  const viewer = await cli(['tokens', 'create', 'read-only', '--role', 'viewer']);
  viewerToken = viewer.out.trimEnd().split('\n').at(-1) ?? '';
});
afterAll(async () => {
  await registry?.close();
  process.env = saved;
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

/** Waits until the registry's job runner has no compat job left for the tenant. */
async function settled() {
  for (let i = 0; i < 600; i++) {
    const r = await cli(['compat', 'runqlat', '--json']);
    if ((JSON.parse(r.out) as { pendingJobs: number }).pendingJobs === 0) return;
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error('compat jobs did not finish');
}

describe('publishing from the CLI', () => {
  it('publishes, answers a re-publish of the same bytes as a no-op and of other bytes as refused', async () => {
    const first = await cli(['publish', runqlat, '--name', 'runqlat', '--version', '1.0.0', '--description', 'run queue latency', '--tag', 'sched']);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/^published runqlat@1\.0\.0 \(elf, \d+ bytes, sha256 [0-9a-f]{64}\), module-like, no ABI\n$/);
    expect(first.err).toContain('compatibility with every kernel profile is computed in the background');
    const again = await cli(['publish', runqlat, '--name', 'runqlat', '--version', '1.0.0']);
    expect(again).toMatchObject({ code: 0, out: expect.stringContaining('is already published with these bytes') });
    const other = await cli(['publish', forkcomm, '--name', 'runqlat', '--version', '1.0.0']);
    expect(other.code).toBe(1);
    expect(other.err).toContain('runqlat@1.0.0 exists with other bytes');
    expect(other.err).not.toContain('publish: publish:');
    // Bad input is told in words, not as zod's JSON, and is a usage error.
    const semver = await cli(['publish', runqlat, '--name', 'runqlat', '--version', '1.0']);
    expect(semver.code).toBe(2);
    expect(semver.err).toContain('invalid input: version: not a semantic version');
  });

  it('prints the verifier diagnostics of a rejected program and exits 1', async () => {
    const file = join(scratch, 'unsafe.s');
    writeFileSync(file, '.license "GPL"\n.section tracepoint/sched/sched_switch\nbad:\n    r0 = *(u64 *)(r2 + 0)\n    exit\n');
    const r = await cli(['publish', file, '--name', 'unsafe', '--version', '1.0.0']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('publish: verifier rejected program bad');
    expect(r.err).toContain('  bad: insn 0: r0 = *(u64 *)(r2 + 0)\n    R2 !read_ok');
    expect((await cli(['versions', 'unsafe'])).code).toBe(1);
  });

  it('reports upload progress on stderr for a large artifact', async () => {
    const big = join(scratch, 'big.s');
    writeFileSync(big, `${readFileSync(switchCount, 'utf8')}\n${'# padding to make a large upload\n'.repeat(24_000)}`);
    const r = await cli(['publish', big, '--name', 'switches', '--version', '2.0.0', '--json']);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/publish: sent 10% \(\d+ of \d+ bytes\)/);
    expect(r.err).toMatch(/publish: sent 100% \((\d+) of \1 bytes\)/);
    expect(JSON.parse(r.out)).toMatchObject({ created: true, version: { version: '2.0.0', artifactKind: 'asm' } });
  });

  it.each([
    [['publish', runqlat, '--name', 'x'], '--version VERSION is needed'],
    [['publish', runqlat, '--name', 'x', '--version', 'v1'], 'not a semantic version'],
    [['publish', `${root}README.md`, '--name', 'readme', '--version', '1.0.0'], 'read assembly'],
    [['publish', join(root, 'no-such-file.o'), '--name', 'x', '--version', '1.0.0'], 'no-such-file.o'],
    [['yank', 'runqlat', '--reason', 'x'], 'expected NAME@VERSION'],
    [['kernels', 'upload', `${root}README.md`, '--name', 'readme'], 'kernel upload:'],
    [['kernels', 'frob'], "unknown subcommand 'frob'"],
  ])('%j is unusable input (exit 2)', async (args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
  });

  it('lets a viewer read but not publish or yank', async () => {
    const denied = await cli(['publish', runqlat, '--name', 'runqlat', '--version', '9.0.0', '--token', viewerToken]);
    expect(denied.code).toBe(1);
    expect(denied.err).toContain('forbidden: this needs the publisher role, the token has viewer');
    expect((await cli(['yank', 'runqlat@1.0.0', '--reason', 'no', '--token', viewerToken])).code).toBe(1);
    expect((await cli(['versions', 'runqlat', '--token', viewerToken])).code).toBe(0);
  });
});

describe('versions, kernels and the compat matrix from the CLI', () => {
  it('uploads kernels (tree and trace.dat), lists and diffs them', async () => {
    const linux = await cli(['kernels', 'upload', linuxTree, '--name', 'linux-6-18', '--release', '6.18.44']);
    expect(linux.code).toBe(0);
    expect(linux.out).toMatch(/^kernel profile linux-6-18: 6 formats \(\d+ new\), 6\.18\.44, complete, sha256 [0-9a-f]{64}\n$/);
    // the fixture trees hold a few events of their kernels: --partial says so
    const android = await cli(['kernels', 'upload', androidTree, '--name', 'android-3-10-49', '--partial']);
    expect(android.code).toBe(0);
    expect(android.out).toMatch(/^kernel profile android-3-10-49: \d+ formats \(\d+ new\), release unknown, partial, sha256 /);
    const dat = await cli(['kernels', 'upload', traceDat, '--name', 'recorded', '--json']);
    expect(dat.code).toBe(0);
    expect(JSON.parse(dat.out)).toMatchObject({ profile: { source: 'trace_dat', release: '6.18.44-fc-v782', formats: 2, complete: false } });
    const again = await cli(['kernels', 'upload', linuxTree, '--name', 'copy']);
    expect(again.code).toBe(1);
    expect(again.err).toContain('profile linux-6-18 has the same formats');

    const listed = await cli(['kernels', 'list']);
    expect(listed.out.split('\n')[0]).toMatch(/^NAME\s+RELEASE\s+MACHINE\s+SOURCE\s+EVENTS\s+FORMATS/);
    expect(listed.out.split('\n')[1]).toMatch(/^android-3-10-49\s+-\s+-\s+events_tree\s+partial\s+/);
    expect(listed.out.split('\n')[2]).toMatch(/^linux-6-18\s+6\.18\.44\s+-\s+events_tree\s+complete\s+/);
    expect((JSON.parse((await cli(['kernels', 'list', '--json'])).out) as { name: string }[]).map((p) => p.name)).toEqual(['android-3-10-49', 'linux-6-18', 'recorded']);

    const diff = await cli(['kernels', 'diff', 'android-3-10-49', 'linux-6-18', '--event', 'sched_switch']);
    expect(diff.code).toBe(1);
    expect(diff.out).toContain('sched/sched_switch:\n');
    expect(diff.out).toMatch(/ {2}moved: next_pid .*52.*56/);
    expect(await cli(['kernels', 'diff', 'linux-6-18', 'linux-6-18'])).toMatchObject({ code: 0, out: '6 events with the same format\n' });
    expect((await cli(['kernels', 'diff', 'linux-6-18', 'nope'])).code).toBe(1);
  });

  it('publishes a script: compiled here for --kernel, stored as its artifact, compiled again by the registry; its matrix like any program\'s', async () => {
    const bt = join(scratch, 'wakeups.bt');
    writeFileSync(bt, 'tracepoint:sched:sched_wakeup /args.prio < 120/ { @[args.comm, args.target_cpu] = count(); }\ninterval:s:1 { print(@); clear(@); }\n');
    const r = await cli(['publish', bt, '--name', 'wakeups', '--version', '1.0.0', '--kernel', linuxTree, '--json']);
    expect(r.code).toBe(0);
    expect(r.err).toContain(`publish: ${bt} compiled: 2 programs, 2 maps`);
    const j = JSON.parse(r.out);
    expect(j.version).toMatchObject({ artifactKind: 'script', manifest: { attachPoints: ['sched/sched_wakeup'], fields: [{ field: 'prio', source: 'script', byteOffset: 28 }, { field: 'comm', source: 'script', byteOffset: 8 }, { field: 'target_cpu', source: 'script', byteOffset: 32 }] } });
    expect((await cli(['publish', bt, '--name', 'wakeups', '--version', '1.0.0', '--kernel', linuxTree])).out).toContain('is already published with these bytes');
    const bad = join(scratch, 'bad.bt');
    writeFileSync(bad, 'tracepoint:sched:sched_wakeup { @[args.nope] = count(); }\n');
    const refused = await cli(['publish', bad, '--name', 'bad', '--version', '1.0.0', '--kernel', linuxTree]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain("error: args.nope: sched/sched_wakeup has no field 'nope'");
    await settled();
    const matrix = await cli(['compat', 'wakeups@1.0.0']);
    // 3.10.49 still has `success` before target_cpu: relocated there
    expect(matrix.out).toMatch(/^wakeups@1\.0\.0\s+relocated\s+compatible\s+compatible$/m);
  });

  it('lists versions, yanks one, and shows the matrix of a program as a table', async () => {
    expect((await cli(['publish', forkcomm, '--name', 'forkcomm', '--version', '1.0.0'])).code).toBe(0);
    expect((await cli(['publish', runqlat, '--name', 'forkcomm', '--version', '1.1.0'])).code).toBe(0);
    const yank = await cli(['yank', 'forkcomm@1.0.0', '--reason', 'reads parent_comm inline']);
    expect(yank).toMatchObject({ code: 0, out: 'yanked forkcomm@1.0.0: reads parent_comm inline\n' });
    expect((await cli(['yank', 'forkcomm@1.0.0', '--reason', 'again'])).code).toBe(1);
    const versions = await cli(['versions', 'forkcomm']);
    expect(versions.code).toBe(0);
    const lines = versions.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^VERSION\s+SHA256\s+KIND\s+SIZE\s+PUBLISHED\s+YANKED$/);
    expect(lines[1]).toMatch(/^1\.1\.0\s+[0-9a-f]{12}\s+elf\s+\d+\s+\S+\s+-$/);
    expect(lines[2]).toMatch(/^1\.0\.0\s+.*: reads parent_comm inline$/);
    expect((JSON.parse((await cli(['versions', 'forkcomm', '--json'])).out) as { version: string }[]).map((v) => v.version)).toEqual(['1.1.0', '1.0.0']);
    expect((await cli(['versions', 'nope'])).code).toBe(1);

    const built = await cli(['publish', switchCount, '--name', 'switch-count', '--version', '1.0.0', '--built-against', 'linux-6-18', '--json']);
    expect(built.code).toBe(0);
    expect(JSON.parse(built.out)).toMatchObject({ version: { manifest: { fields: [{ field: 'next_pid', byteOffset: 56 }] } } });
    expect((await cli(['publish', switchCount, '--name', 'switch-count', '--version', '1.0.1', '--built-against', 'nope'])).code).toBe(1);

    await settled();
    const ok = await cli(['compat', 'runqlat']);
    expect(ok.code).toBe(0);
    const table = ok.out.split('\n');
    expect(table[1]).toMatch(/^VERSION\s+android-3-10-49 \(partial\)\s+linux-6-18\s+recorded \(partial\)$/);
    expect(ok.out).toContain("(partial): the profile holds some of its kernel's events only");
    expect(table[2]).toMatch(/^runqlat@1\.0\.0\s+relocated\s+relocated\s+\w+$/);
    const refused = await cli(['compat', 'forkcomm@1.0.0']);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/^forkcomm@1\.0\.0 \(yanked\)\s+compatible\s+incompatible\s+\w+$/m);
    expect(refused.out).toContain('forkcomm@1.0.0 on linux-6-18: incompatible\n  became-dynamic: count_forks:');
    expect(refused.out).toContain('  field sched/sched_process_fork.parent_comm: became __data_loc');
    const json = JSON.parse((await cli(['compat', 'forkcomm', '--json'])).out) as { versions: unknown[]; profiles: unknown[]; cells: unknown[] };
    expect([json.versions.length, json.profiles.length, json.cells.length]).toEqual([2, 3, 6]);
    expect((await cli(['compat', 'nope'])).code).toBe(1);
    expect((await cli(['compat', 'missing.o'])).code).toBe(2);
    // A file path keeps the local meaning (no registry involved).
    const local = await cli(['compat', runqlat, '--kernel', linuxTree]);
    expect(local.code).toBe(0);
    expect(local.out).toContain('module-like, no ABI');
  });
});
