import { z } from 'zod';
import { liveAgentReportStates, liveOutputKinds, reportLive } from '../../data/live.js';
import { RegistryError } from '../../errors.js';
import { idSchema, maxPayloadDepth, nestingDepth } from '../../schemas.js';
import { agentProcedure } from '../../trpc.js';
import { maxBatchPayloadBytes, maxUploadPayloadBytes } from './upload-outputs.js';

const jsonValue = z.json().superRefine((v, ctx) => {
  if (nestingDepth(v, maxPayloadDepth) > maxPayloadDepth) ctx.addIssue({ code: 'custom', message: `nested more than ${maxPayloadDepth} levels deep (the limit of an output payload is ${maxPayloadDepth})` });
});

export const agentReportLiveInput = z.strictObject({
  sessionId: idSchema,
  /** The agent's state of the session, when it changed (a terminal one is final). */
  state: z.enum(liveAgentReportStates).optional(),
  /** Why it failed (a compile error, the verdict's reasons, a fault, the CPU budget). */
  error: z.string().max(8000).optional(),
  /** The verdict on the agent's kernel. */
  verdict: z
    .strictObject({
      status: z.string().max(40),
      changes: z.array(z.string().max(500)).max(200).optional(),
      reasons: z.array(z.string().max(1000)).max(50).optional(),
    })
    .optional(),
  /** Outputs since the last report, each with its sequence (per agent and session, from 0). */
  outputs: z
    .array(z.strictObject({ seq: z.number().int().min(0).max(2 ** 31 - 1), kind: z.enum(liveOutputKinds), payload: jsonValue }))
    .max(100)
    .default([]),
});
export const agentReportLiveOutput = z.object({
  accepted: z.number().int(),
  /** The session was stopped (by a user): stop it now. */
  stop: z.boolean(),
});

/**
 * `agent.reportLive` (agent): outputs and state of one of the agent's live sessions, about once a
 * second while it runs; a retried output (same session, agent, sequence) is not stored twice. A
 * session that is not this agent's is NOT_FOUND.
 */
export const agentReportLive = agentProcedure
  .input(agentReportLiveInput)
  .output(agentReportLiveOutput)
  .mutation(async ({ ctx, input }) => {
    let total = 0;
    for (const o of input.outputs) {
      const size = Buffer.byteLength(JSON.stringify(o.payload));
      if (size > maxBatchPayloadBytes) throw new RegistryError('payload_too_large', `report live: output ${o.seq} has ${size} bytes of payload, the limit is ${maxBatchPayloadBytes}`);
      total += size;
    }
    if (total > maxUploadPayloadBytes) throw new RegistryError('payload_too_large', `report live: ${total} bytes of payload in one request, the limit is ${maxUploadPayloadBytes}`);
    ctx.deps.fleet.markSeen(ctx.principal.agentId);
    return reportLive(
      ctx.db,
      ctx.tenantId,
      ctx.principal.agentId,
      {
        sessionId: input.sessionId,
        state: input.state,
        error: input.error,
        verdict: input.verdict,
        outputs: input.outputs.map((o) => ({ ...o, payload: o.payload as never })),
      },
      ctx.deps.now(),
    );
  });
