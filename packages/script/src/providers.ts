// Provider probes (`proc:::exec`) in scripts: a resolver over packages/compat's provider
// definitions, and the verdict of a script on a kernel when its probes resolve through providers.
import { type CompatOptions, checkCompat, type KernelProfile, type ProviderDefinition, resolveProviderProbe, type Verdict, type VerdictReason, type VerdictStatus } from '@probeyard/compat';
import { type CompiledScript, compileScript, type ProviderProgram } from './compile.js';
import type { ProviderResolver } from './probes.js';
import { type ScriptTarget, targetOfProfile } from './target.js';

/** A provider probe that no implementation serves on a kernel. */
export interface ProviderFailure {
  /** `proc:::fork` as written. */
  probe: string;
  /** `unknown` when only missing facts (a partial profile) stood in the way. */
  status: 'incompatible' | 'unknown';
  reason: string;
}

/**
 * A {@link ProviderResolver} over provider definitions (one version of each provider: the one the
 * program pins). `failures`, when given, collects the probes that did not resolve, with their status.
 */
export function providerResolver(providers: readonly ProviderDefinition[], failures?: ProviderFailure[]): ProviderResolver {
  return (probe, target) => {
    if (probe.module !== '' || probe.function !== '') {
      return { error: 'provider probes are written provider:::probe (module and function are left empty here)', hint: `for example ${probe.provider}:::${probe.name}` };
    }
    const def = providers.find((p) => p.name === probe.provider);
    if (def === undefined) {
      const known = providers.map((p) => `${p.name}@${p.version}`);
      const reason = `no provider '${probe.provider}' is known here`;
      failures?.push({ probe: probe.text, status: 'incompatible', reason });
      return { error: reason, hint: known.length > 0 ? `providers here: ${known.join(', ')}` : undefined };
    }
    const r = resolveProviderProbe(def, probe.name, target);
    if (!r.ok) {
      failures?.push({ probe: probe.text, status: r.status, reason: r.reason });
      return { error: r.reason };
    }
    return { system: r.system, event: r.event, args: r.args, via: r.via, implementation: r.implementation, provider: r.provider, version: r.version };
  };
}

/** The target of a profile whose missing events are unknown, not absent, when the profile is partial. */
function providerTarget(profile: KernelProfile): ScriptTarget {
  const t = targetOfProfile(profile);
  if (profile.complete) return t;
  return { ...t, hasEvent: (system, event) => (profile.events.has(`${system}/${event}`) ? true : undefined) };
}

/** Options of {@link checkScriptCompat}. */
export interface ScriptCompatOptions extends CompatOptions {
  /** The providers the script's provider probes resolve through (the versions it pins). */
  providers: readonly ProviderDefinition[];
  /** Name of the source in diagnostics. */
  name?: string;
}

const viaText = (p: ProviderProgram) => `${p.probe} via ${p.via}`;

function annotate(v: Verdict, programs: readonly ProviderProgram[]): Verdict {
  for (const pv of v.programs) {
    const p = programs.find((x) => x.program === pv.program);
    if (p === undefined) continue;
    pv.via = viaText(p);
    if (p.provider !== '' && p.version !== '') pv.provider = { probe: p.probe, provider: p.provider, version: p.version, implementation: p.implementation };
  }
  return v;
}

/**
 * The verdict of a script on a kernel when some of its probes are provider probes. `build` is the
 * compile the registry holds (the script compiled for the formats it was published against,
 * through the same providers). Each provider probe is resolved on this kernel:
 * - the same implementations as the build: the build's spec is relocated and verified, as any
 *   program (`compatible`, `relocated`, or refused with the reason);
 * - other implementations (the kernel expresses the fact differently: `errors` → `error`, an inline
 *   `char[16]` → `__data_loc`): the script is compiled for this kernel through them and verified;
 *   it runs (`relocated`, each program saying which implementation) or is refused;
 * - a probe that no implementation serves: `incompatible` (`provider-unresolved`, with each
 *   implementation's reason), or `unknown` when only a partial profile's missing events stood in
 *   the way.
 * Every program of a provider probe carries `via` (`proc:::fork via proc@1.2.0, implementation for
 * __data_loc parent_comm`). The verdict's `relocated` spec is what runs on this kernel.
 */
export async function checkScriptCompat(text: string, build: CompiledScript, profile: KernelProfile, options: ScriptCompatOptions): Promise<Verdict> {
  const failures: ProviderFailure[] = [];
  const here = await compileScript(text, { target: providerTarget(profile), providers: providerResolver(options.providers, failures), ...(options.name !== undefined ? { name: options.name } : {}) });
  const compat: CompatOptions = options.strictCharSign === undefined ? {} : { strictCharSign: options.strictCharSign };
  if (!here.ok) {
    if (failures.length === 0) {
      // not a provider's doing (a raw tracepoint's field is gone, …): the build's relocation says why
      return annotate(checkCompat(build.spec, profile, compat), build.providerPrograms);
    }
    const status: VerdictStatus = failures.some((f) => f.status === 'incompatible') ? 'incompatible' : 'unknown';
    const reasons: VerdictReason[] = failures.map((f) => ({ kind: 'provider-unresolved', program: f.probe, event: '', text: `${f.probe}: ${f.reason}` }));
    const base = checkCompat(build.spec, profile, compat);
    return {
      ...base,
      status,
      programs: [{ program: failures.map((f) => f.probe).join(', '), event: undefined, status, reasons, changes: [], absentFields: [] }],
      reasons,
      skipped: [],
      relocated: undefined,
    };
  }
  // the same implementations (at any version of the provider) compile to the same code: relocate the build
  const key = (p: ProviderProgram) => `${p.program} ${p.probe} ${p.event} ${p.implementation}`;
  const same = build.providerPrograms.map(key).sort().join('\n') === here.providerPrograms.map(key).sort().join('\n');
  if (same) return annotate(checkCompat(build.spec, profile, compat), here.providerPrograms);
  const v = annotate(checkCompat(here.spec, profile, compat), here.providerPrograms);
  for (const pv of v.programs) {
    const now = here.providerPrograms.find((p) => p.program === pv.program);
    if (now === undefined) continue;
    const then = build.providerPrograms.find((p) => p.probe === now.probe);
    if (then !== undefined && then.implementation === now.implementation && then.event === now.event) continue;
    pv.changes.push(`${now.probe}: through ${now.via} on ${now.event}${then === undefined ? '' : ` (built through ${then.via} on ${then.event})`}`);
    if (pv.status === 'compatible') pv.status = 'relocated';
  }
  if (v.status === 'compatible' && v.programs.some((p) => p.status === 'relocated')) v.status = 'relocated';
  return v;
}
