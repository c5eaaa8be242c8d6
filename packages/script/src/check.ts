import { parsePrintf, timeFormatProblem } from '@probeyard/compat';
import type { EventFormat, FormatField } from '@probeyard/formats';
import { type Expr, intTypeNames, type MapExpr, type ProbeNode, type Stmt } from './ast.js';
import { aggregations, builtinTypes, knownFunctions, refusedBuiltinOf, refusedFunctions, statementFunctions } from './builtins.js';
import { CompileAbort, fail, type SourceSpan } from './errors.js';
import { parseExpression } from './parser.js';
import { closeNames, type ResolvedProbe } from './probes.js';
import { type FieldShape, fieldShape, none, type ScriptType, STRING_SIZE, s64, stringType, typeName, u64 } from './script-types.js';

/** The type of one map key. */
export type KeyType = { kind: 'int'; signed: boolean } | { kind: 'string'; size: number };

/** What a map holds, decided by its assignments. */
export type MapValueKind =
  | { kind: 'count' }
  | { kind: 'sum' | 'min' | 'max' | 'avg' | 'stats'; signed: boolean }
  | { kind: 'hist' }
  | { kind: 'lhist'; min: number; max: number; step: number }
  | { kind: 'int'; signed: boolean }
  | { kind: 'string'; size: number };

/** A map of the script (`@name`; `@` is the anonymous map, name ''). */
export interface MapInfo {
  name: string;
  /** Where it first appears. */
  span: SourceSpan;
  /** Key types (empty: no key); undefined until a use fixes them. */
  keys: KeyType[] | undefined;
  value: MapValueKind | undefined;
  /** Where its value is read (an error at the end when it is never assigned). */
  reads: SourceSpan[];
}

/** One compiled program: a probe expanded for one attach point. */
export interface ProgramUnit {
  probe: ProbeNode;
  probeIndex: number;
  resolved: ResolvedProbe;
  /** The event's format (tracepoints on a target that has it). */
  format: EventFormat | undefined;
  /** Scratch variables of the probe, with their final types. */
  vars: Map<string, ScriptType>;
}

export const mapLabel = (name: string) => `@${name}`;

function unifyKey(a: KeyType, b: KeyType): KeyType | undefined {
  if (a.kind !== b.kind) return undefined;
  if (a.kind === 'string' && b.kind === 'string') return a.size >= b.size ? a : b;
  return a.kind === 'int' && b.kind === 'int' ? { kind: 'int', signed: a.signed && b.signed } : a;
}

const keyTypeName = (k: KeyType) => (k.kind === 'int' ? 'int' : `string[${k.size}]`);

function valueName(v: MapValueKind): string {
  switch (v.kind) {
    case 'count':
      return 'count()';
    case 'sum':
    case 'min':
    case 'max':
    case 'avg':
    case 'stats':
      return `${v.kind}()`;
    case 'hist':
      return 'hist()';
    case 'lhist':
      return `lhist(…, ${v.min}, ${v.max}, ${v.step})`;
    case 'int':
      return 'an integer';
    case 'string':
      return 'a string';
  }
}

/** The maps of a whole script, unified over every program that uses them. */
export class MapTable {
  readonly maps = new Map<string, MapInfo>();
  changed = false;

  get(name: string, span: SourceSpan): MapInfo {
    let m = this.maps.get(name);
    if (m === undefined) {
      m = { name, span, keys: undefined, value: undefined, reads: [] };
      this.maps.set(name, m);
      this.changed = true;
    }
    return m;
  }

  /** Unifies the key types of a use; fails on a different count or kind. */
  useKeys(map: MapExpr, keys: KeyType[]): void {
    const m = this.get(map.name, map.nameSpan);
    if (m.keys === undefined) {
      m.keys = keys;
      this.changed = true;
      return;
    }
    if (m.keys.length !== keys.length) {
      const want = m.keys.length === 0 ? 'no key' : `${m.keys.length} key${m.keys.length > 1 ? 's' : ''}`;
      fail('type', map.span, `${mapLabel(map.name)}: used with ${keys.length === 0 ? 'no key' : `${keys.length} key${keys.length > 1 ? 's' : ''}`} here, with ${want} elsewhere`, `every use of a map needs the same keys: ${mapLabel(map.name)}${m.keys.length === 0 ? '' : `[${m.keys.map(keyTypeName).join(', ')}]`}`);
    }
    const next: KeyType[] = [];
    for (let i = 0; i < keys.length; i++) {
      const u = unifyKey(m.keys[i]!, keys[i]!);
      if (u === undefined) {
        fail('type', map.keys[i]?.span ?? map.span, `${mapLabel(map.name)}: key ${i + 1} is ${keyTypeName(keys[i]!)} here, ${keyTypeName(m.keys[i]!)} elsewhere`);
      }
      if (u !== m.keys[i]) this.changed = true;
      next.push(u);
    }
    m.keys = next;
  }

