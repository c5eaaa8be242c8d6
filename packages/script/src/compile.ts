import {
  type EventLayout,
  formatOfLayout,
  layoutOf,
  mapDefsOf,
  type ProgramSpec,
  runtimeProbeSection,
  type ScriptAction,
  type SpecMap,
  type SpecProgram,
} from '@probeyard/compat';
import { type EventFormat, sha256Hex } from '@probeyard/formats';
import { verify } from '@probeyard/verifier';
import type { Expr, ProbeNode, ScriptAst, Stmt } from './ast.js';
import { Checker, children, type MapInfo, MapTable, type ProgramUnit } from './check.js';
import { type GenShared, ProgramGen } from './codegen.js';
import { CompileAbort, type ScriptDiagnostic, ScriptError } from './errors.js';
import { layoutMap, type MapLayout, outputMapSpec, startMapSpec } from './map-layout.js';
import { parseScript } from './parser.js';
import { type ProviderResolver, type ResolvedProbe, resolveAttachPoint } from './probes.js';
import { formatDiagnostics, SourceText } from './source-text.js';
import { noTarget, type ScriptTarget, targetOf } from './target.js';

/** Options of {@link compileScript}. */
export interface CompileOptions {
  /** The kernel to compile for: event list and formats (default: none; `args` then cannot be read). */
  target?: ScriptTarget;
  /** Resolves provider probes (`proc:::exec`). */
  providers?: ProviderResolver;
  /** Name of the source in diagnostics (`prog.bt`; default `script`). */
  name?: string;
  /** Verify every program after generating it (default true); a refusal is an `internal` diagnostic. */
  verify?: boolean;
  /** `max_entries` of each script map (default 4096, bpftrace's). */
  mapMaxEntries?: number;
  /** Longest source accepted, in bytes (default 256 KiB; bpftrace's own tools are under 10 KiB). */
  maxSourceBytes?: number;
}

/** A compiled script. */
export interface CompiledScript {
  ok: true;
  spec: ProgramSpec;
  /** The artifact `probeyard publish` stores: the source and the layouts of the events it attaches to. */
  artifact: Uint8Array;
  warnings: ScriptDiagnostic[];
  source: SourceText;
  /** Each program of a provider probe, with the implementation it was compiled through. */
  providerPrograms: ProviderProgram[];
}

/** A program compiled for a provider probe: `proc:::fork` via `proc@1.2.0, implementation for …`. */
export interface ProviderProgram {
  program: string;
  /** The probe as written (`proc:::fork`). */
  probe: string;
  /** `system/event` of the implementation. */
  event: string;
  /** What the resolver said (`proc@1.2.0, implementation for __data_loc parent_comm`), '' when it said nothing. */
  via: string;
  /** Which implementation (`__data_loc parent_comm`), '' when the resolver said nothing: the same one at another provider version compiles to the same code. */
  implementation: string;
  /** The provider release (`proc`, `1.2.0`), '' when the resolver said nothing. */
  provider: string;
  version: string;
}

/** A script that did not compile: every diagnostic, with its place. */
export interface FailedScript {
  ok: false;
  diagnostics: ScriptDiagnostic[];
  source: SourceText;
}

export type CompileResult = CompiledScript | FailedScript;

const ARTIFACT_KIND = 'probeyard-script';

/** The JSON of a script artifact. */
export interface ScriptArtifact {
  kind: typeof ARTIFACT_KIND;
  version: 1;
  source: string;
  /** `system/event` of every tracepoint the script attaches to (after wildcards). */
  events: string[];
  /** The layouts it was compiled against (its `args.FIELD` types and build-time offsets). */
  layouts: EventLayout[];
}

