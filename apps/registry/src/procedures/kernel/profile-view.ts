import { z } from 'zod';
import type { profileSelect } from '../../data/kernels.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { idSchema, iso, isoDate } from '../../schemas.js';

export const kernelProfileView = z.object({
  id: idSchema,
  name: z.string(),
  release: z.string(),
  machine: z.string(),
  source: z.enum(['agent', 'events_tree', 'trace_dat']),
  /**
   * Holds every event of its kernel (an agent's tracefs, a full events/ tree): a missing event is
   * `incompatible` there. False for a trace.dat or an upload marked partial: a missing event is
   * `unknown`.
   */
  complete: z.boolean(),
  /** sha256 over the sorted (system/event, format hash) lines: the profile's identity. */
  contentHash: z.string(),
  formats: z.number().int(),
  agents: z.number().int(),
  createdAt: isoDate,
});
export type KernelProfileView = z.infer<typeof kernelProfileView>;

export function toKernelProfileView(p: Prisma.KernelProfileGetPayload<{ select: typeof profileSelect }>): KernelProfileView {
  const { _count, createdAt, ...rest } = p;
  return { ...rest, formats: _count.formats, agents: _count.agents, createdAt: iso(createdAt) };
}
