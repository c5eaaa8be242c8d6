import { z } from 'zod';
import { getLiveSession, liveChanges, liveOutputKinds, liveOutputsAfter, parseLiveCursor, sessionFinished } from '../../data/live.js';
import { idSchema, iso } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';

/** The longest a `live.outputs` call waits for something new. */
export const maxLiveWaitMs = 10_000;
/** Outputs in one answer at most (the next call goes on from the cursor). */
const pageSize = 200;
/** While waiting, the database is read again this often (outputs stored by another replica). */
const recheckMs = 1000;
/** Calls of one tenant held waiting at once; more answer at once (as a plain read). */
const maxHeldPerTenant = 64;
const held = new Map<string, number>();

export const liveOutputsInput = z.strictObject({
  sessionId: idSchema,
  /** The `cursor` of the previous answer (none: from the start). */
  after: z.string().max(1000).optional(),
  /** Wait at most this long for something newer than `after` (default 0: answer at once). */
  waitMs: z.number().int().min(0).max(maxLiveWaitMs).optional(),
});
export const liveOutputsOutput = z.object({
  outputs: z.array(
    z.object({
      agentId: idSchema,
      /** Per agent, from 0. */
      seq: z.number().int(),
      kind: z.enum(liveOutputKinds),
      /** When the registry received it. */
      at: z.string(),
      /** A `map_snapshot`, `events` or `counters` payload (docs/OUTPUTS.md); a script's printf lines are `printk` events. */
      payload: z.json(),
    }),
  ),
  /** Give it as `after` to the next call. */
  cursor: z.string(),
  /** No more outputs will come: every agent reported its end (or the grace after the end passed) and all were read. */
  ended: z.boolean(),
});

/**
 * `live.outputs` (viewer): a long poll over a session's outputs. Answers as soon as anything newer
 * than `after` is stored, or when `waitMs` passes (then with none), or at once when the session is
 * over. Outputs of one agent come in its sequence order.
 */
export const liveOutputs = userProcedure('viewer')
  .input(liveOutputsInput)
  .output(liveOutputsOutput)
  .query(async ({ ctx, input, signal }) => {
    let session = await getLiveSession(ctx.db, ctx.tenantId, input.sessionId);
    const cursor = parseLiveCursor(input.after, session.agents.length);
    const deadline = Date.now() + (input.waitMs ?? 0);
    let changed = false;
    let wake: (() => void) | undefined;
    const onChange = (e: { tenantId: string }) => {
      if (e.tenantId !== ctx.tenantId) return;
      changed = true;
      wake?.();
    };
    liveChanges.on(session.id, onChange);
    const heldNow = held.get(ctx.tenantId) ?? 0;
    const mayWait = heldNow < maxHeldPerTenant;
    held.set(ctx.tenantId, heldNow + 1);
    try {
      for (;;) {
        changed = false;
        // finished is read before the outputs: outputs stored after it are read in this page or the next
        const finished = sessionFinished(session, ctx.deps.now());
        const page = await liveOutputsAfter(ctx.db, ctx.tenantId, session, cursor, pageSize);
        const ended = finished && page.outputs.length < pageSize;
        const left = deadline - Date.now();
        if (page.outputs.length > 0 || ended || left <= 0 || !mayWait || signal?.aborted) {
          return {
            outputs: page.outputs.map((o) => ({ agentId: o.agentId, seq: o.seq, kind: o.kind as (typeof liveOutputKinds)[number], at: iso(o.receivedAt), payload: o.payload as never })),
            cursor: page.cursor.join('.'),
            ended,
          };
        }
        if (!changed) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.min(left, recheckMs));
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
            signal?.addEventListener('abort', wake, { once: true });
          });
          wake = undefined;
        }
        session = await getLiveSession(ctx.db, ctx.tenantId, input.sessionId);
      }
    } finally {
      liveChanges.off(session.id, onChange);
      const n = (held.get(ctx.tenantId) ?? 1) - 1;
      if (n <= 0) held.delete(ctx.tenantId);
      else held.set(ctx.tenantId, n);
    }
  });
