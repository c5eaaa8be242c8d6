// probeyard up: the whole product on one machine (what `npm start` runs): the registry in this
// process, the web app and one local agent as child processes, and on the first start a demo tenant
// with the program library published, kernel profiles uploaded and the library deployed to the agent.
//
// The web app and the agent are other apps: they are started from their own binaries in this
// repository (never imported), in process groups of their own, so that Ctrl-C reaches only this
// process and it can stop them in order: agent first (spool flushed, tracefs instance removed),
// then the web app, then the registry (database closed).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, type WriteStream, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findTracefs } from '@probeyard/formats/node';
import type * as RegistryServer from '@probeyard/registry/server';
import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { defaultDataDir, parseOptions, type RegistryClient, registryClient } from '../registry.js';
import { readProfileUpload } from './kernels.js';
import { loadRegistryServer, registryFailure } from './serve.js';

/** The repository root: `src/commands/up.ts` and `dist/commands/up.js` are four levels below it. */
export function repositoryRoot(): string {
  return fileURLToPath(new URL('../../../../', import.meta.url));
}

const help = `usage: probeyard up [--port P] [--web-port P] [--host H] [--data DIR] [--feed auto|live|FILE.dat]
                    [--cpu-budget PERCENT] [--no-demo] [--no-agent]

Runs the whole product on this machine (this is what \`npm start\` runs): the registry on the
embedded database in the data folder (PostgreSQL with DATABASE_URL=postgres://…), the web app, and
one local agent. The agent reads the live tracefs feed when it runs as root with tracefs available,
otherwise it replays a bundled recording in a loop at its recorded pace; it says which, and why.

On the first start (an empty data folder) it also makes a demo tenant whose owner's password is
generated and printed once, uploads the program library's kernel profiles, publishes the library
(library/programs) and deploys it to the local agent. Later starts reuse the data.

Ctrl-C (SIGINT) or SIGTERM stops everything cleanly: the agent first, then the web app, then the
registry. Logs of the three parts are in DIR/logs/.

options:
  --port P        the registry's port (default 4700; 0 picks a free one)
  --web-port P    the web app's port (default 3000; 0 picks a free one)
  --host H        address both listen on (default 127.0.0.1)
  --data DIR      data folder (default .data/ at the repository root, or PROBEYARD_DATA)
  --feed F        the agent's feed: auto (default), live, or a trace.dat to replay in a loop
  --cpu-budget P  the local agent's CPU budget per program, in percent of one core over 10 s
                  (default 25: a workstation runs ten programs on a busy live feed; a production
                  agent's default is 5). A program over it is throttled, then stopped
  --no-demo       do not make the demo tenant on a first start
  --no-agent      do not run the local agent`;

/** What a first start leaves in the data folder (never the password). */
interface DemoState {
  v: 1;
  tenant: string;
  email: string;
  /** `enrolled` once the agent holds its credential; `done` once the library is deployed. */
  step: 'enrolled' | 'done';
  programs: string[];
  createdAt: string;
}

/** Children of a previous run, so that a start after a crash can stop what it left behind. */
interface ChildrenFile {
  pids: number[];
}

export const demoTenant = 'demo';
export const demoEmail = 'demo@probeyard.local';
/** The label the local agent carries and the demo deployments select. */
export const demoSelector = 'node=local';
export const demoRecording = 'library/recordings/procs.dat';

interface Feed {
  /** The `--feed` the agent gets. */
  args: string[];
  /** One line for the terminal: which feed, and why. */
  why: string;
}

export function chooseFeed(root: string, option: string | undefined): Feed {
  const replay = (file: string, why: string): Feed => ({ args: ['--feed', file, '--loop', '--pace', 'recorded'], why: `replaying ${relative(root, file) || file} in a loop at its recorded pace: ${why}` });
  if (option !== undefined && option !== 'auto') {
    if (option === 'live') return { args: ['--feed', 'live'], why: 'the live tracefs feed (--feed live)' };
    if (!existsSync(option)) throw new CliError(`--feed ${option}: no such file`);
    return replay(option, '--feed given');
  }
  const recording = join(root, demoRecording);
  if (process.getuid?.() !== 0) return replay(recording, `not root (uid ${process.getuid?.()}), and the live feed needs root`);
  const tracefs = findTracefs();
  if (!tracefs) return replay(recording, 'no tracefs is mounted (/sys/kernel/tracing); mount one with `mount -t tracefs nodev /sys/kernel/tracing` for the live feed');
  return { args: ['--feed', 'live'], why: `the live tracefs feed: running as root with tracefs at ${tracefs.path}` };
}

