// Fleet test support: a published version put straight into the database (program.publish is
// another procedure's business), agents enrolled through the API, and row counts of the fleet tables.
import { createHash } from 'node:crypto';
import type { Db } from '../../src/db/open.js';

/** A ProgramVersion row of `name@version` in the tenant (the program is made when missing). */
export async function insertVersion(db: Db, tenantId: string, name: string, version: string, opts: { yankReason?: string; spec?: unknown } = {}) {
  const program = await db.program.upsert({ where: { tenantId_name: { tenantId, name } }, create: { tenantId, name }, update: {}, select: { id: true } });
  const artifact = Buffer.from(`; ${name}@${version}\nmov r0, 0\nexit\n`);
  const [major = 0, minor = 0, patch = 0] = version.split(/[.-]/).map(Number);
  return db.programVersion.create({
    data: {
      tenantId,
      programId: program.id,
      version,
      major,
      minor,
      patch,
      artifactKind: 'asm',
      artifact,
      digest: createHash('sha256').update(artifact).digest('hex'),
      size: artifact.length,
      spec: (opts.spec ?? { name, attach: 'sched/sched_switch' }) as never,
      manifest: { events: ['sched/sched_switch'], fields: [] },
      verifierReport: { ok: true },
      ...(opts.yankReason ? { yankedAt: new Date(), yankReason: opts.yankReason } : {}),
    },
    select: { id: true, digest: true, size: true },
  });
}

/** Rows of the fleet tables and the state of targets and deployments, to assert nothing changed. */
export async function fleetCounts(db: Db) {
  const [deployments, targets, outputs, audit, agents, running, statuses] = await Promise.all([
    db.deployment.count(),
    db.deploymentTarget.count(),
    db.outputBatch.count(),
    db.auditEntry.count(),
    db.agent.count(),
    db.deployment.count({ where: { desiredState: 'running' } }),
    db.deploymentTarget.findMany({ select: { id: true, status: true, reason: true, detail: true }, orderBy: { id: 'asc' } }),
  ]);
  return { deployments, targets, outputs, audit, agents, running, statuses: JSON.stringify(statuses) };
}