  /** Unifies what a map holds; fails when two assignments disagree. */
  useValue(map: MapExpr, value: MapValueKind, span: SourceSpan): void {
    const m = this.get(map.name, map.nameSpan);
    const v = m.value;
    if (v === undefined) {
      m.value = value;
      this.changed = true;
      return;
    }
    if (v.kind !== value.kind) {
      fail('type', span, `${mapLabel(map.name)}: assigned ${valueName(value)} here, ${valueName(v)} elsewhere`, 'a map holds one kind of value');
    }
    if (v.kind === 'lhist' && value.kind === 'lhist' && (v.min !== value.min || v.max !== value.max || v.step !== value.step)) {
      fail('type', span, `${mapLabel(map.name)}: ${valueName(value)} here, ${valueName(v)} elsewhere`, 'every lhist() of a map needs the same min, max and step');
    }
    if (v.kind === 'string' && value.kind === 'string' && value.size > v.size) {
      m.value = value;
      this.changed = true;
    }
    if ('signed' in v && 'signed' in value && v.signed && !value.signed) {
      m.value = { ...v, signed: false } as MapValueKind;
      this.changed = true;
    }
  }
}

/** How an `args.FIELD` resolves in a program. */
export type FieldRef =
  | { kind: 'field'; field: FormatField; shape: FieldShape }
  /** A provider argument: the expression it stands for. */
  | { kind: 'provider'; expr: Expr; arg: string };

const isLiteral = (e: Expr) => e.kind === 'int';

/**
 * Types expressions and checks statements of one program. The same code runs in the collection
 * rounds (maps and variables get their types from every use; reading a map not yet typed gives a
 * provisional integer) and in the final round (`final`), where anything unresolved is an error.
 */
export class Checker {
  private readonly memo = new WeakMap<Expr, ScriptType>();
  private readonly fieldMemo = new WeakMap<Expr, FieldRef>();
  /** Expressions that came from a provider's argument text (their `args` are the event's own fields). */
  private readonly raw = new WeakSet<Expr>();

  constructor(
    readonly unit: ProgramUnit,
    readonly maps: MapTable,
    readonly final: boolean,
  ) {}

  get eventName(): string {
    return this.unit.resolved.kind === 'tracepoint' ? `${this.unit.resolved.system}/${this.unit.resolved.event}` : this.unit.resolved.name;
  }

  /** Checks the predicate and body, and types every scratch variable by its assignments (source order). */
  checkProbe(): void {
    const p = this.unit.probe;
    if (p.predicate !== undefined) this.condition(p.predicate);
    this.stmts(p.body);
  }

  private stmts(list: readonly Stmt[]): void {
    for (const s of list) this.stmt(s);
  }

  private condition(e: Expr): void {
    const t = this.typeOf(e);
    if (t.kind !== 'int') fail('type', e.span, `condition: want an integer, got ${typeName(t)}`, t.kind === 'string' ? 'compare strings with == or !=, or strncmp()' : undefined);
  }

