import { z } from 'zod';
import type { invitationSelect } from '../../data/invitations.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { idSchema, iso, isoDate, roleSchema } from '../../schemas.js';

export const invitationView = z.object({
  id: idSchema,
  email: z.string(),
  role: roleSchema,
  /** The first characters of the secret, to recognise it. */
  prefix: z.string(),
  createdAt: isoDate,
  expiresAt: isoDate,
  acceptedAt: isoDate.nullable(),
  revokedAt: isoDate.nullable(),
});
export type InvitationView = z.infer<typeof invitationView>;

export function toInvitationView(i: Prisma.InvitationGetPayload<{ select: typeof invitationSelect }>): InvitationView {
  return {
    id: i.id,
    email: i.email,
    role: i.role,
    prefix: i.prefix,
    createdAt: iso(i.createdAt),
    expiresAt: iso(i.expiresAt),
    acceptedAt: iso(i.acceptedAt),
    revokedAt: iso(i.revokedAt),
  };
}
