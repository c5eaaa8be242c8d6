// Providers (DESIGN.md, "Beyond relocation: providers"): a named, versioned set of stable probes
// (`proc:::exec`) with typed arguments; each probe has implementations, each naming the tracepoint
// it attaches to, one expression per argument over that event's fields, and conditions on the
// kernel's formats that select it. Resolving a probe against a kernel picks the first
// implementation whose conditions hold there and says why the others did not.
//
// The text of a provider is JSON (`parseProvider`, the format is in the README); argument
// expressions are a subset of packages/script's expression language, so a script compiles them
// as written and this file can check them (fields, types) without the script compiler.
import type { EventFormat, FormatField } from '@probeyard/formats';
import { CompatError } from './errors.js';
import { type KernelProfile, profileFormat } from './kernel-profile.js';

/** The type of a provider argument as a script sees it. */
export type ProviderArgType = 'int' | 'string';

/** How a field is laid out, as a condition names it. */
export type FieldKind = '__data_loc' | 'char[]' | 'int' | 'int[]';

/** A condition on the kernel that selects an implementation. */
export type ProviderCondition =
  /** The implementation's event has (or, `absent`, lacks) the field; with `kind`, of that kind. */
  | { field: string; kind?: FieldKind; absent?: boolean }
  /** The kernel has (or, `absent`, lacks) another event (`system/event`). */
  | { event: string; absent?: boolean };

/** One way of implementing a probe on some kernels. */
export interface ProviderImplementation {
  /** What sets it apart, named in verdicts: `__data_loc parent_comm` → "implementation for __data_loc parent_comm". */
  for: string;
  system: string;
  event: string;
  /** Conditions besides the implicit ones (the event exists, every field an argument reads exists with a fitting type). */
  when: ProviderCondition[];
  /** Argument name → expression over the event (`str(args.parent_comm)`, `args.args[0]`). */
  args: Record<string, string>;
}

export interface ProviderProbeArg {
  name: string;
  type: ProviderArgType;
}

/** One stable probe: `proc:::fork`. */
export interface ProviderProbeDefinition {
  name: string;
  args: ProviderProbeArg[];
  /** Tried in order; the first whose conditions hold is chosen. */
  implementations: ProviderImplementation[];
}

/** A provider at one version. */
export interface ProviderDefinition {
  name: string;
  /** Semver `MAJOR.MINOR.PATCH[-pre]`. */
  version: string;
  description: string;
  probes: ProviderProbeDefinition[];
}

/** What a probe resolves against: a kernel's events and their formats (a script target fits). */
export interface ProviderKernel {
  /** Whether the kernel has the event; undefined when its list of events is not known. */
  hasEvent(system: string, event: string): boolean | undefined;
  format(system: string, event: string): EventFormat | undefined;
}

/** A {@link ProviderKernel} of a kernel profile. */
export function providerKernelOf(profile: KernelProfile): ProviderKernel {
  return {
    hasEvent: (system, event) => (profile.events.has(`${system}/${event}`) ? true : profile.complete ? false : undefined),
    format: (system, event) => profileFormat(profile, `${system}/${event}`),
  };
}

/** An implementation that did not apply, and why. */
export interface SkippedImplementation {
  for: string;
  event: string;
  reason: string;
  /** True when the kernel's facts are not known (a partial profile lacks the event). */
  unknown: boolean;
}

/** A probe resolved on one kernel. */
export interface ProbeResolution {
  ok: true;
  provider: string;
  version: string;
  probe: string;
  /** The implementation chosen (its `for`). */
  implementation: string;
  system: string;
  event: string;
  /** Argument name → expression text, as the script compiler reads it. */
  args: Record<string, string>;
  /** Fields of the event the arguments read, sorted. */
  fields: string[];
  /** `proc@1.2.0, implementation for __data_loc parent_comm`. */
  via: string;
  /** Implementations tried before it. */
  skipped: SkippedImplementation[];
}

/** A probe that no implementation serves on a kernel. */
export interface ProbeResolutionFailure {
  ok: false;
  provider: string;
  version: string;
  probe: string;
  /** `unknown` when some implementation could apply but the kernel's facts are missing (a partial profile). */
  status: 'incompatible' | 'unknown';
  reason: string;
  skipped: SkippedImplementation[];
}

// ---------------------------------------------------------------- argument expressions

type Token = { kind: 'field'; name: string } | { kind: 'int' } | { kind: 'ident'; name: string } | { kind: 'punct'; text: string };

