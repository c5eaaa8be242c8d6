import { createHash } from 'node:crypto';
import { z } from 'zod';
import { type LiveAssignment, liveAgentWakes, liveAssignments, liveLanguages } from '../../data/live.js';
import { idSchema } from '../../schemas.js';
import { agentProcedure } from '../../trpc.js';

/** The longest `agent.waitLive` holds a request (the agent's HTTP timeout is 30 s). */
export const maxLiveWaitHoldMs = 25_000;
/** Requests held at once by this process, all agents together; past it they answer at once. */
const maxHeldTotal = 20_000;
/** The held request of each agent: a second one answers the first at once (one connection per agent). */
const heldByAgent = new Map<string, () => void>();

export const agentWaitLiveInput = z.strictObject({
  /** The `etag` of the last answer: the call waits while the agent's sessions are still that. */
  etag: z.string().max(128).optional(),
  /** How long to hold at most (default and most 25 s; 0 answers at once). */
  waitMs: z.number().int().min(0).max(maxLiveWaitHoldMs).optional(),
});
export const liveAssignmentView = z.object({
  sessionId: idSchema,
  language: z.enum(liveLanguages),
  source: z.string(),
  durationSeconds: z.number().int(),
  /** Milliseconds left by the registry's clock: run for this long (or `durationSeconds`, the less) by the agent's own clock. */
  remainingMs: z.number().int(),
  /** The CPU budget of the session on this node, percent of one core. */
  cpuBudgetPercent: z.number().int(),
  desiredState: z.enum(['running', 'stopped']),
  /** A script naming provider probes: the newest release of each provider the tenant sees, to compile through. */
  providers: z.array(z.object({ name: z.string(), version: z.string(), text: z.string() })).optional(),
});
export const agentWaitLiveOutput = z.object({
  /** True when the sessions are still those of `etag` (the hold ran out, or another call of this agent took over). */
  notModified: z.boolean(),
  etag: z.string(),
  sessions: z.array(liveAssignmentView),
});

function etagOf(sessions: LiveAssignment[]): string {
  const h = createHash('sha256');
  for (const s of sessions) h.update(`${s.sessionId}:${s.desiredState};`);
  return `"live-${h.digest('hex').slice(0, 32)}"`;
}

/**
 * `agent.waitLive` (agent): the agent's live sessions, as a long poll — the fast path from Run to
 * the agent (the normal `agent.poll` keeps its interval). With the `etag` of its last answer the
 * call is held until a session of this agent starts or stops (this process wakes it at once; one
 * started through another replica within the audit sync, 5 s) or 25 s pass. One held call per
 * agent: a second answers the first at once; past 20,000 held calls in all, calls answer at once.
 */
export const agentWaitLive = agentProcedure
  .input(agentWaitLiveInput)
  .output(agentWaitLiveOutput)
  .query(async ({ ctx, input, signal }) => {
    const { agentId } = ctx.principal;
    ctx.deps.fleet.markSeen(agentId);
    let sessions = await liveAssignments(ctx.db, ctx.tenantId, agentId, ctx.deps.now());
    let etag = etagOf(sessions);
    const holdMs = input.waitMs ?? maxLiveWaitHoldMs;
    if (input.etag !== etag || holdMs === 0 || heldByAgent.size >= maxHeldTotal) {
      return { notModified: input.etag === etag, etag, sessions };
    }
    heldByAgent.get(agentId)?.();
    const deadline = Date.now() + holdMs;
    let release!: () => void;
    let woken = false;
    let superseded = false;
    const wake = () => {
      woken = true;
      release?.();
    };
    const supersede = () => {
      superseded = true;
      release?.();
    };
    heldByAgent.set(agentId, supersede);
    liveAgentWakes.on(agentId, wake);
    try {
      while (!superseded && !signal?.aborted) {
        const left = deadline - Date.now();
        if (left <= 0) break;
        if (!woken) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, left);
            release = () => {
              clearTimeout(timer);
              resolve();
            };
            signal?.addEventListener('abort', release, { once: true });
          });
        }
        if (!woken) continue;
        woken = false;
        sessions = await liveAssignments(ctx.db, ctx.tenantId, agentId, ctx.deps.now());
        etag = etagOf(sessions);
        if (etag !== input.etag) return { notModified: false, etag, sessions };
      }
      return { notModified: true, etag, sessions };
    } finally {
      liveAgentWakes.off(agentId, wake);
      if (heldByAgent.get(agentId) === supersede) heldByAgent.delete(agentId);
    }
  });
