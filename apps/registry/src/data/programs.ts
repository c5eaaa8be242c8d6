import { ABI_TAG, buildManifest, isCompatError, type Manifest, mapDefsOf, type ProgramSpec, readProgramSpec, specToJson } from '@probeyard/compat';
import { type EventFormat, isFormatError } from '@probeyard/formats';
import { compileScriptArtifact, formatDiagnostics, isScriptArtifact, isScriptError } from '@probeyard/script';
import { type Diagnostic, PERF_MAX_TRACE_SIZE, verify } from '@probeyard/verifier';
import type { RegistryHooks } from '../context.js';
import type { Db } from '../db/open.js';
import { isUniqueViolation, notFound, RegistryError } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
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

/** One program's verdict from the verifier at publish time. */
export interface ProgramReport {
  program: string;
  section: string;
  ok: boolean;
  /** `tracepoint` (the kernel's rules for a tracepoint record) or `raw` (see {@link readArtifact}). */
  context: 'tracepoint' | 'raw';
  diagnostics: Diagnostic[];
  stats: { insnsProcessed: number; states: number; peakStates: number; timeMs: number };
}

/** What publishing stores besides the bytes: the spec, manifest and the verifier's report. */
export interface ReadArtifact {
  spec: ProgramSpec;
  manifest: Manifest;
  report: { ok: boolean; programs: ProgramReport[] };
}

/** The spec of a script artifact; a script that does not compile (or a malformed artifact) is `bad_request`. */
async function scriptArtifactSpec(bytes: Uint8Array): Promise<ProgramSpec> {
  try {
    const r = await compileScriptArtifact(bytes, { name: 'script' });
    if (r.ok) return r.spec;
    throw new RegistryError('bad_request', `publish: the script does not compile:\n${formatDiagnostics(r.source, r.diagnostics).trimEnd()}`);
  } catch (err) {
    if (isScriptError(err)) throw new RegistryError('bad_request', `publish: ${err.message}`, {}, { cause: err });
    throw err;
  }
}

/**
 * Parses an artifact (BPF ELF object, Probeyard assembly or a script artifact) into a spec — with the formats of the
 * kernel it was built against when `buildFormatsOf` gives them — and verifies every program in it. A program reading fields by name without a build-time layout (assembly symbols) has
 * placeholder offsets until relocation, so it is verified against a raw record (every bound,
 * pointer, map and helper rule; the field layout is checked per kernel by the compat verdict).
 * Unreadable bytes are `bad_request`; a verifier rejection is `program_rejected` with the
 * diagnostics in the error's context.
 */
export async function readArtifact(
  bytes: Uint8Array,
  buildFormatsOf?: (events: Set<string>) => Promise<EventFormat[]>,
): Promise<ReadArtifact> {
  if (bytes.length === 0) throw new RegistryError('bad_request', 'publish: the artifact is empty');
  let spec: ProgramSpec;
  if (isScriptArtifact(bytes)) {
    // a script artifact (packages/script: the source and the formats it was compiled for) compiles here again
    spec = await scriptArtifactSpec(bytes);
  } else {
    try {
      spec = await readProgramSpec(bytes);
      if (buildFormatsOf) {
        // Read again with the formats it was built against: assembly symbols get their offsets,
        // hard-coded offsets their names.
        const events = new Set(spec.programs.flatMap((p) => [...(p.attach.kind === 'tracepoint' ? [p.attach.event] : []), ...p.fieldRelocations.map((r) => r.event)]));
        spec = await readProgramSpec(bytes, { buildFormats: await buildFormatsOf(events) });
      }
    } catch (err) {
      if (isCompatError(err) || isFormatError(err)) throw new RegistryError('bad_request', `publish: ${err.message}`, {}, { cause: err });
      throw err;
    }
  }
  const programs = spec.programs.filter((p) => p.instructions.length > 0);
  if (programs.length === 0) throw new RegistryError('bad_request', 'publish: the artifact has no program');
  const maps = mapDefsOf(spec);
  const reports: ProgramReport[] = programs.map((p) => {
    const unresolved = p.fieldRelocations.some((r) => r.built === undefined);
    const context = unresolved ? ({ kind: 'raw', size: PERF_MAX_TRACE_SIZE } as const) : ({ kind: 'tracepoint' } as const);
    const r = verify(p.instructions, { maps, context });
    const { insnsProcessed, states, peakStates, timeMs } = r.stats;
    return { program: p.name, section: p.section, ok: r.ok, context: context.kind, diagnostics: r.diagnostics, stats: { insnsProcessed, states, peakStates, timeMs } };
  });
  const report = { ok: reports.every((r) => r.ok), programs: reports };
  if (!report.ok) {
    const bad = reports.find((r) => !r.ok)!;
    const d = bad.diagnostics[0];
    const why = d ? `insn ${d.insnIndex} (${d.insnText}): ${d.message}` : 'rejected';
    throw new RegistryError('program_rejected', `publish: verifier rejected program ${bad.program}: ${why}`, {
      diagnostics: reports.flatMap((r) => r.diagnostics.map((x) => ({ program: r.program, ...x }))),
    });
  }
  return { spec, manifest: buildManifest(spec), report };
}

export const versionDetailSelect = {
  ...versionSummarySelect,
  manifest: true,
  verifierReport: true,
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
          spec: specToJson(read.spec) as unknown as Prisma.InputJsonValue,
          manifest: read.manifest as unknown as Prisma.InputJsonValue,
          verifierReport: read.report as unknown as Prisma.InputJsonValue,
          abi: ABI_TAG,
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
        detail: { program: input.name, version: input.version, digest, size: input.bytes.length, newProgram, compatJob: job.id },
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
