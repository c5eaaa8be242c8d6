// One compatibility cell (version × kernel profile): packages/compat's verdict — relocation by
// field name, then the verifier on the relocated programs — and the field diffs behind it. Pure (no
// database): the server computes cells on its verifier workers (src/jobs/verify-worker.ts).
import { buildManifest, checkCompat, findProfileEvent, type KernelProfile, layoutOf, type LayoutField, type Manifest, type ProgramSpec, type ProviderDefinition, providerProbeOf, readProgramSpec, verdictSummary } from '@probeyard/compat';
import { type EventFormat, parseEventFormat } from '@probeyard/formats';
import { checkScriptCompat, compileScriptArtifact, decodeScriptArtifact, formatDiagnostics, isScriptArtifact, providerResolver } from '@probeyard/script';

/** One field a version reads whose layout on a kernel is not the one it was built for. */
export interface FieldDiff {
  /** `system/event` (or the bare event name). */
  event: string;
  field: string;
  /** What changed from the build-time field to the kernel's. */
  changes: ('removed' | 'event-missing' | 'moved' | 'resized' | 'signedness-changed' | 'became-dynamic' | 'became-static')[];
  /** The field as built (null when the program reads it by name without a build-time layout). */
  built: { byteOffset: number | null; size: number | null; signed: boolean | null; dataLoc: boolean } | null;
  /** The field on the kernel (null when the kernel lacks it). */
  kernel: LayoutField | null;
  text: string;
}

/** What `CompatResult.reasons` holds: the verdict's programs and reasons, and the field diffs behind them. */
export interface StoredReasons {
  programs: ReturnType<typeof verdictSummary>['programs'];
  reasons: ReturnType<typeof verdictSummary>['reasons'];
  fieldDiffs: FieldDiff[];
}