const binaryOps = ['<<', '>>', '+', '-', '*', '/', '%', '&', '|', '^'];

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    const ws = /^\s+/.exec(rest);
    if (ws) {
      i += ws[0].length;
      continue;
    }
    const field = /^args(?:\.|->)([A-Za-z_][A-Za-z0-9_]*)/.exec(rest);
    if (field) {
      out.push({ kind: 'field', name: field[1]! });
      i += field[0].length;
      continue;
    }
    const num = /^(?:0x[0-9a-fA-F]+|[0-9]+)/.exec(rest);
    if (num) {
      out.push({ kind: 'int' });
      i += num[0].length;
      continue;
    }
    const ident = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    if (ident) {
      out.push({ kind: 'ident', name: ident[0] });
      i += ident[0].length;
      continue;
    }
    const op = ['<<', '>>', '(', ')', '[', ']', ',', '+', '-', '*', '/', '%', '&', '|', '^', '~'].find((p) => rest.startsWith(p));
    if (op === undefined) throw new CompatError('malformed', `unexpected '${rest[0]}' at ${i}`);
    out.push({ kind: 'punct', text: op });
    i += op.length;
  }
  return out;
}

/** The parsed shape of an argument expression: what compat needs to check it against a format. */
export type ProviderArgExpr =
  | { kind: 'int' }
  | { kind: 'field'; name: string; index: boolean }
  | { kind: 'str'; inner: ProviderArgExpr }
  | { kind: 'op'; operands: ProviderArgExpr[] };

/**
 * Parses an argument expression: integers, `args.FIELD`, `args.FIELD[N]`, `str(E[, N])`,
 * parentheses, unary `- ~` and binary `+ - * / % & | ^ << >>` (script's meaning and precedence).
 */
export function parseProviderArgExpression(text: string): ProviderArgExpr {
  const tokens = tokenize(text);
  let pos = 0;
  const peek = () => tokens[pos];
  const isPunct = (t: Token | undefined, p: string) => t?.kind === 'punct' && t.text === p;
  const expect = (p: string) => {
    if (!isPunct(peek(), p)) throw new CompatError('malformed', `expected '${p}'`);
    pos++;
  };
  const unary = (): ProviderArgExpr => {
    const t = peek();
    if (isPunct(t, '-') || isPunct(t, '~')) {
      pos++;
      return { kind: 'op', operands: [unary()] };
    }
    return primary();
  };
  const primary = (): ProviderArgExpr => {
    const t = tokens[pos++];
    if (t === undefined) throw new CompatError('malformed', 'unexpected end');
    if (t.kind === 'int') return { kind: 'int' };
    if (t.kind === 'field') {
      if (isPunct(peek(), '[')) {
        pos++;
        if (peek()?.kind !== 'int') throw new CompatError('malformed', `args.${t.name}[…]: the index must be an integer`);
        pos++;
        expect(']');
        return { kind: 'field', name: t.name, index: true };
      }
      return { kind: 'field', name: t.name, index: false };
    }
    if (t.kind === 'ident' && t.name === 'str') {
      expect('(');
      const inner = expr();
      if (isPunct(peek(), ',')) {
        pos++;
        if (peek()?.kind !== 'int') throw new CompatError('malformed', 'str(): the length must be an integer');
        pos++;
      }
      expect(')');
      return { kind: 'str', inner };
    }
    if (t.kind === 'punct' && t.text === '(') {
      const inner = expr();
      expect(')');
      return inner;
    }
    throw new CompatError('malformed', t.kind === 'ident' ? `'${t.name}' is not allowed (only args.FIELD, integers, str() and arithmetic)` : `unexpected '${t.kind === 'punct' ? t.text : 'token'}'`);
  };
  const expr = (): ProviderArgExpr => {
    const first = unary();
    const operands = [first];
    for (let t = peek(); t?.kind === 'punct' && binaryOps.includes(t.text); t = peek()) {
      pos++;
      operands.push(unary());
    }
    return operands.length === 1 ? first : { kind: 'op', operands };
  };
  const e = expr();
  if (pos !== tokens.length) throw new CompatError('malformed', 'unexpected text after the expression');
  return e;
}

/** Fields an expression reads. */
function fieldsOf(e: ProviderArgExpr, out: Set<string>): Set<string> {
  if (e.kind === 'field') out.add(e.name);
  else if (e.kind === 'str') fieldsOf(e.inner, out);
  else if (e.kind === 'op') for (const o of e.operands) fieldsOf(o, out);
  return out;
}

