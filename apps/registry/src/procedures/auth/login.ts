import { z } from 'zod';
import { countAttempt, verifyCounted } from '../../auth/password-check.js';
import { writeAudit } from '../../data/audit.js';
import { createToken } from '../../data/tokens.js';
import { RegistryError } from '../../errors.js';
import { emailSchema, idSchema, iso, isoDate, roleSchema, slugSchema } from '../../schemas.js';
import { publicProcedure } from '../../trpc.js';

/** How long a login session lasts. */
export const sessionHours = 12;

export const authLoginInput = z.strictObject({
  email: emailSchema,
  password: z.string().min(1).max(256),
  /** The tenant to act in; may be left out when the user belongs to exactly one. */
  tenant: slugSchema.optional(),
});
export const authLoginOutput = z.object({
  token: z.string(),
  tokenId: idSchema,
  tenant: z.object({ id: idSchema, name: z.string() }),
  role: roleSchema,
  expiresAt: isoDate,
});

const denied = () => new RegistryError('unauthorized', 'login: invalid email, password or tenant');

/**
 * `auth.login`: email and password → a session token of the member's role in one tenant.
 * Unknown user, wrong password and no membership all answer the same, in the same time.
 * Attempts are counted before the hash, per (email, client address), per address and per email
 * (src/auth/rate-limit.ts), and hashes run a few at a time (src/auth/password-gate.ts).
 */
export const authLogin = publicProcedure
  .input(authLoginInput)
  .output(authLoginOutput)
  .mutation(async ({ ctx, input }) => {
    const { db, deps } = ctx;
    // Counted before anything else (refused at once over the limit); hashed a few at a time.
    const attempt = countAttempt(deps, 'login', input.email, ctx.ip);
    const user = await db.user.findUnique({
      where: { email: input.email },
      select: { id: true, email: true, passwordHash: true, memberships: { select: { role: true, tenant: { select: { id: true, name: true } } } } },
    });
    const ok = await verifyCounted(deps, 'login', attempt, input.password, user?.passwordHash ?? null);
    const memberships = user?.memberships ?? [];
    const membership = input.tenant ? memberships.find((m) => m.tenant.name === input.tenant) : memberships.length === 1 ? memberships[0] : undefined;
    if (!user || !ok || !membership) {
      if (user && ok && !input.tenant && memberships.length > 1) {
        throw new RegistryError('bad_request', `login: ${memberships.length} tenants, choose one with tenant`);
      }
      throw denied();
    }
    const expiresAt = new Date(deps.now().getTime() + sessionHours * 3_600_000);
    const { token, secret } = await db.$transaction(async (tx) => {
      const made = await createToken(tx, {
        tenantId: membership.tenant.id,
        userId: user.id,
        kind: 'session',
        name: `login from ${ctx.ip}`.slice(0, 100),
        role: membership.role,
        expiresAt,
      });
      await writeAudit(tx, {
        tenantId: membership.tenant.id,
        actor: { kind: 'user', id: user.id },
        action: 'auth.login',
        targetType: 'token',
        targetId: made.token.id,
        detail: { ip: ctx.ip },
      });
      return made;
    });
    ctx.log.tenant = membership.tenant.name;
    return { token: secret, tokenId: token.id, tenant: membership.tenant, role: membership.role, expiresAt: iso(expiresAt) };
  });
