// Output retention: agents send outputs for as long as a deployment runs, and live sessions leave
// theirs behind; without an end, a fleet fills the database. Outputs older than the retention are
// deleted tenant by tenant, in chunks that yield between statements, except each deployment
// target's newest map snapshot (what its dashboard shows once the target has stopped). Live
// sessions that ended before the cutoff go with their outputs.
import type { Db } from '../db/open.js';

/** Rows one delete statement removes at most (the server's thread is free between them). */
export const retentionChunkRows = 2000;

export interface PruneResult {
  /** Deployment output batches deleted. */
  outputBatches: number;
  /** Live sessions deleted (ended before the cutoff), and their outputs. */
  liveSessions: number;
  liveOutputs: number;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Deletes, in every tenant, the outputs received before `cutoff` (see the top of this file). */
export async function pruneOutputs(db: Db, cutoff: Date, opts: { chunkRows?: number; shouldStop?: () => boolean } = {}): Promise<PruneResult> {
  const chunk = opts.chunkRows ?? retentionChunkRows;
  const stop = opts.shouldStop ?? (() => false);
  const result: PruneResult = { outputBatches: 0, liveSessions: 0, liveOutputs: 0 };
  const tenants = await db.tenant.findMany({ select: { id: true }, orderBy: { id: 'asc' } });
  for (const { id: tenantId } of tenants) {
    // deployment outputs: by (tenantId, receivedAt), its index; a target's newest snapshot stays
    for (;;) {
      if (stop()) return result;
      const n = await db.$executeRaw`
        DELETE FROM "OutputBatch" WHERE "id" IN (
          SELECT o."id" FROM "OutputBatch" o
          WHERE o."tenantId" = ${tenantId} AND o."receivedAt" < ${cutoff}
            AND NOT (o."kind" = 'map_snapshot' AND o."sequence" = (
              SELECT max(x."sequence") FROM "OutputBatch" x WHERE x."targetId" = o."targetId" AND x."kind" = 'map_snapshot'))
          LIMIT ${chunk})`;
      result.outputBatches += n;
      await yieldToEventLoop();
      if (n < chunk) break;
    }
    // live sessions ended before the cutoff: their outputs in chunks, then the sessions
    const ended = await db.liveSession.findMany({ where: { tenantId, endedAt: { lt: cutoff } }, select: { id: true } });
    for (const { id: sessionId } of ended) {
      for (;;) {
        if (stop()) return result;
        const n = await db.$executeRaw`
          DELETE FROM "LiveOutput" WHERE "id" IN (
            SELECT "id" FROM "LiveOutput" WHERE "tenantId" = ${tenantId} AND "sessionId" = ${sessionId} LIMIT ${chunk})`;
        result.liveOutputs += n;
        await yieldToEventLoop();
        if (n < chunk) break;
      }
      result.liveSessions += (await db.liveSession.deleteMany({ where: { id: sessionId, tenantId } })).count;
    }
  }
  return result;
}
