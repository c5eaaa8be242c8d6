import { z } from 'zod';
import type { memberSelect } from '../../data/members.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { idSchema, iso, isoDate, roleSchema } from '../../schemas.js';

export const memberView = z.object({ userId: idSchema, email: z.string(), role: roleSchema, since: isoDate });
export type MemberView = z.infer<typeof memberView>;

export function toMemberView(m: Prisma.MembershipGetPayload<{ select: typeof memberSelect }>): MemberView {
  return { userId: m.userId, email: m.user.email, role: m.role, since: iso(m.createdAt) };
}
