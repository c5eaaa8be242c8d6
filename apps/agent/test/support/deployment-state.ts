// What the end-to-end tests wait for and read of a deployment (providers.test.ts,
// providers-c.test.ts): the program's compat cell on the one node's profile, the deployment's
// targets as `deployments show --json` gives them, its final snapshot, and the agent's provider
// series in /metrics.
import type { Agent } from '../../src/agent.js';
import { latest } from './agents.js';
import type { OutputRow, TestRegistry } from './registry.js';

export type ShownTarget = {
  id: string;
  status: string;
  reason: string | null;
  via: string[];
  statusDetail: { code?: string; verdict?: string; via?: string[]; refusal?: { kind: string; text: string }[] } | null;
};

async function cells(reg: TestRegistry, name: string) {
  return (await reg.api().compat.matrix.query({ name })).cells;
}
type Cell = Awaited<ReturnType<typeof cells>>[number];

/**
 * The one cell of `name`'s matrix once the compat job computed it and `ok` holds of it (undefined
 * before: for `waitFor`).
 */
export async function onlyCell(reg: TestRegistry, name: string, ok: (c: Cell) => boolean = () => true): Promise<Cell | undefined> {
  const all = await cells(reg, name);
  const c = all[0];
  return c && all.length === 1 && c.engine !== '' && ok(c) ? c : undefined;
}

/** The deployment's targets, as the CLI shows them. */
export async function shownTargets(reg: TestRegistry, deploymentId: string): Promise<ShownTarget[]> {
  return (JSON.parse((await reg.cli(['deployments', 'show', deploymentId, '--json'])).out) as { targets: ShownTarget[] }).targets;
}

/** The deployment's first target once it is in `status` (undefined before: for `waitFor`). */
export async function targetIn(reg: TestRegistry, deploymentId: string, status: string): Promise<ShownTarget | undefined> {
  const t = (await shownTargets(reg, deploymentId))[0];
  return t?.status === status ? t : undefined;
}

/**
 * The deployment's latest map snapshot once it counts `events` records and the agent's one pass
 * over its recording is over (undefined before: for `waitFor`).
 */
export async function finalSnapshot(reg: TestRegistry, deploymentId: string, agent: Agent, events: number): Promise<OutputRow | undefined> {
  const s = [...latest(await reg.outputs(deploymentId), 'map_snapshot').values()][0];
  return s && s.eventsSeen === events && agent.feed.passes === 1 ? s : undefined;
}

/** The lines of `probeyard_agent_target_provider_info` in the agent's /metrics text. */
export async function providerSeries(agent: Agent): Promise<string[]> {
  return (await agent.metrics.text()).split('\n').filter((l) => l.startsWith('probeyard_agent_target_provider_info{'));
}
