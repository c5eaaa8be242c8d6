// The verifier's worker thread (a src/jobs/worker-pool.ts worker started by
// src/jobs/verifier-pool.ts, one task at a time): reads and verifies a published artifact, or
// computes one compat cell (relocation and the verifier on the relocated programs). A refusal of
// the registry (`bad_request`, `program_rejected` with its diagnostics) comes back as data.
import { isCompatError, type Manifest, type ProgramSpecJson, type ProviderDefinition, readProgramSpec, specFromJson } from '@probeyard/compat';
import { type EventFormat, isFormatError, parseEventFormat } from '@probeyard/formats';
import { isScriptArtifact } from '@probeyard/script';
import { type ReadArtifact, readArtifact } from '../data/artifact-read.js';
import { type CompatCell, type CompatProfileRows, type CompatSettings, compatProfileOf, computeCell } from '../data/compat-cell.js';
import { RegistryError, type RegistryErrorCode } from '../errors.js';
import { serveTasks } from './worker-serve.js';

export type VerifyTask =
  /** The events an artifact reads (to fetch the formats it was built against), without verifying it. */
  | { kind: 'events'; bytes: Uint8Array<ArrayBuffer> }
  /** Parse and verify an artifact; `buildFormats`: the texts of the formats it was built against. */
  | { kind: 'read'; bytes: Uint8Array<ArrayBuffer>; buildFormats?: { system: string; text: string }[]; providers?: ProviderDefinition[] }
  | { kind: 'cell'; spec: ProgramSpecJson; manifest: Manifest; profile: CompatProfileRows; settings: CompatSettings };

export type VerifyOutcome =
  | { ok: true; events: string[] }
  | { ok: true; read: ReadArtifact }
  | { ok: true; cell: CompatCell }
  | { ok: false; error: { code: RegistryErrorCode; message: string; context: Record<string, unknown> } };

function parsedFormats(rows: { system: string; text: string }[]): EventFormat[] {
  const out: EventFormat[] = [];
  for (const f of rows) {
    try {
      out.push(parseEventFormat(f.text, { system: f.system }));
    } catch (err) {
      if (!isFormatError(err)) throw err;
    }
  }
  return out;
}

async function eventsOf(bytes: Uint8Array): Promise<string[]> {
  // A script artifact carries its own formats; the others name their events in the spec.
  if (isScriptArtifact(bytes)) return [];
  let spec: Awaited<ReturnType<typeof readProgramSpec>>;
  try {
    spec = await readProgramSpec(bytes);
  } catch (err) {
    if (isCompatError(err) || isFormatError(err)) throw new RegistryError('bad_request', `publish: ${err.message}`, {}, { cause: err });
    throw err;
  }
  return [...new Set(spec.programs.flatMap((p) => [...(p.attach.kind === 'tracepoint' ? [p.attach.event] : []), ...p.fieldRelocations.map((r) => r.event)]))];
}

async function run(task: VerifyTask): Promise<VerifyOutcome> {
  try {
    if (task.kind === 'events') return { ok: true, events: await eventsOf(task.bytes) };
    if (task.kind === 'read') {
      const formats = task.buildFormats;
      return { ok: true, read: await readArtifact(task.bytes, formats ? async () => parsedFormats(formats) : undefined, task.providers) };
    }
    return { ok: true, cell: computeCell(specFromJson(task.spec), task.manifest, compatProfileOf(task.profile), task.settings) };
  } catch (err) {
    if (err instanceof RegistryError) return { ok: false, error: { code: err.code, message: err.message, context: err.context } };
    throw err;
  }
}

serveTasks<VerifyTask, VerifyOutcome>(run);