/** Whether bytes are a script artifact (what {@link compileScript} makes and publish stores). */
export function isScriptArtifact(bytes: Uint8Array): boolean {
  const head = new TextDecoder().decode(bytes.subarray(0, 64));
  return /^\{\s*"kind"\s*:\s*"probeyard-script"/.test(head);
}

/** The artifact's bytes: canonical JSON, so the same compile gives the same digest. */
export function encodeScriptArtifact(source: string, events: readonly string[], formats: readonly EventFormat[]): Uint8Array {
  const a: ScriptArtifact = {
    kind: ARTIFACT_KIND,
    version: 1,
    source,
    events: [...new Set(events)].sort(),
    layouts: [...formats].sort((x, y) => (`${x.system}/${x.name}` < `${y.system}/${y.name}` ? -1 : 1)).map(layoutOf),
  };
  return new TextEncoder().encode(`${JSON.stringify(a)}\n`);
}

/** Reads an artifact; `malformed` when it is not one. */
export function decodeScriptArtifact(bytes: Uint8Array): ScriptArtifact {
  let a: unknown;
  try {
    a = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (e) {
    throw new ScriptError('malformed', `script artifact: not JSON: ${(e as Error).message}`, { cause: e });
  }
  const o = a as Partial<ScriptArtifact>;
  if (typeof o !== 'object' || o === null || o.kind !== ARTIFACT_KIND) throw new ScriptError('malformed', `script artifact: kind is not '${ARTIFACT_KIND}'`);
  if (o.version !== 1) throw new ScriptError('malformed', `script artifact: version ${String(o.version)}, want 1`);
  if (typeof o.source !== 'string') throw new ScriptError('malformed', 'script artifact: source: want a string');
  if (!Array.isArray(o.events) || !o.events.every((e) => typeof e === 'string' && /^[^/]+\/[^/]+$/.test(e))) throw new ScriptError('malformed', 'script artifact: events: want system/event strings');
  if (!Array.isArray(o.layouts)) throw new ScriptError('malformed', 'script artifact: layouts: want an array');
  for (const [i, l] of o.layouts.entries()) {
    const ok =
      typeof l === 'object' &&
      l !== null &&
      typeof l.system === 'string' &&
      typeof l.event === 'string' &&
      Array.isArray(l.fields) &&
      l.fields.every(
        (f) =>
          typeof f === 'object' &&
          f !== null &&
          typeof f.name === 'string' &&
          typeof f.type === 'string' &&
          Number.isSafeInteger(f.byteOffset) &&
          f.byteOffset >= 0 &&
          Number.isSafeInteger(f.size) &&
          f.size >= 0 &&
          f.byteOffset + f.size <= 1 << 20 &&
          typeof f.signed === 'boolean' &&
          typeof f.isCommon === 'boolean' &&
          (f.arrayLength === undefined || (Number.isSafeInteger(f.arrayLength) && f.arrayLength >= 0)) &&
          (f.dynamic === undefined || f.dynamic === 'data_loc' || f.dynamic === 'rel_loc'),
      );
    if (!ok) throw new ScriptError('malformed', `script artifact: layouts[${i}]: not an event layout`);
  }
  return o as ScriptArtifact;
}

/** The target an artifact was compiled against: its events, with the layouts it carries. */
export function artifactTarget(a: ScriptArtifact): ScriptTarget {
  const formats = new Map(a.layouts.map((l) => [`${l.system}/${l.event}`, formatOfLayout(l)]));
  return targetOf(a.events, (system, event) => formats.get(`${system}/${event}`), 'the formats the script was compiled against');
}

/** Compiles an artifact again (the registry does at publish): the same spec as the first compile. */
export async function compileScriptArtifact(bytes: Uint8Array, options: Omit<CompileOptions, 'target'> = {}): Promise<CompileResult> {
  const a = decodeScriptArtifact(bytes);
  return compileScript(a.source, { ...options, target: artifactTarget(a) });
}

/** Whether the probe's statements or predicate use a name (`elapsed`) or read the record (`args`). */
function uses(probe: ProbeNode, want: (e: Expr) => boolean): boolean {
  const exprs: Expr[] = [];
  const visit = (s: Stmt) => {
    switch (s.kind) {
      case 'expr':
        exprs.push(s.expr);
        break;
      case 'map-assign':
        exprs.push(s.map, s.value);
        break;
      case 'var-assign':
        exprs.push(s.value);
        break;
      case 'incdec':
        exprs.push(s.target);
        break;
      case 'if':
        exprs.push(s.cond);
        s.then.forEach(visit);
        s.else?.forEach(visit);
        break;
      case 'while':
        exprs.push(s.cond);
        s.body.forEach(visit);
        break;
      case 'block':
      case 'unroll':
        s.body.forEach(visit);
        break;
      case 'return':
      case 'break':
      case 'continue':
        break;
    }
  };
  if (probe.predicate) exprs.push(probe.predicate);
  probe.body.forEach(visit);
  const stack = [...exprs];
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (want(e)) return true;
    stack.push(...children(e));
  }
  return false;
}

const usesAction = (e: Expr) => e.kind === 'call' && ['printf', 'time', 'print', 'clear', 'zero', 'exit'].includes(e.name);
const usesElapsed = (e: Expr) => e.kind === 'ident' && e.name === 'elapsed';
const usesArgs = (e: Expr) => e.kind === 'field';

function programName(r: ResolvedProbe, probeIndex: number, taken: Set<string>): string {
  const base = (r.kind === 'runtime' ? r.probe.kind : r.event).replace(/[^A-Za-z0-9_]/g, '_');
  let name = `${base}_${probeIndex}`;
  for (let i = 1; taken.has(name); i++) name = `${base}_${probeIndex}_${i}`;
  taken.add(name);
  return name;
}

/**
 * Compiles a script to a {@link ProgramSpec}: one program per probe and attach point (wildcards
 * expanded against `target`), every `args.FIELD` read a field relocation by name (source
 * `script`), maps with their key and value types and display hints, BEGIN/END/interval as runtime
 * probes and printf/print/clear/zero/exit as actions of an output ring buffer (see compat's
 * `script-spec.ts`). Errors come back as diagnostics with line, column and hint.
 */
export async function compileScript(text: string, options: CompileOptions = {}): Promise<CompileResult> {
  const source = new SourceText(text, options.name);
  const target = options.target ?? noTarget;
  const diagnostics: ScriptDiagnostic[] = [];
  const report = (e: unknown) => {
    if (!(e instanceof CompileAbort)) throw e;
    const d = source.diagnostic(e.code, e.span, e.message, e.hint);
    if (!diagnostics.some((x) => x.start === d.start && x.message === d.message)) diagnostics.push(d);
  };
  const failed = (): FailedScript => ({ ok: false, diagnostics: diagnostics.sort((a, b) => a.start - b.start), source });

  const maxBytes = options.maxSourceBytes ?? 256 * 1024;
  if (text.length > maxBytes) {
    diagnostics.push(source.diagnostic('limit', { start: 0, end: 0 }, `script: ${text.length} characters, at most ${maxBytes}`));
    return failed();
  }
  let ast: ScriptAst;
  try {
    ast = parseScript(text);
  } catch (e) {
    report(e);
    return failed();
  }

  // expand the attach points
  const units: ProgramUnit[] = [];
  ast.probes.forEach((probe, probeIndex) => {
    const seen = new Set<string>();
    for (const ap of probe.attachPoints) {
      try {
        for (const resolved of resolveAttachPoint(ap, target, options.providers)) {
          const key = resolved.kind === 'tracepoint' ? `${resolved.system}/${resolved.event}` : resolved.name;
          if (seen.has(key)) continue;
          seen.add(key);
          const format = resolved.kind === 'tracepoint' ? target.format(resolved.system, resolved.event) : undefined;
          units.push({ probe, probeIndex, resolved, format, vars: new Map() });
        }
      } catch (e) {
        report(e);
      }
    }
  });
  if (units.length > 4096) {
    diagnostics.push(source.diagnostic('limit', ast.probes[0]!.span, `script: ${units.length} programs after expanding wildcards, at most 4096`));
  }
  if (diagnostics.length > 0) return failed();

  // types of maps and variables: rounds until nothing changes, then a final round that reports
  const maps = new MapTable();
  for (let round = 0; round < 8; round++) {
    maps.changed = false;
    for (const u of units) {
      const before = JSON.stringify([...u.vars]);
      try {
        new Checker(u, maps, false).checkProbe();
      } catch (e) {
        if (!(e instanceof CompileAbort)) throw e;
      }
      if (JSON.stringify([...u.vars]) !== before) maps.changed = true;
    }
    if (!maps.changed) break;
  }
  const checkers: Checker[] = [];
  for (const u of units) {
    const c = new Checker(u, maps, true);
    try {
      c.checkProbe();
    } catch (e) {
      report(e);
    }
    checkers.push(c);
  }
  if (diagnostics.length > 0) return failed();
  for (const m of maps.maps.values()) {
    if (m.value === undefined && m.reads.length === 0) {
      diagnostics.push(source.diagnostic('not-found', m.span, `@${m.name}: never assigned`, `assign it, e.g. @${m.name} = count()`));
    }
  }
  if (diagnostics.length > 0) return failed();

  // maps: script maps in order of appearance, then the output ring buffer and the start time
  const specMaps: SpecMap[] = [];
  const layouts = new Map<string, MapLayout>();
  for (const m of maps.maps.values()) {
    const l = layoutMap(m as MapInfo & { value: NonNullable<MapInfo['value']> }, m.value!, specMaps.length, options.mapMaxEntries ?? 4096);
    layouts.set(m.name, l);
    specMaps.push(l.spec);
  }
  const needsOutput = ast.probes.some((p) => uses(p, usesAction));
  const outputMap = needsOutput ? specMaps.push(outputMapSpec()) - 1 : -1;
  const needsStart = ast.probes.some((p) => uses(p, usesElapsed));
  const startMap = needsStart ? specMaps.push(startMapSpec()) - 1 : -1;

  const actions: ScriptAction[] = [];
  const actionIds = new Map<string, number>();
  const shared: GenShared = {
    maps: layouts,
    outputMap,
    startMap,
    action(a) {
      const key = JSON.stringify(a);
      let id = actionIds.get(key);
      if (id === undefined) {
        id = actions.push(a) - 1;
        actionIds.set(key, id);
      }
      return id;
    },
  };

  const programs: SpecProgram[] = [];
  const providerPrograms: ProviderProgram[] = [];
  const names = new Set<string>();
  let startStored = false;
  const emptyBegin: ProbeNode = { attachPoints: [{ text: 'BEGIN', span: { start: 0, end: 0 } }], predicate: undefined, body: [], span: { start: 0, end: 0 } };
  const genUnits: { unit: ProgramUnit; checker: Checker }[] = units.map((u, i) => ({ unit: u, checker: checkers[i]! }));
  if (needsStart && !units.some((u) => u.resolved.kind === 'runtime' && u.resolved.probe.kind === 'begin')) {
    const unit: ProgramUnit = { probe: emptyBegin, probeIndex: ast.probes.length, resolved: { kind: 'runtime', probe: { kind: 'begin' }, name: 'BEGIN' }, format: undefined, vars: new Map() };
    genUnits.unshift({ unit, checker: new Checker(unit, maps, true) });
  }
  /** Per program (in the order of `programs`): its while loops as instruction ranges. */
  const loopsOf: ProgramGen['loopSlots'][] = [];
  for (const { unit, checker } of genUnits) {
    const r = unit.resolved;
    const storeStart = needsStart && !startStored && r.kind === 'runtime' && r.probe.kind === 'begin';
    if (storeStart) startStored = true;
    try {
      const gen = new ProgramGen(checker, shared, r.kind === 'tracepoint' && uses(unit.probe, usesArgs), storeStart ? (g) => g.storeStartTime() : undefined);
      const instructions = gen.generate();
      const name = programName(r, unit.probeIndex, names);
      const section = r.kind === 'tracepoint' ? `tracepoint/${r.system}/${r.event}` : runtimeProbeSection(r.probe);
      const attach: SpecProgram['attach'] = r.kind === 'tracepoint' ? { kind: 'tracepoint', system: r.system, event: r.event } : { kind: 'other', section };
      programs.push({ name, section, attach, instructions, fieldRelocations: gen.relocations });
      loopsOf.push(gen.loopSlots);
      if (r.kind === 'tracepoint' && r.provider !== undefined) providerPrograms.push({
          program: name,
          probe: r.name,
          event: `${r.system}/${r.event}`,
          via: r.provider.via ?? '',
          implementation: r.provider.implementation ?? '',
          provider: r.provider.provider ?? '',
          version: r.provider.version ?? '',
        });
    } catch (e) {
      report(e);
    }
  }
  if (diagnostics.length > 0) return failed();

  const events = units.flatMap((u) => (u.resolved.kind === 'tracepoint' ? [`${u.resolved.system}/${u.resolved.event}`] : []));
  const formats = [...new Map(units.flatMap((u) => (u.format !== undefined && uses(u.probe, usesArgs) ? [[`${u.format.system}/${u.format.name}`, u.format] as const] : []))).values()];
  const artifact = encodeScriptArtifact(text, events, formats);
  const spec: ProgramSpec = {
    sourceKind: 'script',
    digest: await sha256Hex(artifact),
    byteLength: artifact.length,
    license: 'GPL',
    programs,
    maps: specMaps,
    globals: [],
    buildLayouts: formats.map(layoutOf).sort((a, b) => (`${a.system}/${a.event}` < `${b.system}/${b.event}` ? -1 : 1)),
    pinnedLayouts: {},
    script: { source: text, outputMap, actions },
  };

  if (options.verify !== false) {
    const mapDefs = mapDefsOf(spec);
    programs.forEach((p, i) => {
      const unit = genUnits[i]!.unit;
      const result = verify(p.instructions, { maps: mapDefs, context: unit.format === undefined ? { kind: 'tracepoint' } : { kind: 'tracepoint', event: unit.format } });
      if (!result.ok) {
        const d = result.diagnostics[0];
        const loop = d === undefined ? undefined : unboundedLoop(loopsOf[i]!, d.insnIndex, d.message);
        if (loop !== undefined) {
          diagnostics.push(
            source.diagnostic(
              'limit',
              loop.span,
              `while: the verifier cannot prove this loop ends (${d!.message})`,
              'the kernel runs a loop only when every path through it ends: count with a variable the condition tests, e.g. $i = 0; while ($i < 100) { …; $i++; }',
            ),
          );
          return;
        }
        diagnostics.push(
          source.diagnostic(
            'internal',
            unit.probe.span,
            `compiler bug: the verifier refuses program ${p.name}${d ? ` at insn ${d.insnIndex} (${d.insnText}): ${d.message}` : ''}`,
            'please report this script; the compiler must never emit what the verifier refuses',
          ),
        );
      }
    });
    if (diagnostics.length > 0) return failed();
  }
  return { ok: true, spec, artifact, warnings: [], source, providerPrograms };
}

/**
 * The while loop a verifier refusal is about: the innermost loop holding the refused instruction
 * when the verifier gave up exploring (an infinite loop, the instruction budget), else undefined.
 */
function unboundedLoop(loops: ProgramGen['loopSlots'], insnIndex: number, message: string): ProgramGen['loopSlots'][number] | undefined {
  if (loops.length === 0 || !/infinite loop|too large|back-edge/.test(message)) return undefined;
  const holding = loops.filter((l) => l.first <= insnIndex && insnIndex <= l.last).sort((a, b) => a.last - a.first - (b.last - b.first));
  return holding[0] ?? loops[0];
}

/** {@link compileScript}, throwing a {@link ScriptError} with the formatted diagnostics when it fails. */
export async function compileScriptOrThrow(text: string, options: CompileOptions = {}): Promise<CompiledScript> {
  const r = await compileScript(text, options);
  if (r.ok) return r;
  const first = r.diagnostics[0]!;
  throw new ScriptError(first.code, `compile ${r.source.name}: ${formatDiagnostics(r.source, r.diagnostics).trimEnd()}`, { diagnostics: r.diagnostics });
}