  private stmt(s: Stmt): void {
    switch (s.kind) {
      case 'expr': {
        const e = s.expr;
        if (e.kind === 'call' && (statementFunctions.has(e.name) || aggregations.has(e.name))) {
          this.statementCall(e);
          return;
        }
        this.typeOf(e);
        return;
      }
      case 'map-assign':
        this.mapAssign(s);
        return;
      case 'var-assign': {
        const t = this.typeOf(s.value);
        if (t.kind === 'none') fail('type', s.value.span, `$${s.name}: the right side has no value`);
        if (s.op !== '=') {
          if (t.kind !== 'int') fail('type', s.value.span, `$${s.name} ${s.op}: want an integer, got ${typeName(t)}`);
          if ((s.op === '/=' || s.op === '%=') && constantOf(s.value) === 0n) fail('type', s.value.span, `${s.op}: division by zero`);
          const cur = this.unit.vars.get(s.name);
          if (cur === undefined) fail('not-found', s.nameSpan, `$${s.name}: used before it is assigned`);
          if (cur.kind !== 'int') fail('type', s.nameSpan, `$${s.name} ${s.op}: $${s.name} holds ${typeName(cur)}`);
          return;
        }
        this.assignVar(s.name, t, s.nameSpan);
        return;
      }
      case 'incdec': {
        if (s.target.kind === 'var') {
          const cur = this.unit.vars.get(s.target.name);
          if (cur === undefined) fail('not-found', s.target.span, `$${s.target.name}: used before it is assigned`);
          if (cur.kind !== 'int') fail('type', s.target.span, `$${s.target.name}: ${s.delta > 0 ? '++' : '--'} needs an integer, $${s.target.name} holds ${typeName(cur)}`);
          return;
        }
        this.mapKeys(s.target);
        this.maps.useValue(s.target, { kind: 'int', signed: true }, s.span);
        return;
      }
      case 'if':
        this.condition(s.cond);
        this.stmts(s.then);
        if (s.else) this.stmts(s.else);
        return;
      case 'while':
        this.condition(s.cond);
        this.stmts(s.body);
        return;
      case 'block':
      case 'unroll':
        this.stmts(s.body);
        return;
      case 'return':
      case 'break':
      case 'continue':
        return;
    }
  }

  private assignVar(name: string, t: ScriptType, span: SourceSpan): void {
    const cur = this.unit.vars.get(name);
    if (cur === undefined) {
      this.unit.vars.set(name, t);
      return;
    }
    if (cur.kind !== t.kind) fail('type', span, `$${name}: assigned ${typeName(t)} here, ${typeName(cur)} before`, 'a variable holds one kind of value');
    if (cur.kind === 'string' && t.kind === 'string' && t.size > cur.size) this.unit.vars.set(name, t);
    if (cur.kind === 'int' && t.kind === 'int' && cur.signed && !t.signed) this.unit.vars.set(name, t);
  }

  /** Types the keys of a map use and unifies them with its other uses. */
  mapKeys(m: MapExpr): KeyType[] {
    const keys: KeyType[] = m.keys.map((k) => {
      const t = this.typeOf(k);
      if (t.kind === 'none') fail('type', k.span, `${mapLabel(m.name)}: this key has no value`);
      return t.kind === 'int' ? { kind: 'int', signed: t.signed } : { kind: 'string', size: t.size };
    });
    this.maps.useKeys(m, keys);
    return keys;
  }

  private intArg(e: Expr | undefined, what: string, at: SourceSpan): ScriptType {
    if (e === undefined) fail('type', at, `${what}: missing argument`);
    const t = this.typeOf(e);
    if (t.kind !== 'int') fail('type', e.span, `${what}: want an integer, got ${typeName(t)}`);
    return t;
  }

