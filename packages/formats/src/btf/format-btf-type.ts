import { FormatError } from '../errors.js';
import { MAX_RESOLVE_DEPTH, type BtfSpec } from './btf-spec.js';
import type { BtfEnum, BtfEnum64, BtfStruct, BtfUnion } from './btf-type.js';

interface Ctx {
  spec: BtfSpec;
  indent: string;
  depth: number;
  /** Declarators left to print: anonymous types are printed inline, so a hostile blob could fan out exponentially. */
  budget: { left: number };
}

/** At most this many declarators per printed type. */
export const FORMAT_BUDGET = 100_000;

function ctx(spec: BtfSpec): Ctx {
  return { spec, indent: '', depth: 0, budget: { left: FORMAT_BUDGET } };
}

function join(base: string, inner: string): string {
  if (inner === '') return base;
  if (inner.startsWith('[')) return base + inner;
  return `${base} ${inner}`;
}

/** A C declarator for type `id` named `name` (`char prev_comm[16]`, `int (*type)[27]`). */
function decl(c: Ctx, id: number, inner: string): string {
  if (c.depth > MAX_RESOLVE_DEPTH) throw new FormatError('malformed', `format type ${id}: nested deeper than ${MAX_RESOLVE_DEPTH} (a loop?)`, c.spec.recordAt(id));
  if (--c.budget.left < 0) throw new FormatError('out-of-range', `format type: more than ${FORMAT_BUDGET} declarators`, c.spec.recordAt(id));
  const t = c.spec.type(id);
  const deeper: Ctx = { ...c, depth: c.depth + 1 };
  switch (t.kind) {
    case 'void':
      return join('void', inner);
    case 'int':
    case 'float':
    case 'typedef':
      return join(t.name, inner);
    case 'struct':
    case 'union':
      return join(t.name === '' ? `${t.kind} ${body(deeper, t)}` : `${t.kind} ${t.name}`, inner);
    case 'enum':
    case 'enum64':
      return join(t.name === '' ? `enum ${enumBody(c, t)}` : `enum ${t.name}`, inner);
    case 'fwd':
      return join(`${t.fwdKind} ${t.name}`, inner);
    case 'ptr': {
      const target = c.spec.kindOf(t.type);
      return decl(deeper, t.type, target === 'array' || target === 'func_proto' ? `(*${inner})` : `*${inner}`);
    }
    case 'array':
      return decl(deeper, t.type, `${inner}[${t.nelems}]`);
    case 'func_proto': {
      const params = t.params.map((p) => decl(deeper, p.type, p.name));
      if (t.variadic) params.push('...');
      return decl(deeper, t.returnType, `${inner}(${params.length === 0 ? 'void' : params.join(', ')})`);
    }
    case 'const':
    case 'volatile':
    case 'restrict': {
      if (c.spec.kindOf(t.type) === 'ptr') return decl(deeper, t.type, inner === '' ? t.kind : `${t.kind} ${inner}`);
      return `${t.kind} ${decl(deeper, t.type, inner)}`;
    }
    case 'type_tag':
      return decl(deeper, t.type, `__attribute__((btf_type_tag("${t.name}")))${inner === '' ? '' : ` ${inner}`}`);
    case 'func':
      return decl(deeper, t.type, inner === '' ? t.name : inner);
    case 'var':
      return decl(deeper, t.type, inner === '' ? t.name : inner);
    case 'datasec':
      return join(`SEC("${t.name}")`, inner);
    case 'decl_tag':
      return join(`__attribute__((btf_decl_tag("${t.name}")))`, inner);
  }
}

function body(c: Ctx, t: BtfStruct | BtfUnion): string {
  const inner: Ctx = { ...c, indent: `${c.indent}\t` };
  const lines = t.members.map((m) => {
    const bits = m.bitfieldSize > 0 ? `: ${m.bitfieldSize}` : '';
    return `${inner.indent}${decl(inner, m.type, m.name)}${bits};`;
  });
  return lines.length === 0 ? '{}' : `{\n${lines.join('\n')}\n${c.indent}}`;
}

function enumBody(c: Ctx, t: BtfEnum | BtfEnum64): string {
  const lines = t.values.map((v) => `${c.indent}\t${v.name} = ${v.value},`);
  return lines.length === 0 ? '{}' : `{\n${lines.join('\n')}\n${c.indent}}`;
}

/** The C spelling of type `id` as it would appear in a cast: `struct trace_entry`, `char[16]`, `int (*)[27]`. */
export function formatBtfTypeName(spec: BtfSpec, id: number): string {
  return decl(ctx(spec), id, '');
}

/** A C declaration of `name` with type `id`: `char prev_comm[16]`. */
export function formatBtfDeclaration(spec: BtfSpec, id: number, name: string): string {
  return decl(ctx(spec), id, name);
}

/**
 * A C-like definition of type `id`: the full body of a struct, union or enum, `typedef … name;`,
 * a function's prototype, a variable's declaration; other kinds print their type name.
 */
export function formatBtfType(spec: BtfSpec, id: number): string {
  const c = ctx(spec);
  const t = spec.type(id);
  switch (t.kind) {
    case 'struct':
    case 'union':
      return `${t.kind}${t.name === '' ? '' : ` ${t.name}`} ${body({ ...c, depth: 1 }, t)};`;
    case 'enum':
    case 'enum64':
      return `enum${t.name === '' ? '' : ` ${t.name}`} ${enumBody(c, t)};`;
    case 'typedef':
      return `typedef ${decl(c, t.type, t.name)};`;
    case 'func':
      return `${t.linkage === 'static' ? 'static ' : t.linkage === 'extern' ? 'extern ' : ''}${decl(c, t.type, t.name)};`;
    case 'var':
      return `${t.linkage === 'static' ? 'static ' : t.linkage === 'extern' ? 'extern ' : ''}${decl(c, t.type, t.name)};`;
    case 'datasec': {
      const lines = t.vars.map((v) => `\t${decl(c, v.type, '')}; /* offset ${v.byteOffset}, size ${v.size} */`);
      return `SEC("${t.name}") {${lines.length === 0 ? '' : `\n${lines.join('\n')}\n`}}`;
    }
    default:
      return formatBtfTypeName(spec, id);
  }
}
