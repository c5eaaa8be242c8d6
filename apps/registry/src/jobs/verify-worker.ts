// The verifier's worker thread (a src/jobs/worker-pool.ts worker started by
// src/jobs/verifier-pool.ts, one task at a time): reads and verifies a published artifact, or
// computes one compat cell (relocation and the verifier on the relocated programs; for a script
// with provider probes, its compile through the pinned providers first). A refusal of
// the registry (`bad_request`, `program_rejected` with its diagnostics) comes back as data.
import { isCompatError, type Manifest, type ProgramSpecJson, type ProviderDefinition, readProgramSpec, specFromJson } from '@probeyard/compat';
import { type EventFormat, isFormatError, parseEventFormat } from '@probeyard/formats';
import { compileScript, formatDiagnostics, isScriptArtifact, noTarget, parseScript } from '@probeyard/script';
import { type ReadArtifact, readArtifact } from '../data/artifact-read.js';
import { type CompatCell, type CompatProfileRows, type CompatSettings, compatProfileOf, computeCell, computeProviderCell } from '../data/compat-cell.js';
import { RegistryError, type RegistryErrorCode } from '../errors.js';
import { serveTasks } from './worker-serve.js';

export type VerifyTask =
  /** The events an artifact reads (to fetch the formats it was built against), without verifying it. */
  | { kind: 'events'; bytes: Uint8Array<ArrayBuffer> }
  /** Parse and verify an artifact; `buildFormats`: the texts of the formats it was built against. */
  | { kind: 'read'; bytes: Uint8Array<ArrayBuffer>; buildFormats?: { system: string; text: string }[]; providers?: ProviderDefinition[] }
  | { kind: 'cell'; spec: ProgramSpecJson; manifest: Manifest; profile: CompatProfileRows; settings: CompatSettings }
  /** The cell of a script with provider probes: compiled through the pinned releases, resolved on the profile, verified. */
  | { kind: 'provider-cell'; artifact: Uint8Array<ArrayBuffer>; manifest: Manifest; providers: ProviderDefinition[]; pins: Record<string, number>; profile: CompatProfileRows; settings: CompatSettings }
  /** A live session's program: a script parsed (each agent compiles it for its own kernel), assembly assembled and verified. */
  | { kind: 'live'; language: 'script' | 'asm'; source: string };

export type VerifyOutcome =
  | { ok: true; events: string[] }
  | { ok: true; read: ReadArtifact }
  | { ok: true; cell: CompatCell }
  | { ok: true; live: { programs: number } }
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

/**
 * Checks a live session's program as publish would: a script must parse (compiling needs each
 * agent's kernel: the agents compile it); assembly is assembled and every program verified.
 */
async function checkLive(language: 'script' | 'asm', source: string): Promise<{ programs: number }> {
  if (language === 'script') {
    let programs: number;
    try {
      programs = parseScript(source).probes.length;
    } catch {
      // the compiler reports a parse error with line, column and caret
      const r = await compileScript(source, { name: 'live', target: noTarget });
      if (r.ok) throw new RegistryError('bad_request', 'live start: the script does not parse');
      throw new RegistryError('bad_request', `live start: the script does not parse:\n${formatDiagnostics(r.source, r.diagnostics).trimEnd()}`, {
        diagnostics: r.diagnostics.map((d) => ({ line: d.line, column: d.column, message: d.message })),
      });
    }
    return { programs };
  }
  const bytes = new TextEncoder().encode(source);
  if (isScriptArtifact(bytes)) throw new RegistryError('bad_request', 'live start: this is a script artifact, not assembly');
  try {
    const read = await readArtifact(bytes);
    return { programs: read.report.programs.length };
  } catch (err) {
    if (err instanceof RegistryError) throw new RegistryError(err.code, err.message.replace(/^publish: /, 'live start: '), err.context);
    throw err;
  }
}

async function run(task: VerifyTask): Promise<VerifyOutcome> {
  try {
    if (task.kind === 'live') return { ok: true, live: await checkLive(task.language, task.source) };
    if (task.kind === 'events') return { ok: true, events: await eventsOf(task.bytes) };
    if (task.kind === 'read') {
      const formats = task.buildFormats;
      return { ok: true, read: await readArtifact(task.bytes, formats ? async () => parsedFormats(formats) : undefined, task.providers) };
    }
    if (task.kind === 'provider-cell') return { ok: true, cell: await computeProviderCell(task.artifact, task.manifest, task.providers, task.pins, task.profile, task.settings) };
    return { ok: true, cell: computeCell(specFromJson(task.spec), task.manifest, compatProfileOf(task.profile), task.settings) };
  } catch (err) {
    if (err instanceof RegistryError) return { ok: false, error: { code: err.code, message: err.message, context: err.context } };
    throw err;
  }
}

serveTasks<VerifyTask, VerifyOutcome>(run);