/** The kind of a format field. */
export function fieldKindOf(f: FormatField): FieldKind {
  if (f.dynamic !== undefined) return '__data_loc';
  if (f.array !== undefined) return /^(?:unsigned\s+|signed\s+)?char$/.test(f.type.trim()) ? 'char[]' : 'int[]';
  return 'int';
}

/** The type of an expression over a format, or the reason it does not type. */
function typeOnFormat(e: ProviderArgExpr, format: EventFormat): ProviderArgType | { error: string } {
  switch (e.kind) {
    case 'int':
      return 'int';
    case 'field': {
      const f = format.fields.find((x) => x.name === e.name);
      if (f === undefined) return { error: `has no field ${e.name}` };
      const kind = fieldKindOf(f);
      if (e.index) return kind === 'int[]' ? 'int' : { error: `args.${e.name} is ${kind}, not an integer array` };
      if (kind === 'int[]') return { error: `args.${e.name} is an integer array: index it` };
      return kind === 'int' ? 'int' : 'string';
    }
    case 'str': {
      const t = typeOnFormat(e.inner, format);
      if (typeof t !== 'string') return t;
      return t === 'string' ? 'string' : { error: 'str() of an integer reads memory the record does not hold' };
    }
    case 'op':
      for (const o of e.operands) {
        const t = typeOnFormat(o, format);
        if (typeof t !== 'string') return t;
        if (t !== 'int') return { error: 'arithmetic on a string' };
      }
      return 'int';
  }
}

// ---------------------------------------------------------------- the text format

const nameRe = /^[a-z_][a-z0-9_]*$/;
const semverRe = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?$/;
const eventRe = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const fieldRe = /^[A-Za-z_][A-Za-z0-9_]*$/;
const fieldKinds: readonly FieldKind[] = ['__data_loc', 'char[]', 'int', 'int[]'];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function onlyKeys(o: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) throw new CompatError('malformed', `${where}: unknown key '${k}' (allowed: ${allowed.join(', ')})`);
}

/** The parts of a semver version, or undefined when it is not one. */
export function parseProviderVersion(version: string): { major: number; minor: number; patch: number; prerelease: string } | undefined {
  const m = semverRe.exec(version);
  if (!m) return undefined;
  const parts = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (!parts.every(Number.isSafeInteger)) return undefined;
  return { major: parts[0]!, minor: parts[1]!, patch: parts[2]!, prerelease: m[4] ?? '' };
}

function parseCondition(v: unknown, where: string): ProviderCondition {
  if (!isObject(v)) throw new CompatError('malformed', `${where}: want an object`);
  if (v.absent !== undefined && typeof v.absent !== 'boolean') throw new CompatError('malformed', `${where}.absent: want true or false`);
  const absent = v.absent === true;
  if ('event' in v) {
    onlyKeys(v, ['event', 'absent'], where);
    if (typeof v.event !== 'string' || !eventRe.test(v.event)) throw new CompatError('malformed', `${where}.event: want system/event`);
    return absent ? { event: v.event, absent } : { event: v.event };
  }
  onlyKeys(v, ['field', 'kind', 'absent'], where);
  if (typeof v.field !== 'string' || !fieldRe.test(v.field)) throw new CompatError('malformed', `${where}.field: want a field name`);
  if (v.kind !== undefined) {
    if (absent) throw new CompatError('malformed', `${where}: an absent field has no kind`);
    if (typeof v.kind !== 'string' || !(fieldKinds as readonly string[]).includes(v.kind)) throw new CompatError('malformed', `${where}.kind: want one of ${fieldKinds.join(', ')}`);
    return { field: v.field, kind: v.kind as FieldKind };
  }
  return absent ? { field: v.field, absent } : { field: v.field };
}

/**
 * Reads a provider's JSON text (the format is in the package README) and checks it: names,
 * semver, every probe's arguments typed, every implementation giving each argument an expression
 * that parses, conditions well formed. `malformed` with the place of the first problem.
 */
export function parseProvider(text: string): ProviderDefinition {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new CompatError('malformed', `provider: not JSON: ${(e as Error).message}`, { cause: e });
  }
  return providerFromJson(raw);
}

