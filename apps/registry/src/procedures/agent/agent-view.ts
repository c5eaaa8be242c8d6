import { z } from 'zod';
import type { agentSelect } from '../../data/agents.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { idSchema, iso, isoDate } from '../../schemas.js';

export const agentView = z.object({
  id: idSchema,
  hostname: z.string(),
  labels: z.record(z.string(), z.string()),
  agentVersion: z.string(),
  kernelProfileId: idSchema.nullable(),
  enrolledAt: isoDate,
  lastSeenAt: isoDate.nullable(),
  revokedAt: isoDate.nullable(),
});
export type AgentView = z.infer<typeof agentView>;

export function toAgentView(a: Prisma.AgentGetPayload<{ select: typeof agentSelect }>): AgentView {
  return {
    ...a,
    labels: (a.labels ?? {}) as Record<string, string>,
    enrolledAt: iso(a.enrolledAt),
    lastSeenAt: iso(a.lastSeenAt),
    revokedAt: iso(a.revokedAt),
  };
}
