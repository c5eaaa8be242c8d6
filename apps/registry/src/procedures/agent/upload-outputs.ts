import { z } from 'zod';
import { ingestOutputs, outputKinds } from '../../data/output-store.js';
import { RegistryError } from '../../errors.js';
import { idSchema, maxPayloadDepth, nestingDepth } from '../../schemas.js';
import { agentProcedure } from '../../trpc.js';

/** The largest payload of one batch (its JSON text), and of all batches of one request. */
export const maxBatchPayloadBytes = 256 * 1024;
export const maxUploadPayloadBytes = 4 * 1024 * 1024;

const counter = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** A payload: JSON of at most `maxPayloadDepth` levels (docs/OUTPUTS.md); its size is checked below. */
const jsonValue = z.json().superRefine((v, ctx) => {
  const depth = nestingDepth(v, maxPayloadDepth);
  if (depth > maxPayloadDepth) ctx.addIssue({ code: 'custom', message: `nested more than ${maxPayloadDepth} levels deep (the limit of an output payload is ${maxPayloadDepth})` });
});

export const agentUploadOutputsInput = z.strictObject({
  batches: z
    .array(
      z.strictObject({
        targetId: idSchema,
        /** Per target, from 0: the key that makes a retry idempotent. */
        sequence: z.number().int().min(0).max(2 ** 31 - 1),
        kind: z.enum(outputKinds),
        payload: jsonValue,
        eventsSeen: counter.default(0),
        eventsLost: counter.default(0),
      }),
    )
    .min(1)
    .max(100),
});
export const agentUploadOutputsOutput = z.object({
  /** Batches stored now. */
  accepted: z.number().int(),
  /** Batches that were already stored with the same content (retries). */
  duplicates: z.number().int(),
});

/**
 * `agent.uploadOutputs` (agent): output batches of the agent's targets, keyed by (target,
 * sequence), in one transaction. The same batch again is a no-op; the same key with other content
 * is `CONFLICT` and nothing of the request is stored.
 */
export const agentUploadOutputs = agentProcedure
  .input(agentUploadOutputsInput)
  .output(agentUploadOutputsOutput)
  .mutation(async ({ ctx, input }) => {
    let total = 0;
    for (const b of input.batches) {
      const size = Buffer.byteLength(JSON.stringify(b.payload));
      if (size > maxBatchPayloadBytes) {
        throw new RegistryError('payload_too_large', `upload outputs: batch ${b.sequence} of target ${b.targetId} has ${size} bytes of payload, the limit is ${maxBatchPayloadBytes}`);
      }
      total += size;
    }
    if (total > maxUploadPayloadBytes) throw new RegistryError('payload_too_large', `upload outputs: ${total} bytes of payload in one request, the limit is ${maxUploadPayloadBytes}`);
    ctx.deps.fleet.markSeen(ctx.principal.agentId);
    return ingestOutputs(
      ctx.db,
      ctx.tenantId,
      ctx.principal.agentId,
      input.batches.map((b) => ({ ...b, payload: b.payload as never })),
    );
  });