/** {@link parseProvider} of an already parsed JSON value. */
export function providerFromJson(raw: unknown): ProviderDefinition {
  if (!isObject(raw)) throw new CompatError('malformed', 'provider: want an object');
  onlyKeys(raw, ['provider', 'version', 'description', 'probes'], 'provider');
  if (typeof raw.provider !== 'string' || !nameRe.test(raw.provider) || raw.provider.length > 64) throw new CompatError('malformed', 'provider.provider: want a lowercase name (a-z, 0-9, _)');
  const name = raw.provider;
  if (typeof raw.version !== 'string' || parseProviderVersion(raw.version) === undefined) throw new CompatError('malformed', `provider ${name}: version: want semver MAJOR.MINOR.PATCH`);
  const where0 = `provider ${name}@${raw.version}`;
  if (raw.description !== undefined && typeof raw.description !== 'string') throw new CompatError('malformed', `${where0}: description: want a string`);
  if (!isObject(raw.probes) || Object.keys(raw.probes).length === 0) throw new CompatError('malformed', `${where0}: probes: want an object of probes by name`);
  const probes: ProviderProbeDefinition[] = [];
  for (const [probeName, p] of Object.entries(raw.probes)) {
    const where = `${where0}: probe ${probeName}`;
    if (!nameRe.test(probeName)) throw new CompatError('malformed', `${where}: want a lowercase name`);
    if (!isObject(p)) throw new CompatError('malformed', `${where}: want an object`);
    onlyKeys(p, ['args', 'implementations'], where);
    if (!isObject(p.args)) throw new CompatError('malformed', `${where}: args: want an object of argument types by name`);
    const args: ProviderProbeArg[] = [];
    for (const [argName, type] of Object.entries(p.args)) {
      if (!fieldRe.test(argName)) throw new CompatError('malformed', `${where}: args.${argName}: not a name`);
      if (type !== 'int' && type !== 'string') throw new CompatError('malformed', `${where}: args.${argName}: want 'int' or 'string'`);
      args.push({ name: argName, type });
    }
    if (!Array.isArray(p.implementations) || p.implementations.length === 0) throw new CompatError('malformed', `${where}: implementations: want a non-empty array`);
    const implementations = p.implementations.map((impl: unknown, i: number): ProviderImplementation => {
      const w = `${where}: implementations[${i}]`;
      if (!isObject(impl)) throw new CompatError('malformed', `${w}: want an object`);
      onlyKeys(impl, ['for', 'tracepoint', 'when', 'args'], w);
      if (typeof impl.for !== 'string' || impl.for.trim() === '' || impl.for.length > 200) throw new CompatError('malformed', `${w}.for: want a short text naming what the implementation is for`);
      if (typeof impl.tracepoint !== 'string' || !eventRe.test(impl.tracepoint)) throw new CompatError('malformed', `${w}.tracepoint: want system/event`);
      const [system, event] = impl.tracepoint.split('/') as [string, string];
      const when = impl.when === undefined ? [] : Array.isArray(impl.when) ? impl.when.map((c, j) => parseCondition(c, `${w}.when[${j}]`)) : undefined;
      if (when === undefined) throw new CompatError('malformed', `${w}.when: want an array of conditions`);
      if (!isObject(impl.args)) throw new CompatError('malformed', `${w}.args: want an object of expressions by argument`);
      const exprs: Record<string, string> = {};
      for (const a of args) {
        const text = impl.args[a.name];
        if (typeof text !== 'string') throw new CompatError('malformed', `${w}.args.${a.name}: missing (every argument needs an expression)`);
        try {
          parseProviderArgExpression(text);
        } catch (e) {
          if (e instanceof CompatError) throw new CompatError('malformed', `${w}.args.${a.name}: '${text}': ${e.message}`);
          throw e;
        }
        exprs[a.name] = text;
      }
      for (const k of Object.keys(impl.args)) if (!args.some((a) => a.name === k)) throw new CompatError('malformed', `${w}.args.${k}: the probe has no argument '${k}'`);
      return { for: impl.for, system, event, when, args: exprs };
    });
    probes.push({ name: probeName, args, implementations });
  }
  return { name, version: raw.version, description: typeof raw.description === 'string' ? raw.description : '', probes };
}

/** The JSON text of a provider ({@link parseProvider} reads it back to an equal definition). */
export function formatProvider(p: ProviderDefinition): string {
  const probes: Record<string, unknown> = {};
  for (const probe of p.probes) {
    probes[probe.name] = {
      args: Object.fromEntries(probe.args.map((a) => [a.name, a.type])),
      implementations: probe.implementations.map((i) => ({ for: i.for, tracepoint: `${i.system}/${i.event}`, when: i.when, args: i.args })),
    };
  }
  return `${JSON.stringify({ provider: p.name, version: p.version, description: p.description, probes }, null, 2)}\n`;
}

// ---------------------------------------------------------------- resolution

