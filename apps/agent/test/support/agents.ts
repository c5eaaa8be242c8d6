// Helpers of the agent's integration tests: enrolled agents in temp state folders, in-process or
// as child processes (for signals), and waiting for what the registry stored.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, type AgentOptions } from '../../src/agent.js';
import { enroll } from '../../src/enroll.js';
import type { Labels } from '../../src/labels.js';
import { jsonLogger } from '../../src/log.js';
import type { OutputRow, TestRegistry } from './registry.js';

export const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
export const recordingsDir = join(repoRoot, 'examples/recordings');
export const smallRecording = join(recordingsDir, 'sched-small.dat');
export const examplesDir = join(repoRoot, 'examples');

export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, ms = 90_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Enrols a new agent (a token of the tenant's owner with `labels`) into a fresh state folder. */
export async function enrolled(reg: TestRegistry, hostname: string, labels: Labels, feed?: string): Promise<{ state: string; agentId: string }> {
  const made = await reg.cli(['agents', 'enroll-token', ...Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`])]);
  if (made.code !== 0) throw new Error(`enroll-token: ${made.err}`);
  const state = mkdtempSync(join(tmpdir(), `probeyard-agent-${hostname}-`));
  const r = await enroll({ registry: reg.url, token: made.last, state, hostname, ...(feed ? { feed } : {}) });
  return { state, agentId: r.agentId };
}

/** Fast intervals for tests. */
export const quick: Partial<AgentOptions> = {
  pollIntervalMs: 250,
  snapshotIntervalMs: 250,
  statusIntervalMs: 1000,
  backoff: { baseMs: 100, capMs: 1000 },
};

export async function startAgent(options: AgentOptions, logs?: string[]): Promise<Agent> {
  return Agent.start({ ...quick, log: jsonLogger({ write: (l) => logs?.push(l), minLevel: 'debug' }), ...options });
}

/** The latest batch of `kind` of each target, by sequence. */
export function latest(rows: readonly OutputRow[], kind: OutputRow['kind']): Map<string, OutputRow> {
  const out = new Map<string, OutputRow>();
  for (const r of rows) {
    if (r.kind !== kind) continue;
    const prev = out.get(r.targetId);
    if (!prev || prev.sequence < r.sequence) out.set(r.targetId, r);
  }
  return out;
}

// The tsx loader of this package (not the tsx CLI, whose grandchild a SIGKILL would not reach).
const tsxLoader = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const mainTs = fileURLToPath(new URL('../../src/bin-main.ts', import.meta.url));

export interface AgentProcess {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<NodeJS.Signals | number | null>;
}

/** `probeyard-agent ARGS` in a child process, from the sources. */
export function spawnAgent(args: string[], env: Record<string, string> = {}): AgentProcess {
  const child = spawn(process.execPath, ['--import', tsxLoader, '--conditions=@probeyard/source', mainTs, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (c) => {
    err += c;
  });
  child.stdout?.on('data', (c) => {
    err += c;
  });
  const exited = new Promise<NodeJS.Signals | number | null>((r) => child.once('exit', (code, signal) => r(signal ?? code)));
  return { child, stderr: () => err, exited };
}
