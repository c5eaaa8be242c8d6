import { z } from 'zod';
import { getLiveSession, liveAgentWakes, liveLanguages, startLiveSession } from '../../data/live.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { selectorSchema } from '../deployment/deployment-view.js';
import { liveSessionView, toLiveSessionView } from './live-view.js';

/** The largest program text of a live session (a script or an assembly file). */
export const maxLiveSourceBytes = 64 * 1024;

export const liveStartInput = z.strictObject({
  language: z.enum(liveLanguages),
  source: z
    .string()
    .min(1, 'the program is empty')
    .refine((s) => Buffer.byteLength(s) <= maxLiveSourceBytes, `at most ${maxLiveSourceBytes} bytes`),
  /** One agent by id, or every agent whose labels include each pair of `k=v,k2=v2`. */
  target: z.union([z.strictObject({ agentId: idSchema }), z.strictObject({ selector: selectorSchema })]),
  /** Seconds (default 10), at most the tenant's limit (default 300). */
  durationSeconds: z.number().int().min(1).max(86_400).optional(),
});
export const liveStartOutput = z.object({ session: liveSessionView });

/**
 * `live.start` (publisher and above; a viewer is FORBIDDEN): runs a program on one agent, or the
 * agents a selector matches, now, for `durationSeconds`. The program is checked as publish checks
 * one, on the verifier's workers (a script parsed, assembly assembled and verified); each agent
 * compiles a script for its own kernel, relocates, verifies and runs it, and ends it itself at the
 * duration. Refusals: no agent matches, too many sessions running, a duration over the limit, a
 * program that does not parse or verify.
 */
export const liveStart = userProcedure('publisher')
  .input(liveStartInput)
  .output(liveStartOutput)
  .mutation(async ({ ctx, input }) => {
    await ctx.deps.verifier.checkLive(ctx.tenantId, input.language, input.source);
    const p = ctx.principal;
    const now = ctx.deps.now();
    const made = await ctx.db.$transaction(
      (tx) =>
        startLiveSession(tx, {
          tenantId: ctx.tenantId,
          userId: p.userId,
          email: p.email,
          language: input.language,
          source: input.source,
          target: input.target,
          durationSeconds: input.durationSeconds,
          now,
          ceilings: ctx.deps.liveCeilings,
        }),
      { timeout: 30_000, maxWait: 30_000 },
    );
    // agents holding `agent.waitLive` learn it now
    for (const a of made.agentIds) liveAgentWakes.emit(a);
    return { session: toLiveSessionView(await getLiveSession(ctx.db, ctx.tenantId, made.id), ctx.deps.now()) };
  });