function portOption(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const port = Number(text);
  if (!(Number.isInteger(port) && port >= 0 && port < 65536)) throw new CliError(`--${name}: not a port: ${text}`);
  return port;
}

function isEmptyFolder(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0;
}

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Is `pid` alive and a node process running one of our binaries? (A recycled pid is left alone.) */
function isOurChild(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return /probeyard-(agent|web)\.js/.test(cmdline);
  } catch {
    return false;
  }
}

/** A child process of ours with its log file and its exit. */
class Child {
  readonly exited: Promise<number | null>;
  private stopping = false;
  constructor(
    readonly name: string,
    readonly process: ChildProcess,
    readonly log: WriteStream,
  ) {
    this.exited = new Promise((resolve) => process.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))));
    process.stdout?.pipe(log, { end: false });
    process.stderr?.pipe(log, { end: false });
  }
  /** Resolves with the first line of output matching `re` (or rejects when the process exits first). */
  waitFor(re: RegExp, timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      let buffered = '';
      const onData = (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          if (re.test(line)) {
            done();
            resolve(line);
            return;
          }
        }
      };
      const onExit = (code: number | null) => {
        done();
        reject(new CliError(`${this.name} exited (${code}) before it was ready; see its log: ${this.log.path}`, ExitCode.refused));
      };
      const timer = setTimeout(() => {
        done();
        reject(new CliError(`${this.name} was not ready within ${timeoutMs / 1000} s; see its log: ${this.log.path}`, ExitCode.refused));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.process.stdout?.off('data', onData);
        this.process.stderr?.off('data', onData);
        this.process.off('exit', onExit);
      };
      this.process.stdout?.on('data', onData);
      this.process.stderr?.on('data', onData);
      this.process.once('exit', onExit);
    });
  }
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  async stop(graceMs: number): Promise<number | null> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return this.exited;
    if (!this.stopping) {
      this.stopping = true;
      this.process.kill('SIGTERM');
    }
    const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The agent's V8 settings (its binary's `#!` line: apps/agent/README.md), which `node FILE` does not read. */
const agentNodeFlags = ['--max-semi-space-size=2', '--optimize-for-size'];

