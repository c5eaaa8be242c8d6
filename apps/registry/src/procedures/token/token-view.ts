import { z } from 'zod';
import type { tokenSelect } from '../../data/tokens.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { idSchema, iso, isoDate, roleSchema } from '../../schemas.js';

/** A token as listings show it: never the secret or its hash. */
export const tokenView = z.object({
  id: idSchema,
  name: z.string(),
  kind: z.enum(['api', 'session']),
  role: roleSchema,
  /** The secret's first characters. */
  prefix: z.string(),
  user: z.object({ id: idSchema, email: z.string() }),
  createdAt: isoDate,
  expiresAt: isoDate.nullable(),
  lastUsedAt: isoDate.nullable(),
  revokedAt: isoDate.nullable(),
});
export type TokenView = z.infer<typeof tokenView>;

export function toTokenView(t: Prisma.ApiTokenGetPayload<{ select: typeof tokenSelect }>): TokenView {
  return {
    id: t.id,
    name: t.name,
    kind: t.kind,
    role: t.role,
    prefix: t.prefix,
    user: { id: t.userId, email: t.user.email },
    createdAt: iso(t.createdAt),
    expiresAt: iso(t.expiresAt),
    lastUsedAt: iso(t.lastUsedAt),
    revokedAt: iso(t.revokedAt),
  };
}
