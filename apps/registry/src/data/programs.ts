import { ABI_TAG } from '@probeyard/compat';
import type { RegistryHooks } from '../context.js';
import type { Db } from '../db/open.js';
import { isUniqueViolation, notFound, RegistryError } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { ReadArtifact } from './artifact-read.js';
import { writeAudit } from './audit.js';
import { enqueueCompatJob } from './compat.js';
import type { Actor, Tx } from './tx.js';

export const programSelect = {
  id: true,
  name: true,
  description: true,
  tags: true,
  createdAt: true,
  updatedAt: true,
  _count: { select: { versions: true } },
} as const satisfies Prisma.ProgramSelect;

/** A version as listings show it: never the artifact bytes. */
export const versionSummarySelect = {
  id: true,
  version: true,
  digest: true,
  size: true,
  artifactKind: true,
  abi: true,
  publishedAt: true,
  publishedById: true,
  yankedAt: true,
  yankReason: true,
} as const satisfies Prisma.ProgramVersionSelect;

export function listPrograms(db: Db, tenantId: string, filter: { tag?: string | undefined }) {
  return db.program.findMany({
    where: { tenantId, ...(filter.tag ? { tags: { has: filter.tag } } : {}) },
    orderBy: { name: 'asc' },
    select: programSelect,
  });
}

/** A program with its versions, newest first by semver precedence. */
export async function getProgram(db: Db, tenantId: string, name: string) {
  const p = await db.program.findUnique({
    where: { tenantId_name: { tenantId, name } },
    select: {
      ...programSelect,
      versions: { select: versionSummarySelect, orderBy: [{ major: 'desc' }, { minor: 'desc' }, { patch: 'desc' }, { prerelease: 'asc' }] },
    },
  });
  if (!p) throw notFound('program', name);
  return p;
}

/** Semantic Versioning 2.0.0 (semver.org), build metadata included. */
const semverRe =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** The parts of a semver text that order versions; undefined when it is not semver (or a part exceeds 2^31-1). */
export function parseSemver(text: string): { major: number; minor: number; patch: number; prerelease: string } | undefined {
  const m = semverRe.exec(text);
  if (!m) return undefined;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (![major, minor, patch].every((n) => Number.isSafeInteger(n) && n <= 0x7fffffff)) return undefined;
  return { major, minor, patch, prerelease: m[4] ?? '' };
}

export const versionDetailSelect = {
  ...versionSummarySelect,
  manifest: true,
  verifierReport: true,
  providerPins: true,
  program: { select: { name: true } },
} as const satisfies Prisma.ProgramVersionSelect;

export interface PublishInput {
  tenantId: string;
  actor: Actor;
  name: string;
  version: string;
  bytes: Uint8Array;
  description?: string | undefined;
  tags?: string[] | undefined;
}

/**
 * Stores a version (and its program when new) with its compat job and audit row, in one
 * transaction. The same version with the same bytes is a no-op (`created: false`, nothing written);
 * with other bytes a `conflict`.
 */
export async function publishVersion(db: Db, input: PublishInput, read: ReadArtifact, hooks?: RegistryHooks) {
  const semver = parseSemver(input.version);
  if (!semver) throw new RegistryError('bad_request', `publish: not a semantic version: ${input.version}`);
  const digest = read.spec.digest;
  const existing = async (tx: Tx | Db) => {
    const v = await tx.programVersion.findFirst({
      where: { tenantId: input.tenantId, version: input.version, program: { name: input.name } },
      select: versionDetailSelect,
    });
    if (v && v.digest !== digest) {
      throw new RegistryError('conflict', `publish: ${input.name}@${input.version} exists with other bytes (sha256 ${v.digest.slice(0, 12)}…, this is ${digest.slice(0, 12)}…); versions are immutable`);
    }
    return v;
  };
  const attempt = () =>
    db.$transaction(async (tx) => {
      const same = await existing(tx);
      if (same) return { version: same, created: false, jobId: null };
      let program = await tx.program.findUnique({ where: { tenantId_name: { tenantId: input.tenantId, name: input.name } }, select: { id: true } });
      const newProgram = !program;
      if (!program) {
        program = await tx.program.create({
          data: { tenantId: input.tenantId, name: input.name, description: input.description ?? '', tags: input.tags ?? [] },
          select: { id: true },
        });
      } else if (input.description !== undefined || input.tags !== undefined) {
        await tx.program.update({
          where: { id: program.id },
          data: { ...(input.description !== undefined ? { description: input.description } : {}), ...(input.tags !== undefined ? { tags: input.tags } : {}) },
          select: { id: true },
        });
      }
      const made = await tx.programVersion.create({
        data: {
          tenantId: input.tenantId,
          programId: program.id,
          version: input.version,
          ...semver,
          artifactKind: read.spec.sourceKind,
          artifact: Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength) as Uint8Array<ArrayBuffer>,
          digest,
          size: input.bytes.length,
          spec: read.spec as unknown as Prisma.InputJsonValue,
          manifest: read.manifest as unknown as Prisma.InputJsonValue,
          verifierReport: read.report as unknown as Prisma.InputJsonValue,
          abi: ABI_TAG,
          providerPins: Object.fromEntries((read.providers ?? []).map((p) => [p.name, parseSemver(p.version)?.major ?? 0])),
          publishedById: input.actor.kind === 'user' ? input.actor.id : null,
        },
        select: versionDetailSelect,
      });
      const job = await enqueueCompatJob(tx, input.tenantId, null);
      await writeAudit(tx, {
        tenantId: input.tenantId,
        actor: input.actor,
        action: 'program.publish',
        targetType: 'program_version',
        targetId: made.id,
        detail: { program: input.name, version: input.version, digest, size: input.bytes.length, newProgram, compatJob: job.id, ...(read.providers ? { providers: read.providers } : {}) },
      });
      await hooks?.publishInTransaction?.();
      return { version: made, created: true, jobId: job.id };
    });
  try {
    return await attempt();
  } catch (err) {
    // A concurrent publish made the program or the version first: answer as if it had come before.
    if (isUniqueViolation(err)) return attempt();
    throw err;
  }
}

/** A version of a program of the tenant; another tenant's is `not_found`. */
export async function getVersion(db: Db, tenantId: string, name: string, version: string) {
  const v = await db.programVersion.findFirst({ where: { tenantId, version, program: { name } }, select: { ...versionDetailSelect, programId: true } });
  if (!v) {
    await getProgram(db, tenantId, name);
    throw notFound('version', `${name}@${version}`);
  }
  return v;
}

/** Marks a version yanked (it stays readable; new deployments of it are refused). */
export async function yankVersion(db: Db, input: { tenantId: string; actor: Actor; name: string; version: string; reason: string; now: Date }) {
  return db.$transaction(async (tx) => {
    const v = await tx.programVersion.findFirst({
      where: { tenantId: input.tenantId, version: input.version, program: { name: input.name } },
      select: { id: true, yankedAt: true },
    });
    if (!v) throw notFound('version', `${input.name}@${input.version}`);
    if (v.yankedAt) throw new RegistryError('conflict', `yank: ${input.name}@${input.version} was yanked at ${v.yankedAt.toISOString()}`);
    const updated = await tx.programVersion.update({ where: { id: v.id }, data: { yankedAt: input.now, yankReason: input.reason }, select: versionDetailSelect });
    await writeAudit(tx, {
      tenantId: input.tenantId,
      actor: input.actor,
      action: 'version.yank',
      targetType: 'program_version',
      targetId: v.id,
      detail: { program: input.name, version: input.version, reason: input.reason },
    });
    return updated;
  });
}
