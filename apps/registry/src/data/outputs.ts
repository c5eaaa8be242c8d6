import type { Db } from '../db/open.js';
import { RegistryError } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { agentTargets } from './deployments.js';

export const outputKinds = ['map_snapshot', 'events', 'counters'] as const;
export type OutputKind = (typeof outputKinds)[number];

export interface OutputBatchInput {
  targetId: string;
  sequence: number;
  kind: OutputKind;
  payload: Prisma.InputJsonValue;
  eventsSeen: number;
  eventsLost: number;
}

/** JSON with object keys sorted, so that stored (jsonb) and sent payloads compare by content. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

function sameContent(a: { kind: string; payload: unknown; eventsSeen: number; eventsLost: number }, b: OutputBatchInput): boolean {
  return a.kind === b.kind && a.eventsSeen === b.eventsSeen && a.eventsLost === b.eventsLost && canonicalJson(a.payload) === canonicalJson(b.payload);
}

/** Test hook for the crash-safety test: milliseconds to wait inside the ingest transaction. */
const ingestPauseMs = Number(process.env.PROBEYARD_FAULT_INGEST_PAUSE_MS ?? 0);

/**
 * Appends an agent's output batches in one transaction. A batch is keyed by (target, sequence): a
 * retried batch with the same content is a no-op, different content is `conflict` and nothing of
 * the request is stored.
 */
export async function ingestOutputs(db: Db, tenantId: string, agentId: string, batches: OutputBatchInput[]) {
  const keys = new Set<string>();
  for (const b of batches) {
    const key = `${b.targetId}#${b.sequence}`;
    if (keys.has(key)) throw new RegistryError('bad_request', `upload outputs: batch ${b.sequence} of target ${b.targetId} appears twice in one request`);
    keys.add(key);
  }
  return db.$transaction(
    async (tx) => {
      await agentTargets(tx, tenantId, agentId, [...new Set(batches.map((b) => b.targetId))]);
      const inserted = await tx.outputBatch.createMany({
        data: batches.map((b) => ({ tenantId, targetId: b.targetId, sequence: b.sequence, kind: b.kind, payload: b.payload, eventsSeen: b.eventsSeen, eventsLost: b.eventsLost })),
        skipDuplicates: true,
      });
      if (ingestPauseMs > 0) {
        process.stderr.write(`fault: output ingest paused inside its transaction for ${ingestPauseMs} ms\n`);
        await new Promise((r) => setTimeout(r, ingestPauseMs));
      }
      if (inserted.count !== batches.length) {
        // Some were there already: each must be the same batch again.
        const stored = await tx.outputBatch.findMany({
          where: { tenantId, OR: batches.map((b) => ({ targetId: b.targetId, sequence: b.sequence })) },
          select: { targetId: true, sequence: true, kind: true, payload: true, eventsSeen: true, eventsLost: true },
        });
        const byKey = new Map(stored.map((s) => [`${s.targetId}#${s.sequence}`, s]));
        for (const b of batches) {
          const s = byKey.get(`${b.targetId}#${b.sequence}`);
          if (s && !sameContent(s, b)) {
            throw new RegistryError('conflict', `upload outputs: batch ${b.sequence} of target ${b.targetId} was already received with different content`, {
              targetId: b.targetId,
              sequence: b.sequence,
            });
          }
        }
      }
      return { accepted: inserted.count, duplicates: batches.length - inserted.count };
    },
    // A loaded server may wait a while for a pooled connection (Prisma's default is 2 s).
    { timeout: 60_000, maxWait: 30_000 },
  );
}

export const outputSelect = {
  id: true,
  targetId: true,
  sequence: true,
  kind: true,
  payload: true,
  eventsSeen: true,
  eventsLost: true,
  receivedAt: true,
} as const satisfies Prisma.OutputBatchSelect;

/** A deployment's output batches by (sequence, target), after the cursor. */
export function listOutputs(db: Db, tenantId: string, q: { deploymentId: string; targetId?: string | undefined; after?: { sequence: number; targetId: string } | undefined; limit: number }) {
  const after = q.after ? { OR: [{ sequence: { gt: q.after.sequence } }, { sequence: q.after.sequence, targetId: { gt: q.after.targetId } }] } : {};
  return db.outputBatch.findMany({
    where: { tenantId, target: { deploymentId: q.deploymentId, tenantId }, ...(q.targetId ? { targetId: q.targetId } : {}), ...after },
    orderBy: [{ sequence: 'asc' }, { targetId: 'asc' }],
    take: q.limit,
    select: outputSelect,
  });
}
