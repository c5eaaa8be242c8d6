import { z } from 'zod';
import { agentStateOf, liveLanguages, type LiveSessionRow, liveStates, sessionState } from '../../data/live.js';
import { idSchema, iso } from '../../schemas.js';

/** An agent's verdict on its own kernel: `compatible`, `relocated` (with the field moves), `incompatible`/`unknown` (with why). */
export const liveVerdictView = z.object({
  status: z.string(),
  changes: z.array(z.string()).optional(),
  reasons: z.array(z.string()).optional(),
});

export const liveAgentView = z.object({
  agentId: idSchema,
  /** The agent's hostname. */
  name: z.string(),
  state: z.enum(liveStates),
  error: z.string().optional(),
  verdict: liveVerdictView.optional(),
  /** Outputs received from it so far. */
  outputs: z.number().int(),
});

export const liveSessionView = z.object({
  id: idSchema,
  language: z.enum(liveLanguages),
  source: z.string(),
  /** What it was started on: one agent, or the agents a selector matched then. */
  target: z.union([z.object({ agentId: idSchema }), z.object({ selector: z.record(z.string(), z.string()) })]),
  /** The email of the member who started it. */
  startedBy: z.string(),
  startedAt: z.string(),
  durationSeconds: z.number().int(),
  endsAt: z.string(),
  stoppedAt: z.string().nullable(),
  state: z.enum(liveStates),
  /** The agent's CPU budget for it, percent of one core. */
  cpuBudgetPercent: z.number().int(),
  agents: z.array(liveAgentView),
});
export type LiveSessionView = z.infer<typeof liveSessionView>;

export function toLiveSessionView(row: LiveSessionRow, now: Date): LiveSessionView {
  return {
    id: row.id,
    language: row.language as LiveSessionView['language'],
    source: row.source,
    target: row.target as LiveSessionView['target'],
    startedBy: row.startedByEmail,
    startedAt: iso(row.startedAt),
    durationSeconds: row.durationSeconds,
    endsAt: iso(row.endsAt),
    stoppedAt: iso(row.stoppedAt),
    state: sessionState(row, now),
    cpuBudgetPercent: row.cpuBudgetPercent,
    agents: row.agents.map((a) => {
      const { state, error } = agentStateOf(row, a, now);
      const verdict = a.verdict === null ? undefined : liveVerdictView.safeParse(a.verdict).data;
      return { agentId: a.agentId, name: a.agent.hostname, state, ...(error !== null ? { error } : {}), ...(verdict ? { verdict } : {}), outputs: a.outputs };
    }),
  };
}
