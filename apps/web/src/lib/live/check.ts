// The live editor's check, run in the browser as the user types: compile (a script, with
// packages/script) or assemble (Probeyard assembly, packages/compat's reader), then relocate and
// verify for the chosen agent's kernel (packages/compat's checkCompat, which runs
// packages/verifier) — the same steps the agent takes before it runs the program. The formats of
// the events the program names come from the registry (`kernel.formatsFor`) through `fetchFormats`.
import { checkCompat, type KernelProfile, type ProgramSpec, type ProviderDefinition, profileOfFormatSet, readProgramSpec, type Verdict } from '@probeyard/compat';
import { buildEventFormatSet } from '@probeyard/formats';
import { compileScript, parseScript, providerResolver, type ScriptDiagnostic, targetOfFormats } from '@probeyard/script';

export type LiveLanguage = 'script' | 'asm';

/** What `kernel.formatsFor` answers. */
export interface FormatsAnswer {
  profile: { name: string; release: string; machine: string; complete: boolean } | null;
  formats: { system: string; event: string; text: string }[];
  missing: string[];
  truncated: boolean;
}

/** One problem, placed in the text (1-based line and column, offsets for the editor). */
export interface LiveDiagnostic {
  severity: 'error' | 'warning';
  message: string;
  hint?: string;
  from: number;
  to: number;
  line: number;
  column: number;
}

export interface FieldRead {
  program: string;
  event: string;
  field: string;
}

export type CheckResult =
  | { kind: 'errors'; diagnostics: LiveDiagnostic[]; profile: FormatsAnswer['profile'] }
  | { kind: 'no-kernel'; message: string }
  | {
      kind: 'checked';
      spec: ProgramSpec;
      /** The artifact `program.publish` stores: a script's artifact, or the assembly's bytes. */
      artifact: Uint8Array;
      fields: FieldRead[];
      verdict: Verdict;
      warnings: LiveDiagnostic[];
      profile: NonNullable<FormatsAnswer['profile']>;
      truncated: boolean;
    };

const encoder = new TextEncoder();

function toLive(d: ScriptDiagnostic): LiveDiagnostic {
  return { severity: d.severity, message: d.message, ...(d.hint ? { hint: d.hint } : {}), from: d.start, to: Math.max(d.end, d.start), line: d.line, column: d.column };
}

/** Offsets of each line's start, to turn a 1-based line and column into an offset. */
function offsetOf(text: string, line: number, column: number): number {
  let at = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf('\n', at);
    if (nl < 0) return text.length;
    at = nl + 1;
  }
  return Math.min(text.length, at + Math.max(0, column - 1));
}

/** `tracepoint:sys:ev` / `t:sys:ev` attach points of a script, as `sys:ev` patterns (wildcards kept). */
export function scriptEvents(text: string): string[] {
  return scriptAttachPoints(text).events;
}

/**
 * A script's attach points: tracepoint events as `sys:ev` patterns (wildcards kept), and the
 * providers its provider probes (`io:::done`) name with the probes of each.
 */
export function scriptAttachPoints(text: string): { events: string[]; providers: Map<string, Set<string>> } {
  const ast = parseScript(text);
  const events = new Set<string>();
  const providers = new Map<string, Set<string>>();
  for (const p of ast.probes) {
    for (const a of p.attachPoints) {
      const m = /^(?:tracepoint|t):([^:\s]+):([^:\s]+)$/.exec(a.text);
      if (m) events.add(`${m[1]}:${m[2]}`);
      const q = /^([a-z][a-z0-9_]*):::([A-Za-z0-9_]+)$/.exec(a.text);
      if (q) providers.set(q[1]!, (providers.get(q[1]!) ?? new Set()).add(q[2]!));
    }
  }
  return { events: [...events], providers };
}

function profileOf(answer: FormatsAnswer & { profile: NonNullable<FormatsAnswer['profile']> }): Promise<KernelProfile> {
  return buildEventFormatSet(answer.formats.map((f) => ({ path: `events/${f.system}/${f.event}/format`, text: f.text }))).then((set) =>
    profileOfFormatSet(set, 'events-tree', { release: answer.profile.release, arch: answer.profile.machine, complete: answer.profile.complete }),
  );
}

