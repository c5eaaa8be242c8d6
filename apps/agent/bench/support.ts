// What the agent's benchmarks share: the machine they ran on, percentiles, a registry to run
// against (in this process on PGlite, or `probeyard serve` in a child on PostgreSQL), the CLI
// in-process, and the agent's own binary in a child process.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { type CliIo, run as runCli } from '@probeyard/cli';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export function machine(): string {
  const c = cpus();
  return `${c.length} × ${c[0]?.model.trim() ?? '?'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} (other engineers share the machine)`;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

export async function cli(args: string[]): Promise<{ code: number; out: string; err: string; last: string }> {
  const io: CliIo & { out: string; err: string } = {
    out: '',
    err: '',
    stdout: (t) => {
      io.out += t;
    },
    stderr: (t) => {
      io.err += t;
    },
    readStdin: async () => new Uint8Array(),
    readFile: async (path) => new Uint8Array(readFileSync(path)),
    writeFile: async () => {},
  };
  const code = await runCli(args, io);
  return { code, out: io.out, err: io.err, last: io.out.trimEnd().split('\n').at(-1) ?? '' };
}

/** The built agent (`pnpm build`), as operators run it. */
export const agentBin = fileURLToPath(new URL('../bin/probeyard-agent.js', import.meta.url));
export const cliBin = fileURLToPath(new URL('../../cli/bin/probeyard.js', import.meta.url));

export function requireBuilt(): void {
  for (const f of [fileURLToPath(new URL('../dist/main.js', import.meta.url))]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: run pnpm build first`);
  }
}

export interface Child {
  child: ChildProcess;
  out: () => string;
  lines: (cb: (line: string) => void) => void;
  exited: Promise<number | string | null>;
}

export function start(cmd: string, args: string[], env: Record<string, string | undefined> = {}): Child {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let partial = '';
  const listeners: ((line: string) => void)[] = [];
  const onData = (c: Buffer) => {
    const s = c.toString();
    if (out.length < 1 << 20) out += s;
    partial += s;
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) for (const cb of listeners) cb(l);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | string | null>((r) => child.once('exit', (code, signal) => r(signal ?? code)));
  return { child, out: () => out, lines: (cb) => listeners.push(cb), exited };
}

export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, ms = 300_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Resident set size of a process (`VmRSS` of /proc/PID/status), bytes. */
export function rssOf(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

/** CPU seconds a process used (utime + stime of /proc/PID/stat). */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}
