import { z } from 'zod';
import { getDeployment } from '../../data/deployments.js';
import { outputChanges, outputWatermark } from '../../data/output-store.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';

export const outputWatchInput = z.strictObject({ deploymentId: idSchema });

/** How often the watermark is read (batches ingested by other replicas), and a heartbeat is sent. */
const pollMs = 2000;
const heartbeatMs = 15_000;
/** Updates are coalesced: at most one per this many ms (a dashboard refetches on each). */
const minGapMs = 50;

/**
 * `output.watch` (viewer, a subscription over server-sent events): yields `{ kind: 'update' }` each
 * time new output batches of the deployment are stored (signalled at once by this process's ingest,
 * found within 2 s when another replica stored them), coalesced so a slow reader gets the latest
 * state and never a backlog; `{ kind: 'heartbeat' }` every 15 s. Another tenant's deployment is `NOT_FOUND`.
 */
export const outputWatch = userProcedure('viewer')
  .input(outputWatchInput)
  .subscription(async ({ ctx, input, signal }) => {
    // Looked up before the stream starts: a missing (or another tenant's) deployment is an answer
    // of its own (404), not an error inside an accepted stream (which tRPC can only call internal).
    const d = await getDeployment(ctx.db, ctx.tenantId, input.deploymentId);
    return watchDeployment(ctx, d.id, signal);
  });

/** The stream of one deployment of the tenant (already looked up). */
async function* watchDeployment(ctx: { db: Parameters<typeof outputWatermark>[0]; tenantId: string }, deploymentId: string, signal: AbortSignal | undefined) {
  let dirty = false;
  let wake: (() => void) | undefined;
  const onChange = (e: { tenantId: string }) => {
    if (e.tenantId !== ctx.tenantId) return;
    dirty = true;
    wake?.();
  };
  outputChanges.on(deploymentId, onChange);
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    let mark = await outputWatermark(ctx.db, ctx.tenantId, deploymentId);
    yield { kind: 'update' as const, at: new Date().toISOString(), batches: mark.batches };
    let lastBeat = Date.now();
    let lastPoll = Date.now();
    while (!signal?.aborted) {
      if (!dirty) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.min(pollMs, heartbeatMs)).unref?.();
        });
        wake = undefined;
      }
      if (signal?.aborted) break;
      const now = Date.now();
      if (!dirty && now - lastPoll >= pollMs) {
        lastPoll = now;
        const m = await outputWatermark(ctx.db, ctx.tenantId, deploymentId);
        if (m.batches !== mark.batches || m.receivedAt?.getTime() !== mark.receivedAt?.getTime()) dirty = true;
        mark = m;
      }
      if (dirty) {
        dirty = false;
        lastBeat = Date.now();
        yield { kind: 'update' as const, at: new Date().toISOString(), batches: mark.batches };
        await new Promise((r) => setTimeout(r, minGapMs));
      } else if (now - lastBeat >= heartbeatMs) {
        lastBeat = now;
        yield { kind: 'heartbeat' as const, at: new Date().toISOString(), batches: mark.batches };
      }
    }
  } finally {
    outputChanges.off(deploymentId, onChange);
    signal?.removeEventListener('abort', onAbort);
  }
}