  /** A constant integer argument (lhist's min, max, step; str's length). */
  constInt(e: Expr | undefined, what: string, at: SourceSpan): number {
    if (e === undefined) fail('type', at, `${what}: missing argument`);
    const v = constantOf(e);
    if (v === undefined) fail('type', e.span, `${what}: want a constant integer`);
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)) fail('limit', e.span, `${what}: ${v} is out of range`);
    return Number(v);
  }

  private mapAssign(s: Extract<Stmt, { kind: 'map-assign' }>): void {
    const v = s.value;
    this.mapKeys(s.map);
    if (v.kind === 'call' && aggregations.has(v.name)) {
      if (s.op !== '=') fail('syntax', s.span, `${mapLabel(s.map.name)} ${s.op} ${v.name}(): an aggregation is assigned with =`);
      this.maps.useValue(s.map, this.aggregation(v), v.span);
      return;
    }
    const t = this.typeOf(v);
    if (t.kind === 'none') fail('type', v.span, `${mapLabel(s.map.name)}: the right side has no value`);
    if (s.op !== '=' && t.kind !== 'int') fail('type', v.span, `${mapLabel(s.map.name)} ${s.op}: want an integer, got ${typeName(t)}`);
    if ((s.op === '/=' || s.op === '%=') && constantOf(v) === 0n) fail('type', v.span, `${s.op}: division by zero`);
    this.maps.useValue(s.map, t.kind === 'int' ? { kind: 'int', signed: t.signed } : { kind: 'string', size: t.size }, v.span);
  }

  /** What an aggregation call makes its map hold. */
  aggregation(c: Extract<Expr, { kind: 'call' }>): MapValueKind {
    const want = (n: number) => {
      if (c.args.length !== n) fail('type', c.span, `${c.name}(): takes ${n} argument${n === 1 ? '' : 's'}, got ${c.args.length}`);
    };
    switch (c.name) {
      case 'count':
        want(0);
        return { kind: 'count' };
      case 'hist':
        want(1);
        this.intArg(c.args[0], 'hist()', c.span);
        return { kind: 'hist' };
      case 'lhist': {
        want(4);
        this.intArg(c.args[0], 'lhist() value', c.span);
        const min = this.constInt(c.args[1], 'lhist() min', c.span);
        const max = this.constInt(c.args[2], 'lhist() max', c.span);
        const step = this.constInt(c.args[3], 'lhist() step', c.span);
        if (min < 0) fail('type', c.args[1]!.span, `lhist(): min must be >= 0, got ${min}`);
        if (step <= 0) fail('type', c.args[3]!.span, `lhist(): step must be > 0, got ${step}`);
        if (max <= min) fail('type', c.args[2]!.span, `lhist(): max must be above min (${min}), got ${max}`);
        if ((max - min) / step > 1000) fail('limit', c.span, `lhist(): ${Math.ceil((max - min) / step)} buckets, at most 1000`);
        return { kind: 'lhist', min, max, step };
      }
      default: {
        want(1);
        const t = this.intArg(c.args[0], `${c.name}()`, c.span);
        return { kind: c.name as 'sum', signed: t.kind === 'int' && t.signed };
      }
    }
  }

  /** A statement call: printf, print, clear, zero, delete, exit (and a misplaced aggregation). */
  private statementCall(c: Extract<Expr, { kind: 'call' }>): void {
    if (aggregations.has(c.name)) fail('type', c.span, `${c.name}(): an aggregation is the value of a map`, `write @name[keys] = ${c.name}(${c.args.length > 0 ? '…' : ''})`);
    switch (c.name) {
      case 'printf': {
        const fmt = c.args[0];
        if (fmt === undefined || fmt.kind !== 'string') fail('type', fmt?.span ?? c.span, 'printf(): the first argument is the format, a string literal');
        this.printfArgs(fmt, c.args.slice(1), c.span);
        return;
      }
      case 'print': {
        const first = c.args[0];
        if (first === undefined) fail('type', c.span, 'print(): takes a map or a value');
        if (first.kind === 'map' && first.keys.length === 0) {
          if (c.args.length > 3) fail('type', c.span, `print(): takes a map and at most top and div, got ${c.args.length} arguments`);
          this.maps.get(first.name, first.nameSpan);
          if (c.args[1] !== undefined) this.constInt(c.args[1], 'print() top', c.span);
          if (c.args[2] !== undefined) this.constInt(c.args[2], 'print() div', c.span);
          return;
        }
        if (c.args.length !== 1) fail('type', c.span, 'print(): a value is printed alone');
        const t = this.typeOf(first);
        if (t.kind === 'none') fail('type', first.span, 'print(): this has no value');
        return;
      }
      case 'clear':
      case 'zero': {
        const m = c.args[0];
        if (c.args.length !== 1 || m === undefined || m.kind !== 'map' || m.keys.length !== 0) fail('type', c.span, `${c.name}(): takes one map, written without keys: ${c.name}(@name)`);
        this.maps.get(m.name, m.nameSpan);
        return;
      }
      case 'delete': {
        const m = c.args[0];
        if (c.args.length !== 1 || m === undefined || m.kind !== 'map') fail('type', c.span, 'delete(): takes one map element: delete(@name[key])');
        this.mapKeys(m);
        return;
      }
      case 'exit':
        if (c.args.length !== 0) fail('type', c.span, 'exit(): takes no argument');
        return;
      case 'time': {
        if (c.args.length > 1) fail('type', c.span, `time(): takes up to one argument (${c.args.length} provided)`);
        const fmt = c.args[0];
        if (fmt === undefined) return;
        if (fmt.kind !== 'string') fail('type', fmt.span, 'time(): the format is a string literal', 'e.g. time("%H:%M:%S\\n")');
        const problem = timeFormatProblem(fmt.value);
        if (problem !== undefined) fail('type', fmt.span, `time(): ${problem.message}`);
        return;
      }
    }
  }

  private printfArgs(fmt: Extract<Expr, { kind: 'string' }>, args: Expr[], span: SourceSpan): void {
    const parsed = parsePrintf(fmt.value);
    if ('badAt' in parsed) {
      fail('type', fmt.span, `printf(): unknown conversion '${parsed.text}' in the format`, 'conversions are %d %i %u %x %X %o %p %c %s, with flags, width, precision and hh h l ll j z t; %% is a %');
    }
    const convs = parsed.segments.filter((s) => typeof s !== 'string');
    if (convs.length !== args.length) {
      fail('type', args.length > convs.length ? args[convs.length]!.span : span, `printf(): the format has ${convs.length} conversion${convs.length === 1 ? '' : 's'}, ${args.length} argument${args.length === 1 ? '' : 's'} given`);
    }
    convs.forEach((c, i) => {
      const a = args[i]!;
      const t = this.typeOf(a);
      if (t.kind === 'none') fail('type', a.span, 'printf(): this argument has no value');
      const wantsString = c.conversion === 's';
      if (wantsString && t.kind !== 'string') fail('type', a.span, `printf(): ${c.text} wants a string, got ${typeName(t)}`, t.kind === 'int' ? `print integers with %d, %u or %x` : undefined);
      if (!wantsString && t.kind !== 'int') fail('type', a.span, `printf(): ${c.text} wants an integer, got ${typeName(t)}`, 'print strings with %s');
    });
  }

  /** How `args.FIELD` resolves here (a format field, or a provider argument's expression). */
  fieldRef(e: Extract<Expr, { kind: 'field' }>): FieldRef {
    const known = this.fieldMemo.get(e);
    if (known !== undefined) return known;
    const r = this.unit.resolved;
    if (r.kind !== 'tracepoint') fail('type', e.span, `args: ${r.name} has no event record`, 'args.FIELD reads a tracepoint\'s record');
    let ref: FieldRef;
    if (r.provider !== undefined && !this.raw.has(e)) {
      const text = r.provider.args[e.field];
      if (text === undefined) {
        const names = Object.keys(r.provider.args);
        fail('not-found', e.fieldSpan, `args: probe ${r.name} has no argument '${e.field}'`, `its arguments: ${names.join(', ') || 'none'}`);
      }
      let expr: Expr;
      try {
        expr = parseExpression(text);
      } catch (err) {
        if (err instanceof CompileAbort) fail('internal', e.span, `args.${e.field}: the provider's expression '${text}' does not parse: ${err.message}`);
        throw err;
      }
      this.markRaw(expr);
      ref = { kind: 'provider', expr, arg: e.field };
    } else {
      const f = this.unit.format;
      if (f === undefined) fail('not-found', e.span, `args.${e.field}: the format of ${this.eventName} is not known`, 'compile against a kernel profile that has this event (a trace.dat, an events tree, the live tracefs)');
      if (f.commonFields.some((x) => x.name === e.field)) {
        fail('unsupported', e.fieldSpan, `args.${e.field}: the common header of a record is not readable by BPF programs`, 'the kernel refuses reads of its first 8 bytes; use pid, tid or probe instead');
      }
      const field = f.fields.find((x) => x.name === e.field);
      if (field === undefined) {
        const names = f.fields.map((x) => x.name);
        const close = closeNames(e.field, names);
        fail('not-found', e.fieldSpan, `args.${e.field}: ${this.eventName} has no field '${e.field}'`, `${close.length > 0 ? `did you mean ${close.join(', ')}? ` : ''}${this.eventName} has ${names.length === 0 ? 'no fields' : `the fields ${names.join(', ')}`}`);
      }
      ref = { kind: 'field', field, shape: fieldShape(field) };
    }
    this.fieldMemo.set(e, ref);
    return ref;
  }

  private markRaw(e: Expr): void {
    this.raw.add(e);
    for (const c of children(e)) this.markRaw(c);
  }

  /** Types a provider argument's expression; errors point at the script's `args.NAME`. */
  private providerType(e: Extract<Expr, { kind: 'field' }>, ref: Extract<FieldRef, { kind: 'provider' }>): ScriptType {
    try {
      return this.typeOf(ref.expr);
    } catch (err) {
      if (err instanceof CompileAbort) fail(err.code, e.span, `args.${ref.arg} (${this.unit.resolved.name}): ${err.message}`, err.hint);
      throw err;
    }
  }

  /** The type of an expression (memoized). */
  typeOf(e: Expr): ScriptType {
    const known = this.memo.get(e);
    if (known !== undefined) return known;
    const t = this.compute(e);
    this.memo.set(e, t);
    return t;
  }

  private compute(e: Expr): ScriptType {
    switch (e.kind) {
      case 'int':
        return e.value > (1n << 63n) - 1n ? u64 : s64;
      case 'string':
        return stringType(new TextEncoder().encode(e.value).length + 1);
      case 'positional':
        return fail('unsupported', e.span, `$${e.index}: positional parameters are not supported`, 'write the value into the script');
      case 'ident': {
        if (e.name === 'probe') return stringType(this.unit.resolved.name.length + 1);
        const t = builtinTypes[e.name];
        if (t !== undefined && Object.hasOwn(builtinTypes, e.name)) return t;
        const why = refusedBuiltinOf(e.name);
        if (why !== undefined) fail('unsupported', e.span, `${e.name}: not supported here`, why);
        if (Object.hasOwn(intTypeNames, e.name)) fail('syntax', e.span, `${e.name}: a type name is used in a cast, (${e.name})expr`);
        const close = closeNames(e.name, [...Object.keys(builtinTypes), 'probe']);
        return fail('not-found', e.span, `${e.name}: unknown identifier`, close.length > 0 ? `did you mean ${close.join(', ')}? (variables are written $name, maps @name)` : 'variables are written $name, maps @name');
      }
      case 'field': {
        const ref = this.fieldRef(e);
        if (ref.kind === 'provider') return this.providerType(e, ref);
        const s = ref.shape;
        switch (s.kind) {
          case 'int':
            return { kind: 'int', signed: s.signed };
          case 'char-array':
            return stringType(s.length);
          case 'data-loc-string':
            return stringType(STRING_SIZE);
          case 'int-array':
            return fail('type', e.span, `args.${e.field}: an array of ${s.length} integers`, `read one element: args.${e.field}[0]`);
          case 'unreadable':
            return fail('unsupported', e.span, `args.${e.field}: cannot be read`, s.why);
        }
        break;
      }
      case 'index': {
        const base = e.base;
        if (base.kind !== 'field') fail('type', e.span, 'index: only an array field is indexed: args.FIELD[N]');
        const ref = this.fieldRef(base);
        if (ref.kind !== 'field' || (ref.shape.kind !== 'int-array' && ref.shape.kind !== 'char-array')) fail('type', e.span, `args.${base.field}: not an array`);
        const i = constantOf(e.index);
        const length = ref.shape.length;
        if (i === undefined) fail('type', e.index.span, `args.${base.field}[…]: the index must be a constant`);
        if (i < 0n || i >= BigInt(length)) fail('type', e.index.span, `args.${base.field}[${i}]: out of range, the array has ${length} elements`);
        return ref.shape.kind === 'int-array' ? { kind: 'int', signed: ref.shape.signed } : u64;
      }
      case 'member':
        return fail('unsupported', e.span, `.${e.name}: only args has fields here`, 'read the record with args.FIELD');
      case 'map': {
        this.mapKeys(e);
        const m = this.maps.get(e.name, e.nameSpan);
        if (!m.reads.includes(e.span)) m.reads.push(e.span);
        const v = m.value;
        if (v === undefined) {
          if (this.final) fail('not-found', e.span, `@${e.name}: read but never assigned`);
          return u64;
        }
        switch (v.kind) {
          case 'count':
            return u64;
          case 'sum':
          case 'min':
          case 'max':
          case 'int':
            return { kind: 'int', signed: v.signed };
          case 'string':
            return { kind: 'string', size: v.size };
          default:
            return fail('type', e.span, `@${e.name}: holds ${valueName(v)}, which is printed, not read`);
        }
      }
      case 'var': {
        const t = this.unit.vars.get(e.name);
        if (t === undefined) fail('not-found', e.span, `$${e.name}: used before it is assigned`);
        return t;
      }
      case 'call':
        return this.callType(e);
      case 'unary': {
        const t = this.typeOf(e.operand);
        if (t.kind !== 'int') fail('type', e.operand.span, `${e.op}: want an integer, got ${typeName(t)}`);
        if (e.op === '!') return u64;
        if (e.op === '-') return s64;
        return t;
      }
      case 'binary':
        return this.binaryType(e);
      case 'ternary': {
        this.condition(e.cond);
        const a = this.typeOf(e.then);
        const b = this.typeOf(e.else);
        if (a.kind === 'int' && b.kind === 'int') return { kind: 'int', signed: a.signed && b.signed };
        if (a.kind === 'string' && b.kind === 'string') return { kind: 'string', size: Math.max(a.size, b.size) };
        return fail('type', e.span, `?: both sides need the same type, got ${typeName(a)} and ${typeName(b)}`);
      }
      case 'cast': {
        const t = this.typeOf(e.operand);
        if (t.kind !== 'int') fail('type', e.operand.span, `(${e.type}): want an integer, got ${typeName(t)}`);
        return { kind: 'int', signed: intTypeNames[e.type].signed };
      }
    }
    return none;
  }

  /** Signedness of a binary operation (bpftrace: a non-negative literal takes the other side's). */
  operandSigns(e: Extract<Expr, { kind: 'binary' }>): { left: boolean; right: boolean } {
    const a = this.typeOf(e.left);
    const b = this.typeOf(e.right);
    let left = a.kind === 'int' && a.signed;
    let right = b.kind === 'int' && b.signed;
    if (left !== right) {
      if (left && isLiteral(e.left) && (e.left as { value: bigint }).value >= 0n) left = false;
      else if (right && isLiteral(e.right) && (e.right as { value: bigint }).value >= 0n) right = false;
    }
    return { left, right };
  }

  private binaryType(e: Extract<Expr, { kind: 'binary' }>): ScriptType {
    const a = this.typeOf(e.left);
    const b = this.typeOf(e.right);
    if (e.op === '==' || e.op === '!=') {
      if (a.kind === 'string' && b.kind === 'string') return u64;
      if (a.kind === 'int' && b.kind === 'int') return u64;
      return fail('type', e.span, `${e.op}: compares two integers or two strings, got ${typeName(a)} and ${typeName(b)}`);
    }
    if (a.kind !== 'int') fail('type', e.left.span, `${e.op}: want an integer, got ${typeName(a)}`, a.kind === 'string' ? 'strings compare with == and != only' : undefined);
    if (b.kind !== 'int') fail('type', e.right.span, `${e.op}: want an integer, got ${typeName(b)}`, b.kind === 'string' ? 'strings compare with == and != only' : undefined);
    if (['<', '<=', '>', '>=', '&&', '||'].includes(e.op)) return u64;
    if ((e.op === '/' || e.op === '%') && constantOf(e.right) === 0n) fail('type', e.right.span, `${e.op}: division by zero`);
    const s = this.operandSigns(e);
    if (e.op === '<<' || e.op === '>>') return { kind: 'int', signed: s.left };
    return { kind: 'int', signed: s.left && s.right };
  }

  private callType(c: Extract<Expr, { kind: 'call' }>): ScriptType {
    switch (c.name) {
      case 'str': {
        if (c.args.length < 1 || c.args.length > 2) fail('type', c.span, `str(): takes a string and an optional length, got ${c.args.length} arguments`);
        const a = c.args[0]!;
        if (c.args[1] !== undefined) {
          const n = this.constInt(c.args[1], 'str() length', c.span);
          if (n < 0) fail('type', c.args[1].span, `str(): length must be >= 0, got ${n}`);
        }
        if (a.kind === 'field') {
          const ref = this.fieldRef(a);
          if (ref.kind === 'field' && ref.shape.kind === 'int' && ref.shape.pointer) {
            fail('unsupported', a.span, `str(args.${a.field}): ${a.field} is a pointer (${ref.field.declaration}) into the traced process's memory, which a recorded event does not carry`, 'events with the string itself have a __data_loc field (e.g. sched:sched_process_exec has filename)');
          }
        }
        const t = this.typeOf(a);
        if (t.kind !== 'string') fail('type', a.span, `str(): want a string (a char array, a __data_loc string), got ${typeName(t)}`, t.kind === 'int' ? 'a pointer into kernel or user memory cannot be read from a recorded event' : undefined);
        return t;
      }
      case 'strncmp': {
        if (c.args.length !== 3) fail('type', c.span, `strncmp(): takes two strings and a length, got ${c.args.length} arguments`);
        for (const a of c.args.slice(0, 2)) {
          const t = this.typeOf(a);
          if (t.kind !== 'string') fail('type', a.span, `strncmp(): want a string, got ${typeName(t)}`);
        }
        const n = this.constInt(c.args[2], 'strncmp() length', c.span);
        if (n < 0 || n > 256) fail('type', c.args[2]!.span, `strncmp(): length ${n} is out of range (0 to 256)`);
        return u64;
      }
    }
    if (aggregations.has(c.name)) fail('type', c.span, `${c.name}(): an aggregation is the value of a map`, `write @name[keys] = ${c.name}(${c.args.length > 0 ? '…' : ''})`);
    if (statementFunctions.has(c.name)) fail('type', c.span, `${c.name}(): has no value; call it as a statement`);
    const why = refusedFunctions[c.name];
    if (why !== undefined && Object.hasOwn(refusedFunctions, c.name)) fail('unsupported', c.nameSpan, `${c.name}(): not supported here`, why);
    const close = closeNames(c.name, knownFunctions);
    return fail('not-found', c.nameSpan, `${c.name}(): unknown function`, close.length > 0 ? `did you mean ${close.join(', ')}?` : undefined);
  }
}

