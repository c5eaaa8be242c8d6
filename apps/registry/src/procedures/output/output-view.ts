import { displayKinds } from '@probeyard/compat';
import { z } from 'zod';
import { idSchema, isoDate } from '../../schemas.js';
import { targetStatuses } from '../deployment/deployment-view.js';

/** A display hint (packages/compat `DisplayHint`) as it travels in payloads. */
export const displayView = z.object({
  kind: z.enum(displayKinds),
  unit: z.string().optional(),
  source: z.enum(['script', 'convention', 'metadata']).optional(),
  /** log2 histograms: which slot a value lands in. */
  bucket: z.enum(['bpftrace', 'libbpf-tools']).optional(),
  /** linear histograms. */
  min: z.number().optional(),
  max: z.number().optional(),
  step: z.number().optional(),
});

export const mergedMapView = z.object({
  name: z.string(),
  type: z.string(),
  display: displayView,
  entries: z.array(z.object({ key: z.string(), value: z.number().nullable(), raw: z.unknown().optional() })),
  moreEntries: z.number().int(),
  histograms: z.array(z.object({ key: z.string(), buckets: z.array(z.object({ label: z.string(), count: z.number() })) })),
  truncated: z.number().int(),
  targets: z.number().int(),
});

export const targetOutputView = z.object({
  targetId: idSchema,
  agentId: idSchema,
  hostname: z.string(),
  status: z.enum(targetStatuses),
  reason: z.string().nullable(),
  agentLastSeenAt: isoDate.nullable(),
  snapshot: z
    .object({
      sequence: z.number().int(),
      runId: z.string(),
      takenAt: z.string(),
      traceTimeNs: z.string(),
      eventsSeen: z.number(),
      eventsLost: z.number(),
      receivedAt: isoDate,
    })
    .nullable(),
  counters: z.record(z.string(), z.unknown()).nullable(),
});
