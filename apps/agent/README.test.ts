// Runs the usage example of README.md line by line against a registry of its own: `probeyard`
// commands through the CLI in-process, `probeyard-agent enroll` through main(), `probeyard-agent
// run` in a process of its own (stopped with SIGTERM), and checks that the last command shows the
// agent's target running.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { main } from './src/main.js';
import { type AgentProcess, repoRoot, spawnAgent, waitFor } from './test/support/agents.js';
import { startTestRegistry, type TestRegistry } from './test/support/registry.js';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 600_000 });

let reg: TestRegistry | undefined;
let agent: AgentProcess | undefined;
let state: string | undefined;
afterAll(async () => {
  if (agent && agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
  await reg?.close();
  if (state) rmSync(state, { recursive: true, force: true });
});

it('README usage example runs as written', async () => {
  const readme = readFileSync(join(import.meta.dirname, 'README.md'), 'utf8');
  const block = /```sh\n([\s\S]*?)```/.exec(readme)![1]!;
  const lines = block.trim().split('\n');
  expect(lines).toHaveLength(6);
  reg = await startTestRegistry();
  state = mkdtempSync(join(tmpdir(), 'probeyard-readme-node-'));
  const vars: Record<string, string> = { URL: reg.url, '/tmp/node-1': state };
  let last = '';
  for (const line of lines) {
    const words = line
      .split(/\s+/)
      .map((w) => vars[w] ?? w)
      .map((w) => (w.startsWith('examples/') ? join(repoRoot, w) : w));
    const [command, ...args] = words;
    if (command === 'probeyard') {
      const r = await reg.cli(args);
      expect(r.code, `${line}: ${r.err}`).toBe(0);
      last = r.out;
      if (args[0] === 'agents') vars.TOKEN = r.last;
      if (args[0] === 'deploy') vars.DEPLOYMENT = r.last;
    } else if (command === 'probeyard-agent' && args[0] === 'enroll') {
      const out: string[] = [];
      expect(await main(args, { out: (s) => out.push(s), err: (s) => out.push(s) })).toBe(0);
      expect(out.join('')).toMatch(/^enrolled agent [0-9a-f-]{36} \(.+\) with labels .*env=demo/);
      expect(out.join('')).not.toContain(vars.TOKEN);
    } else if (command === 'probeyard-agent' && args[0] === 'run') {
      agent = spawnAgent(args);
    } else throw new Error(`README line not understood: ${line}`);
  }
  // the last line (`deployments show`) shows the target running once the agent has loaded it
  const shown = await waitFor('the target running', async () => {
    const r = await reg!.cli(['deployments', 'show', vars.DEPLOYMENT!]);
    return /\brunning\s+running\b/.test(r.out) ? r.out : undefined;
  });
  expect(last).toContain('switchcomm@1.0.0');
  expect(shown).toContain('env=demo');
  agent!.child.kill('SIGTERM');
  expect(await agent!.exited).toBe(0);
});