/** The value of a constant integer expression (literals and arithmetic on them), 64-bit wrapped. */
export function constantOf(e: Expr): bigint | undefined {
  switch (e.kind) {
    case 'int':
      return e.value;
    case 'unary': {
      const v = constantOf(e.operand);
      if (v === undefined) return undefined;
      return e.op === '-' ? BigInt.asIntN(64, -v) : e.op === '~' ? BigInt.asIntN(64, ~v) : v === 0n ? 1n : 0n;
    }
    case 'binary': {
      const a = constantOf(e.left);
      const b = constantOf(e.right);
      if (a === undefined || b === undefined) return undefined;
      const u = (x: bigint) => BigInt.asUintN(64, x);
      switch (e.op) {
        case '+':
          return BigInt.asIntN(64, a + b);
        case '-':
          return BigInt.asIntN(64, a - b);
        case '*':
          return BigInt.asIntN(64, a * b);
        case '/':
          return b === 0n ? 0n : BigInt.asIntN(64, u(a) / u(b));
        case '%':
          return b === 0n ? a : BigInt.asIntN(64, u(a) % u(b));
        case '<<':
          return BigInt.asIntN(64, a << (u(b) & 63n));
        case '>>':
          return BigInt.asIntN(64, u(a) >> (u(b) & 63n));
        case '&':
          return BigInt.asIntN(64, a & b);
        case '|':
          return BigInt.asIntN(64, a | b);
        case '^':
          return BigInt.asIntN(64, a ^ b);
        default:
          return undefined;
      }
    }
    default:
      return undefined;
  }
}

/** The direct subexpressions of an expression. */
export function children(e: Expr): Expr[] {
  switch (e.kind) {
    case 'index':
      return [e.base, e.index];
    case 'member':
      return [e.base];
    case 'map':
      return e.keys;
    case 'call':
      return e.args;
    case 'unary':
      return [e.operand];
    case 'binary':
      return [e.left, e.right];
    case 'ternary':
      return [e.cond, e.then, e.else];
    case 'cast':
      return [e.operand];
    default:
      return [];
  }
}