function fieldsOf(spec: ProgramSpec): FieldRead[] {
  const seen = new Set<string>();
  const out: FieldRead[] = [];
  for (const p of spec.programs) {
    const event = p.attach.kind === 'tracepoint' ? `${p.attach.system}/${p.attach.event}` : p.name;
    for (const r of p.fieldRelocations) {
      const key = `${event}\u0000${r.field}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ program: p.name, event, field: r.field });
    }
  }
  return out;
}

/**
 * Checks `text` for the kernel `fetchFormats` answers for: diagnostics at their place, or the
 * fields read and the verdict (compatible / relocated with the moves / incompatible with why).
 */
export async function checkProgram(
  text: string,
  language: LiveLanguage,
  fetchFormats: (events: string[]) => Promise<FormatsAnswer>,
  fetchProviders: (names: string[]) => Promise<ProviderDefinition[]> = async () => [],
): Promise<CheckResult> {
  if (language === 'script') {
    let events: string[];
    let providers: ProviderDefinition[] = [];
    try {
      const points = scriptAttachPoints(text);
      events = points.events;
      if (points.providers.size > 0) {
        // provider probes: the releases the agent will compile through, and the events their implementations attach to
        providers = await fetchProviders([...points.providers.keys()]);
        const more = new Set(events);
        for (const def of providers) {
          for (const probe of def.probes) if (points.providers.get(def.name)?.has(probe.name)) for (const i of probe.implementations) more.add(`${i.system}:${i.event}`);
        }
        events = [...more];
      }
    } catch (e) {
      // a syntax error: the compiler reports it with its place (before any kernel is needed)
      const r = await compileScript(text, { name: 'live' });
      if (!r.ok) return { kind: 'errors', diagnostics: r.diagnostics.map(toLive), profile: null };
      throw e;
    }
    const answer = events.length ? await fetchFormats(events) : { profile: null, formats: [], missing: [], truncated: false };
    if (events.length && !answer.profile) return { kind: 'no-kernel', message: 'this agent has not reported its kernel yet: nothing to compile against' };
    const profile = answer.profile ?? { name: '', release: '', machine: '', complete: false };
    const kernel = await profileOf({ ...answer, profile });
    const target = targetOfFormats(
      answer.formats.map((f) => kernel.formats.get(kernel.events.get(`${f.system}/${f.event}`) ?? '')).filter((f) => f !== undefined),
      answer.profile ? `kernel ${profile.release || profile.name}` : 'no kernel formats',
    );
    const r = await compileScript(text, { target, name: 'live', providers: providerResolver(providers) });
    if (!r.ok) {
      return {
        kind: 'errors',
        diagnostics: r.diagnostics.map(toLive),
        profile: answer.profile,
      };
    }
    const verdict = checkCompat(r.spec, kernel);
    return {
      kind: 'checked',
      spec: r.spec,
      artifact: r.artifact,
      fields: fieldsOf(r.spec),
      verdict,
      warnings: r.warnings.map(toLive),
      profile,
      truncated: answer.truncated,
    };
  }
  const bytes = encoder.encode(text);
  let spec: ProgramSpec;
  try {
    spec = await readProgramSpec(bytes);
  } catch (e) {
    const cause = (e as { cause?: { line?: number; column?: number } }).cause;
    const message = e instanceof Error ? e.message.replace(/^read assembly: (line \d+, column \d+: )?/, '') : String(e);
    const line = cause?.line ?? 1;
    const column = cause?.column ?? 1;
    const from = offsetOf(text, line, column);
    const lineEnd = text.indexOf('\n', from);
    return { kind: 'errors', diagnostics: [{ severity: 'error', message, from, to: lineEnd < 0 ? text.length : lineEnd, line, column }], profile: null };
  }
  const events = [...new Set(spec.programs.flatMap((p) => (p.attach.kind === 'tracepoint' ? [`${p.attach.system}:${p.attach.event}`] : [])))];
  if (events.length === 0) {
    return { kind: 'errors', diagnostics: [{ severity: 'error', message: 'no tracepoint program: add a `.section tracepoint/SYSTEM/EVENT` and a program under it', from: 0, to: Math.min(text.length, text.indexOf('\n') < 0 ? text.length : text.indexOf('\n')), line: 1, column: 1 }], profile: null };
  }
  const answer = await fetchFormats(events);
  if (!answer.profile) return { kind: 'no-kernel', message: 'this agent has not reported its kernel yet: nothing to verify against' };
  const kernel = await profileOf({ ...answer, profile: answer.profile });
  const verdict = checkCompat(spec, kernel);
  return { kind: 'checked', spec, artifact: bytes, fields: fieldsOf(spec), verdict, warnings: [], profile: answer.profile, truncated: answer.truncated };
}
