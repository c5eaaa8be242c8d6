import { z } from 'zod';
import { hashSecret, newSecret, SecretKind } from '../../auth/secrets.js';
import { writeAudit } from '../../data/audit.js';
import { idSchema, iso, isoDate, labelsSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';

export const agentCreateEnrollmentTokenInput = z
  .strictObject({
    /** Labels the enrolling agent gets (its own labels add to them, these win). */
    labels: labelsSchema.default({}),
    expiresInMinutes: z.number().int().min(1).max(7 * 24 * 60).default(60),
  })
  .default({ labels: {}, expiresInMinutes: 60 });
export const agentCreateEnrollmentTokenOutput = z.object({
  id: idSchema,
  /** One-time secret for `agent.enroll`: shown once. */
  enrollmentToken: z.string(),
  expiresAt: isoDate,
});

/** `agent.createEnrollmentToken` (admin): a one-time token an agent trades for its credential. */
export const agentCreateEnrollmentToken = userProcedure('admin')
  .input(agentCreateEnrollmentTokenInput)
  .output(agentCreateEnrollmentTokenOutput)
  .mutation(async ({ ctx, input }) => {
    const secret = newSecret(SecretKind.enrollment);
    const expiresAt = new Date(ctx.deps.now().getTime() + input.expiresInMinutes * 60_000);
    const row = await ctx.db.$transaction(async (tx) => {
      const made = await tx.enrollmentToken.create({
        data: { tenantId: ctx.tenantId, hash: hashSecret(secret), labels: input.labels, createdById: ctx.principal.userId, expiresAt },
        select: { id: true },
      });
      await writeAudit(tx, {
        tenantId: ctx.tenantId,
        actor: { kind: 'user', id: ctx.principal.userId },
        action: 'agent.createEnrollmentToken',
        targetType: 'enrollment_token',
        targetId: made.id,
        detail: { labels: input.labels, expiresAt: iso(expiresAt) },
      });
      return made;
    });
    return { id: row.id, enrollmentToken: secret, expiresAt: iso(expiresAt) };
  });