function startChild(name: string, script: string, args: string[], logs: string, env: NodeJS.ProcessEnv = process.env, nodeFlags: string[] = []): Child {
  if (!existsSync(script)) throw new CliError(`${name}: ${script} is missing: run \`pnpm build\` (npm start does) first`, ExitCode.refused);
  const log = createWriteStream(join(logs, `${name}.log`), { flags: 'a' });
  log.write(`--- ${new Date().toISOString()} ${name} ${args.join(' ')}\n`);
  // A process group of its own (detached): Ctrl-C reaches only `up`, which stops the parts in order.
  const child = spawn(process.execPath, [...nodeFlags, script, ...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
  return new Child(name, child, log);
}

/** Runs `probeyard-agent enroll` to completion. */
async function enrollAgent(root: string, logs: string, registryUrl: string, token: string, stateDir: string, feed: Feed): Promise<void> {
  const feedArg = feed.args.slice(0, 2);
  const child = startChild('agent-enroll', join(root, 'apps/agent/bin/probeyard-agent.js'), ['enroll', '--registry', registryUrl, '--state', stateDir, '--hostname', 'local', ...feedArg], logs, {
    ...process.env,
    PROBEYARD_ENROLL_TOKEN: token,
  });
  const code = await child.exited;
  if (code !== 0) throw new CliError(`the local agent could not enrol (exit ${code}); see ${child.log.path}`, ExitCode.refused);
}

const libraryVersion = '1.0.0';

interface CatalogEntry {
  name: string;
  summary?: string;
}

/** The demo: tenant, owner password, kernel profiles, the library published; returns the password. */
async function seedDemo(io: CliIo, root: string, registry: RegistryServer.RunningRegistry, admin: string): Promise<{ password: string; owner: RegistryClient; programs: string[] }> {
  const made = await registryClient(registry.url, admin).tenant.create.mutate({ name: demoTenant, ownerEmail: demoEmail });
  const owner = registryClient(registry.url, made.ownerToken);
  const password = randomBytes(15).toString('base64url');
  await owner.auth.setPassword.mutate({ newPassword: password });
  const kernels = join(root, 'library/kernels');
  const kernelIds = readdirSync(kernels, { withFileTypes: true }).filter((d) => d.isDirectory() && existsSync(join(kernels, d.name, 'events')));
  for (const k of kernelIds) {
    const data = await readProfileUpload(io, join(kernels, k.name, 'events'));
    await owner.kernel.upload.mutate({ name: k.name, ...data });
  }
  io.stderr(`up: ${kernelIds.length} kernel profiles uploaded (library/kernels)\n`);
  const catalog = readJson<{ programs: CatalogEntry[] }>(join(root, 'library/catalog.json'));
  const summaries = new Map((catalog?.programs ?? []).map((p) => [p.name, p.summary ?? '']));
  const objects = readdirSync(join(root, 'library/programs'))
    .filter((f) => f.endsWith('.o'))
    .sort();
  const programs: string[] = [];
  for (const file of objects) {
    const name = file.slice(0, -2);
    const bytes = readFileSync(join(root, 'library/programs', file));
    await owner.program.publish.mutate({
      name,
      version: libraryVersion,
      artifact: bytes.toString('base64'),
      description: (summaries.get(name) ?? '').slice(0, 500),
      tags: ['library'],
    });
    programs.push(name);
  }
  io.stderr(`up: ${programs.length} library programs published\n`);
  return { password, owner, programs };
}

export const upCommand: Command = {
  name: 'up',
  summary: 'run the whole product here: registry, web app and a local agent (what npm start runs)',
  help,
  async run(args: string[], io: CliIo) {
    const { values, positionals } = parseOptions(args, {
      port: { type: 'string' },
      'web-port': { type: 'string' },
      host: { type: 'string' },
      data: { type: 'string' },
      feed: { type: 'string' },
      'cpu-budget': { type: 'string' },
      'no-demo': { type: 'boolean' },
      'no-agent': { type: 'boolean' },
    });
    if (positionals.length > 0) throw new CliError(`unexpected argument '${positionals[0]}'\n\n${help}`);
    const started = Date.now();
    const root = repositoryRoot();
    const port = portOption('port', values.port, 4700);
    const webPort = portOption('web-port', values['web-port'], 3000);
    const host = values.host ?? '127.0.0.1';
    const dataDir = values.data ?? defaultDataDir();
    const agentOn = !values['no-agent'];
    const cpuBudget = values['cpu-budget'] ?? '25';
    if (!(Number(cpuBudget) > 0 && Number(cpuBudget) <= 100)) throw new CliError(`--cpu-budget: not a percentage in (0, 100]: ${cpuBudget}`);
    const feed = agentOn ? chooseFeed(root, values.feed) : undefined;
    const firstStart = isEmptyFolder(dataDir);
    const logs = join(dataDir, 'logs');
    mkdirSync(logs, { recursive: true, mode: 0o700 });

    // Children a crashed run left behind hold the ports and the agent's state: stop them first.
    const childrenPath = join(dataDir, 'up-children.json');
    for (const pid of readJson<ChildrenFile>(childrenPath)?.pids ?? []) {
      if (!isOurChild(pid)) continue;
      io.stderr(`up: stopping pid ${pid}, left running by an earlier start\n`);
      try {
        process.kill(-pid, 'SIGTERM');
      } catch {
        process.kill(pid, 'SIGTERM');
      }
    }

    const server = await loadRegistryServer();
    io.stderr(`up: starting the registry on ${process.env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : `the embedded database in ${dataDir}`}${firstStart ? ' (a first start initialises it: up to a minute)' : ''}\n`);
    const registryLog = createWriteStream(join(logs, 'registry.log'), { flags: 'a' });
    let registry: RegistryServer.RunningRegistry;
    try {
      registry = await server.startRegistry({
        dataDir,
        databaseUrl: process.env.DATABASE_URL,
        port,
        host,
        // The web app's server (started below, on this machine) forwards each browser's address;
        // it reaches the registry over loopback. Other local callers send no X-Forwarded-For.
        trustedProxies: ['127.0.0.1', '::1'],
        logger: (entry) => registryLog.write(`${JSON.stringify(entry)}\n`),
      });
    } catch (err) {
      throw registryFailure(err) ?? err;
    }
    io.stderr(`up: registry on ${registry.url}\n`);

    const children: Child[] = [];
    const remember = () => writeFileSync(childrenPath, `${JSON.stringify({ pids: children.map((c) => c.process.pid).filter((p): p is number => p !== undefined) } satisfies ChildrenFile)}\n`);
    let stopping: Promise<number> | undefined;
    const stopAll = (why: string): Promise<number> => {
      stopping ??= (async () => {
        io.stderr(`up: ${why}: stopping the agent, then the web app, then the registry\n`);
        let code: number = ExitCode.ok;
        for (const name of ['agent', 'web']) {
          const child = children.find((c) => c.name === name);
          if (!child) continue;
          const exit = await child.stop(20_000);
          io.stderr(`up: ${name} stopped (exit ${exit})\n`);
          if (exit !== 0) code = ExitCode.refused;
        }
        await registry.close();
        registryLog.end();
        for (const c of children) c.log.end();
        writeFileSync(childrenPath, '{"pids":[]}\n');
        io.stderr('up: registry stopped; the data stays in its folder for the next start\n');
        return code;
      })();
      return stopping;
    };
    const signalled = new Promise<number>((resolve) => {
      // Every signal is handled (a second Ctrl-C must not kill this process while it stops the
      // parts in order: that would orphan them); the first one starts the stop.
      const on = (signal: NodeJS.Signals) => {
        if (stopping) {
          io.stderr(`up: ${signal} again: already stopping\n`);
          return;
        }
        stopAll(`${signal}`).then(resolve, () => resolve(ExitCode.refused));
      };
      process.on('SIGINT', on);
      process.on('SIGTERM', on);
    });
    // If this process ends some other way, its children must not outlive it.
    process.once('exit', () => {
      for (const c of children) if (c.process.exitCode === null && c.process.pid) c.process.kill('SIGTERM');
    });

    try {
      let credentials: { email: string; password: string } | undefined;
      const demoPath = join(dataDir, 'demo.json');
      let demo = readJson<DemoState>(demoPath);
      let owner: RegistryClient | undefined;
      const agentState = join(dataDir, 'agent');
      if (firstStart && !values['no-demo']) {
        const admin = readFileSync(join(dataDir, 'admin-credential'), 'utf8').trim();
        const seeded = await seedDemo(io, root, registry, admin);
        credentials = { email: demoEmail, password: seeded.password };
        owner = seeded.owner;
        demo = { v: 1, tenant: demoTenant, email: demoEmail, step: 'enrolled', programs: seeded.programs, createdAt: new Date().toISOString() };
        if (agentOn && feed) {
          const t = await owner.agent.createEnrollmentToken.mutate({ labels: { node: 'local' }, expiresInMinutes: 10 });
          await enrollAgent(root, logs, registry.url, t.enrollmentToken, agentState, feed);
          io.stderr('up: the local agent enrolled (label node=local)\n');
        }
        writeFileSync(demoPath, `${JSON.stringify(demo, null, 2)}\n`);
      }

      const web = startChild('web', join(root, 'apps/web/bin/probeyard-web.js'), ['--registry', registry.url, '--port', String(webPort), '--host', host], logs);
      children.push(web);
      remember();
      let agent: Child | undefined;
      if (agentOn && feed) {
        if (!existsSync(join(agentState, 'credential.json'))) {
          io.stderr(`up: no local agent is enrolled in ${agentState}; start once with an empty data folder, or enrol one: probeyard agents enroll-token, then probeyard-agent enroll --state ${agentState}\n`);
        } else {
          io.stderr(`up: agent: ${feed.why}\n`);
          // --registry: this start's registry may listen on another port than the one it enrolled with.
          agent = startChild('agent', join(root, 'apps/agent/bin/probeyard-agent.js'), ['run', '--state', agentState, '--registry', registry.url, ...feed.args, '--snapshot-interval', '2', '--poll-interval', '2', '--cpu-budget', cpuBudget], logs, process.env, agentNodeFlags);
          children.push(agent);
          remember();
        }
      }
      const webLine = await web.waitFor(/listening on/, 120_000);
      const webUrl = /listening on (\S+)/.exec(webLine)?.[1] ?? `http://${host}:${webPort}`;
      if (owner && demo && demo.step !== 'done') {
        for (const name of demo.programs) await owner.deployment.create.mutate({ name, version: libraryVersion, selector: demoSelector });
        demo.step = 'done';
        writeFileSync(demoPath, `${JSON.stringify(demo, null, 2)}\n`);
        io.stderr(`up: ${demo.programs.length} library programs deployed to ${demoSelector}\n`);
      }
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const lines = [`up: ready in ${seconds} s`, `  web app:   ${webUrl}`, `  registry:  ${registry.url}`];
      if (credentials) {
        lines.push(`  sign in:   ${credentials.email}`, `  password:  ${credentials.password}   (shown once: keep it)`);
      } else if (demo) {
        lines.push(`  sign in:   ${demo.email} with the password printed on the first start`);
      }
      lines.push(`  logs:      ${logs}`, '  Ctrl-C stops everything.');
      io.stdout(`${lines.join('\n')}\n`);
      // A part that dies on its own is said at once; the rest keeps running until Ctrl-C.
      for (const c of children) {
        void c.exited.then((code) => {
          if (!stopping) io.stderr(`up: ${c.name} exited on its own (exit ${code}); see ${c.log.path}\n`);
        });
      }
      return await signalled;
    } catch (err) {
      await stopAll('start failed');
      throw err;
    }
  },
};