/** Field-by-field differences between what a manifest was built against and a kernel profile. */
export function fieldDiffsOf(manifest: Manifest, profile: KernelProfile): FieldDiff[] {
  const out: FieldDiff[] = [];
  const seen = new Set<string>();
  for (const f of manifest.fields) {
    const key = `${f.event}.${f.field}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const slash = f.event.indexOf('/');
    const found = findProfileEvent(profile, slash < 0 ? f.event : f.event.slice(slash + 1), slash < 0 ? undefined : f.event.slice(0, slash));
    const built = { byteOffset: f.byteOffset ?? null, size: f.size ?? null, signed: f.signed ?? null, dataLoc: f.dataLoc };
    const hasBuilt = f.byteOffset !== undefined;
    if (!found) {
      out.push({ event: f.event, field: f.field, changes: ['event-missing'], built: hasBuilt ? built : null, kernel: null, text: `${f.event}: not in this kernel` });
      continue;
    }
    const kernel = layoutOf(found.format).fields.find((x) => x.name === f.field) ?? null;
    if (!kernel) {
      out.push({ event: f.event, field: f.field, changes: ['removed'], built: hasBuilt ? built : null, kernel: null, text: `${f.event}.${f.field}: no such field in this kernel` });
      continue;
    }
    const changes: FieldDiff['changes'] = [];
    const parts: string[] = [];
    if (f.dataLoc !== (kernel.dynamic !== undefined)) {
      changes.push(kernel.dynamic ? 'became-dynamic' : 'became-static');
      parts.push(kernel.dynamic ? `became __${kernel.dynamic}` : 'no longer __data_loc');
    }
    // Offsets and sizes say nothing once a field turned from inline to `__data_loc` (or back).
    if (hasBuilt && changes.length === 0) {
      // A manifest field's offset includes the addend inside the field (an array element); compare the field start.
      if (f.kind === 'byte-offset' && f.byteOffset !== undefined && (f.byteOffset < kernel.byteOffset || f.byteOffset >= kernel.byteOffset + kernel.size)) {
        changes.push('moved');
        parts.push(`offset ${f.byteOffset} → ${kernel.byteOffset}`);
      }
      if (f.kind !== 'byte-offset' && f.size !== undefined && f.size !== kernel.size) {
        changes.push('resized');
        parts.push(`size ${f.size} → ${kernel.size}`);
      } else if (f.kind === 'byte-offset' && f.size !== undefined && f.size > kernel.size) {
        changes.push('resized');
        parts.push(`read of ${f.size} bytes, field is ${kernel.size}`);
      }
      if (f.signed !== undefined && f.signed !== kernel.signed) {
        changes.push('signedness-changed');
        parts.push(kernel.signed ? 'now signed' : 'now unsigned');
      }
    }
    if (changes.length > 0) out.push({ event: f.event, field: f.field, changes, built: hasBuilt ? built : null, kernel, text: `${f.event}.${f.field}: ${parts.join(', ')}` });
  }
  return out;
}

/** A tenant's compat settings (`Tenant.strictCharSign`: also refuse a plain `char` signedness change). */
export interface CompatSettings {
  strictCharSign: boolean;
}

/** A stored profile's formats as plain rows (what crosses to a worker). */
export interface CompatProfileRows {
  release: string;
  machine: string;
  /** Every event of the kernel (a tracefs, a full dump), or only some (a trace.dat): a missing event is incompatible, or unknown. */
  complete: boolean;
  contentHash: string;
  formats: { system: string; event: string; formatHash: string; text: string }[];
}

/** A profile's rows as packages/compat's `KernelProfile`; a format that does not parse is one of its errors. */
export function compatProfileOf(p: CompatProfileRows): KernelProfile {
  const eventsMap = new Map<string, string>();
  const formats = new Map<string, EventFormat>();
  const errors: KernelProfile['errors'] = [];
  let wordSize: 4 | 8 | undefined;
  for (const f of [...p.formats].sort((a, b) => (`${a.system}/${a.event}` < `${b.system}/${b.event}` ? -1 : 1))) {
    const key = `${f.system}/${f.event}`;
    try {
      if (!formats.has(f.formatHash)) {
        const parsed = parseEventFormat(f.text, { system: f.system });
        formats.set(f.formatHash, parsed);
        wordSize ??= parsed.longSize;
      }
      eventsMap.set(key, f.formatHash);
    } catch (err) {
      errors.push({ path: `${key}/format`, message: (err as Error).message });
    }
  }
  // Only the spec's events may have been loaded; an event missing from them is missing from the
  // stored profile too, so its completeness holds for them.
  return { release: p.release, arch: p.machine, wordSize, hash: p.contentHash, source: 'json', complete: p.complete, events: eventsMap, formats, errors };
}

/** The verdict of one version on one profile, as stored. */
export interface CompatCell {
  verdict: 'compatible' | 'relocated' | 'incompatible' | 'unknown';
  reasons: StoredReasons;
}

/** The verdict of one spec on one profile, as stored. */
export function computeCell(spec: ProgramSpec, manifest: Manifest, profile: KernelProfile, settings: CompatSettings = { strictCharSign: false }): CompatCell {
  const summary = verdictSummary(checkCompat(spec, profile, { strictCharSign: settings.strictCharSign }));
  return { verdict: summary.status, reasons: { programs: summary.programs, reasons: summary.reasons, fieldDiffs: fieldDiffsOf(manifest, profile) } };
}

/**
 * The cell of a script with provider probes (packages/script `checkScriptCompat`): its artifact
 * compiled through the pinned providers' newest releases (the build), then resolved on the
 * profile — the build relocated where the same implementations apply, compiled through others
 * where the kernel needs them, `provider-unresolved` where none applies. Each program's `via`
 * names the provider version and implementation. A compile and a verification per cell: the
 * server computes it on a verifier worker (`VerifierPool.providerCell`), under the cells' deadline.
 */
export async function computeProviderCell(artifact: Uint8Array, manifest: Manifest, providers: ProviderDefinition[], pins: Record<string, number>, rows: CompatProfileRows, settings: CompatSettings): Promise<CompatCell> {
  const profile = compatProfileOf(rows);
  const missing = Object.entries(pins).filter(([name]) => !providers.some((p) => p.name === name));
  const unresolved = (text: string): CompatCell => ({ verdict: 'incompatible', reasons: { programs: [], reasons: [{ kind: 'provider-unresolved', program: '', event: '', text }], fieldDiffs: [] } });
  if (missing.length > 0) return unresolved(`no release of ${missing.map(([n, m]) => `${n}@${m}.x`).join(', ')} to resolve through (all yanked, or the provider is gone)`);
  if (!isScriptArtifact(artifact)) {
    // a compiled object with provider probes (`SEC("provider/proc/fork")`, docs/PROVIDERS-C.md):
    // each probe bound through the pinned releases, its arguments record relocated by name, verified
    const spec = await readProgramSpec(artifact);
    const v = checkCompat(spec, profile, { providers, strictCharSign: settings.strictCharSign });
    const summary = verdictSummary(v);
    // an arguments record is Probeyard's, not the kernel's: its fields have no kernel layout to diff
    const own = new Set(spec.programs.filter((p) => providerProbeOf(p.attach) !== undefined).map((p) => p.name));
    const kernelFields = { ...manifest, fields: manifest.fields.filter((f) => !own.has(f.program)) };
    return { verdict: summary.status, reasons: { programs: summary.programs, reasons: summary.reasons, fieldDiffs: fieldDiffsOf(kernelFields, profile) } };
  }
  const build = await compileScriptArtifact(artifact, { name: 'script', providers: providerResolver(providers) });
  if (!build.ok) return unresolved(`the script does not compile through ${providers.map((p) => `${p.name}@${p.version}`).join(', ')} for the formats it was published against: ${formatDiagnostics(build.source, build.diagnostics).trimEnd()}`);
  const v = await checkScriptCompat(decodeScriptArtifact(artifact).source, build, profile, { providers, strictCharSign: settings.strictCharSign });
  const summary = verdictSummary(v);
  return { verdict: summary.status, reasons: { programs: summary.programs, reasons: summary.reasons, fieldDiffs: fieldDiffsOf(v.relocated ? buildManifest(v.relocated) : manifest, profile) } };
}