/** Why an implementation does not apply on a kernel, or undefined when it does. */
function whyNot(impl: ProviderImplementation, probe: ProviderProbeDefinition, kernel: ProviderKernel): { reason: string; unknown: boolean } | undefined {
  const key = `${impl.system}/${impl.event}`;
  const format = kernel.format(impl.system, impl.event);
  if (format === undefined) {
    const has = kernel.hasEvent(impl.system, impl.event);
    return has === undefined ? { reason: `the kernel's list of events does not say whether it has ${key}`, unknown: true } : { reason: `no event ${key}`, unknown: false };
  }
  for (const c of impl.when) {
    if ('event' in c) {
      const [s, e] = c.event.split('/') as [string, string];
      const has = kernel.hasEvent(s, e) ?? (kernel.format(s, e) !== undefined ? true : undefined);
      if (has === undefined) return { reason: `the kernel's list of events does not say whether it has ${c.event}`, unknown: true };
      if (has === c.absent) return { reason: c.absent ? `the kernel has ${c.event}` : `no event ${c.event}`, unknown: false };
      continue;
    }
    const f = format.fields.find((x) => x.name === c.field);
    if (c.absent) {
      if (f !== undefined) return { reason: `${key} has a field ${c.field}`, unknown: false };
      continue;
    }
    if (f === undefined) return { reason: `${key} has no field ${c.field}`, unknown: false };
    if (c.kind !== undefined && fieldKindOf(f) !== c.kind) return { reason: `${key}.${c.field} is ${fieldKindOf(f)}, not ${c.kind}`, unknown: false };
  }
  for (const a of probe.args) {
    const t = typeOnFormat(parseProviderArgExpression(impl.args[a.name]!), format);
    if (typeof t !== 'string') return { reason: `args.${a.name} = ${impl.args[a.name]}: ${key} ${t.error}`, unknown: false };
    if (t !== a.type) return { reason: `args.${a.name} = ${impl.args[a.name]}: a ${t} on ${key}, the probe declares ${a.type}`, unknown: false };
  }
  return undefined;
}

/**
 * Resolves `provider:::probe` on a kernel: the first implementation whose event exists there, whose
 * conditions hold and whose argument expressions read fields that exist with the declared types.
 * A failure says, per implementation, why not; it is `unknown` when only missing facts (a partial
 * profile) stood in the way.
 */
export function resolveProviderProbe(provider: ProviderDefinition, probeName: string, kernel: ProviderKernel): ProbeResolution | ProbeResolutionFailure {
  const base = { provider: provider.name, version: provider.version, probe: probeName };
  const probe = provider.probes.find((p) => p.name === probeName);
  if (probe === undefined) {
    return { ok: false, ...base, status: 'incompatible', reason: `${provider.name}@${provider.version} has no probe '${probeName}' (its probes: ${provider.probes.map((p) => p.name).join(', ')})`, skipped: [] };
  }
  const skipped: SkippedImplementation[] = [];
  for (const impl of probe.implementations) {
    const why = whyNot(impl, probe, kernel);
    if (why === undefined) {
      const fields = new Set<string>();
      for (const text of Object.values(impl.args)) fieldsOf(parseProviderArgExpression(text), fields);
      return {
        ok: true,
        ...base,
        implementation: impl.for,
        system: impl.system,
        event: impl.event,
        args: { ...impl.args },
        fields: [...fields].sort(),
        via: `${provider.name}@${provider.version}, implementation for ${impl.for}`,
        skipped,
      };
    }
    skipped.push({ for: impl.for, event: `${impl.system}/${impl.event}`, reason: why.reason, unknown: why.unknown });
  }
  const unknown = skipped.some((s) => s.unknown);
  return {
    ok: false,
    ...base,
    status: unknown ? 'unknown' : 'incompatible',
    reason: `${provider.name}@${provider.version} cannot implement ${provider.name}:::${probeName} here: ${skipped.map((s) => `implementation for ${s.for}: ${s.reason}`).join('; ')}`,
    skipped,
  };
}

/** Every kernel-independent fact of a provider, for listings: probe → implementations → events and fields. */
export function providerSummary(p: ProviderDefinition): { probe: string; args: ProviderProbeArg[]; implementations: { for: string; event: string; fields: string[] }[] }[] {
  return p.probes.map((probe) => ({
    probe: probe.name,
    args: probe.args,
    implementations: probe.implementations.map((i) => {
      const fields = new Set<string>();
      for (const text of Object.values(i.args)) fieldsOf(parseProviderArgExpression(text), fields);
      return { for: i.for, event: `${i.system}/${i.event}`, fields: [...fields].sort() };
    }),
  }));
}
