// Reading a published artifact: parse it (an ELF object, Probeyard assembly or a script artifact)
// into a spec, verify every program in it, build the manifest. Pure (no database): it runs on a
// verifier worker (src/jobs/verify-worker.ts), never on the server's thread, since verifying one
// small hostile program can take seconds.
import { buildManifest, isCompatError, type Manifest, mapDefsOf, type ProgramSpec, type ProgramSpecJson, type ProviderDefinition, providerProbeOf, readProgramSpec, specToJson } from '@probeyard/compat';
import { type EventFormat, isFormatError } from '@probeyard/formats';
import { compileScriptArtifact, formatDiagnostics, isScriptArtifact, isScriptError, providerResolver } from '@probeyard/script';
import { type Diagnostic, PERF_MAX_TRACE_SIZE, verify } from '@probeyard/verifier';
import { RegistryError } from '../errors.js';

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
  /** The spec as stored (packages/compat `specToJson`): structured-cloneable, so it crosses from a worker as it is. */
  spec: ProgramSpecJson;
  manifest: Manifest;
  report: { ok: boolean; programs: ProgramReport[] };
  /** The providers a script's (or a compiled object's) provider probes went through (name and version), when it has any. */
  providers?: { name: string; version: string }[];
}

/** The spec of a script artifact; a script that does not compile (or a malformed artifact) is `bad_request`. */
async function scriptArtifactSpec(bytes: Uint8Array, providers: readonly ProviderDefinition[]): Promise<{ spec: ProgramSpec; used: { name: string; version: string }[] }> {
  try {
    const r = await compileScriptArtifact(bytes, { name: 'script', providers: providerResolver(providers) });
    if (r.ok) {
      const names = new Set(r.providerPrograms.map((p) => p.probe.slice(0, p.probe.indexOf(':'))));
      const used = providers.filter((p) => names.has(p.name)).map((p) => ({ name: p.name, version: p.version }));
      return { spec: r.spec, used };
    }
    throw new RegistryError('bad_request', `publish: the script does not compile:\n${formatDiagnostics(r.source, r.diagnostics).trimEnd()}`);
  } catch (err) {
    if (isScriptError(err)) throw new RegistryError('bad_request', `publish: ${err.message}`, {}, { cause: err });
    throw err;
  }
}

/**
 * The providers a compiled object's provider probes (`SEC("provider/proc/fork")`, docs/PROVIDERS-C.md)
 * go through, of those the tenant sees; a probe of a provider not known here, or that its provider
 * does not declare, is `bad_request` in words.
 */
function providersOfObject(spec: ProgramSpec, providers: readonly ProviderDefinition[]): { name: string; version: string }[] {
  const used = new Map<string, ProviderDefinition>();
  for (const p of spec.programs) {
    const probe = providerProbeOf(p.attach);
    if (probe === undefined) continue;
    const def = providers.find((d) => d.name === probe.provider);
    const text = `${probe.provider}:::${probe.probe}`;
    if (def === undefined) {
      const here = providers.map((d) => `${d.name}@${d.version}`).join(', ');
      throw new RegistryError('bad_request', `publish: program ${p.name} attaches to ${text}, but no provider '${probe.provider}' is known here (${here ? `providers here: ${here}` : 'none is published'})`);
    }
    if (!def.probes.some((x) => x.name === probe.probe)) {
      throw new RegistryError('bad_request', `publish: program ${p.name} attaches to ${text}, but ${def.name}@${def.version} has no probe '${probe.probe}' (its probes: ${def.probes.map((x) => x.name).join(', ')})`);
    }
    used.set(def.name, def);
  }
  return [...used.values()].map((d) => ({ name: d.name, version: d.version }));
}

/**
 * Parses an artifact (BPF ELF object, Probeyard assembly or a script artifact) into a spec — with the formats of the
 * kernel it was built against when `buildFormatsOf` gives them — and verifies every program in it. A program reading fields by name without a build-time layout (assembly symbols) has
 * placeholder offsets until relocation, so it is verified against a raw record (every bound,
 * pointer, map and helper rule; the field layout is checked per kernel by the compat verdict).
 * Unreadable bytes are `bad_request`; a verifier rejection is `program_rejected` with the
 * diagnostics in the error's context.
 */
export async function readArtifact(bytes: Uint8Array, buildFormatsOf?: (events: Set<string>) => Promise<EventFormat[]>, providers: readonly ProviderDefinition[] = []): Promise<ReadArtifact> {
  if (bytes.length === 0) throw new RegistryError('bad_request', 'publish: the artifact is empty');
  let spec: ProgramSpec;
  let used: { name: string; version: string }[] = [];
  if (isScriptArtifact(bytes)) {
    // a script artifact (packages/script: the source and the formats it was compiled for) compiles here again
    ({ spec, used } = await scriptArtifactSpec(bytes, providers));
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
    used = providersOfObject(spec, providers);
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
  return { spec: specToJson(spec), manifest: buildManifest(spec), report, ...(used.length > 0 ? { providers: used } : {}) };
}
