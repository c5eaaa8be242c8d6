import { z } from 'zod';
import { hashSecret, newSecret, SecretKind } from '../../auth/secrets.js';
import { agentSelect } from '../../data/agents.js';
import { writeAudit } from '../../data/audit.js';
import { reconcileAgentTargets } from '../../data/deployments.js';
import { fleetTransaction } from '../../data/fleet-gate.js';
import { RegistryError } from '../../errors.js';
import { labelSchema, labelsSchema } from '../../schemas.js';
import { publicProcedure } from '../../trpc.js';
import { agentView, toAgentView } from './agent-view.js';

export const agentEnrollInput = z.strictObject({
  enrollmentToken: z.string().min(1).max(200),
  hostname: labelSchema,
  labels: labelsSchema.default({}),
  agentVersion: z.string().max(64).default(''),
});
export const agentEnrollOutput = z.object({
  agent: agentView,
  /** The agent's credential (`Authorization: Bearer …`): shown once, only its hash is kept. */
  credential: z.string(),
});

const refused = () => new RegistryError('unauthorized', 'agent enroll: enrollment token unknown, expired or already used');

/**
 * `agent.enroll` (public; the one-time enrolment token authenticates): spends the token and makes
 * the agent with its credential, atomically, so a token enrols exactly one agent.
 */
export const agentEnroll = publicProcedure
  .input(agentEnrollInput)
  .output(agentEnrollOutput)
  .mutation(async ({ ctx, input }) => {
    const hash = hashSecret(input.enrollmentToken);
    const now = ctx.deps.now();
    const credential = newSecret(SecretKind.agent);
    // The tenant first: its enrolments wait for its share of the database's connections
    // (fleetTransaction), and an unusable token is refused without one. A transaction of its own
    // only for the bounded wait: on PGlite a plain query waits for the session however long a
    // transaction holds it, a transaction at most its `maxWait` (then 503, as below).
    const found = await ctx.db.$transaction((tx) => tx.enrollmentToken.findUnique({ where: { hash }, select: { tenantId: true, usedAt: true, expiresAt: true } }));
    if (!found || found.usedAt || found.expiresAt <= now) throw refused();
    const agent = await fleetTransaction(ctx.db, found.tenantId, 'agent enroll', async (tx) => {
      const token = await tx.enrollmentToken.findUnique({ where: { hash }, select: { id: true, tenantId: true, labels: true } });
      if (!token || token.tenantId !== found.tenantId) throw refused();
      // Spend it: only one concurrent enrolment can move usedAt from null.
      const spent = await tx.enrollmentToken.updateMany({ where: { id: token.id, usedAt: null, expiresAt: { gt: now } }, data: { usedAt: now } });
      if (spent.count !== 1) throw refused();
      const labels = { ...input.labels, ...(token.labels as Record<string, string>) };
      const made = await tx.agent.create({
        data: { tenantId: token.tenantId, hostname: input.hostname, credentialHash: hashSecret(credential), labels, agentVersion: input.agentVersion, lastSeenAt: now },
        select: agentSelect,
      });
      await tx.enrollmentToken.update({ where: { id: token.id }, data: { agentId: made.id }, select: { id: true } });
      await writeAudit(tx, {
        tenantId: token.tenantId,
        actor: { kind: 'agent', id: made.id },
        action: 'agent.enroll',
        targetType: 'agent',
        targetId: made.id,
        detail: { hostname: input.hostname, labels, enrollmentTokenId: token.id },
      });
      // Running deployments whose selector it matches get a target for it.
      await reconcileAgentTargets(tx, token.tenantId, { kind: 'agent', id: made.id }, made.id, labels);
      return { made, tenantId: token.tenantId };
    });
    ctx.log.tenant = agent.tenantId;
    return { agent: toAgentView(agent.made), credential };
  });
