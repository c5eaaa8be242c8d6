import { FormatError } from '../errors.js';
import { BtfIntEncoding, BtfKind, btfKindNames, btfLinkageNames, type BtfKindName, type BtfLinkage } from './btf-kind.js';
import { type BtfHeader, decodeBtfHeader } from './btf-header.js';
import { type BtfRawType, type BtfRawTypes, indexBtfTypes } from './btf-raw-type.js';
import { BtfStrings } from './btf-strings.js';
import type { BtfMember, BtfType } from './btf-type.js';

/** How deep typedef / qualifier / array chains are followed (libbpf's `MAX_RESOLVE_DEPTH`). */
export const MAX_RESOLVE_DEPTH = 32;

/** Structs visited at most by one `member()` search through anonymous members. */
export const MEMBER_SEARCH_BUDGET = 10_000;

const modifierKinds = new Set<number>([BtfKind.Typedef, BtfKind.Volatile, BtfKind.Const, BtfKind.Restrict, BtfKind.TypeTag]);
const qualifierKinds = new Set<number>([BtfKind.Volatile, BtfKind.Const, BtfKind.Restrict, BtfKind.TypeTag]);

/** A member found by name, with its offset from the start of the outer struct. */
export interface BtfMemberMatch {
  member: BtfMember;
  /** Bit offset from the start of the struct searched (through anonymous members). */
  bitOffset: number;
  /** Member indices from the struct searched down to the member (more than one through anonymous members). */
  indices: number[];
}

/**
 * Parsed BTF (a *spec*): the header, the raw type index and the strings. Friendly types are
 * decoded on first use and cached. Every lookup is bounds-checked; errors are `FormatError`s.
 */
export class BtfSpec {
  readonly header: BtfHeader;
  readonly littleEndian: boolean;
  readonly raw: BtfRawTypes;
  readonly strings: BtfStrings;
  readonly #types: (BtfType | undefined)[];
  #byName: Map<string, number[]> | undefined;

  constructor(header: BtfHeader, raw: BtfRawTypes, strings: BtfStrings) {
    this.header = header;
    this.littleEndian = header.littleEndian;
    this.raw = raw;
    this.strings = strings;
    this.#types = new Array<BtfType | undefined>(raw.count);
  }

  /** Number of type ids including void: valid ids are `0 .. typeCount - 1`. */
  get typeCount(): number {
    return this.raw.count;
  }

  /** The friendly type of `id` (0 is void). */
  type(id: number): BtfType {
    if (id === 0) return { kind: 'void', id: 0, name: '' };
    const hit = this.#types[id];
    if (hit !== undefined) return hit;
    const t = decodeBtfType(this.raw.get(id), this);
    this.#types[id] = t;
    return t;
  }

  /** Kind name of `id` without decoding its members. */
  kindOf(id: number): BtfKindName {
    return btfKindNames[this.raw.kindOf(id)] ?? 'void';
  }

  /** Name of `id` without decoding its members ('' for anonymous types and void). */
  nameOf(id: number): string {
    if (id === 0) return '';
    const r = this.raw.get(id);
    return this.strings.get(r.nameOffset, `type ${id} name`);
  }

  /** Ids of every type with this name, in id order (the name index is built on first call). */
  typeIdsByName(name: string): number[] {
    if (this.#byName === undefined) {
      const m = new Map<string, number[]>();
      for (let id = 1; id < this.typeCount; id++) {
        const n = this.nameOf(id);
        if (n === '') continue;
        const list = m.get(n);
        if (list === undefined) m.set(n, [id]);
        else list.push(id);
      }
      this.#byName = m;
    }
    return this.#byName.get(name) ?? [];
  }

  /** The first type with this name and (optionally) kind; `not-found` when there is none. */
  typeByName(name: string, kind?: BtfKindName): BtfType {
    for (const id of this.typeIdsByName(name)) {
      if (kind === undefined || this.kindOf(id) === kind) return this.type(id);
    }
    throw new FormatError('not-found', `type ${kind ?? ''}${kind ? ' ' : ''}${name}: not in btf`);
  }

  /** Follows typedefs and qualifiers (const, volatile, restrict, type tags) to the underlying id. */
  resolve(id: number): number {
    return this.#follow(id, modifierKinds);
  }

  /** Follows qualifiers only, keeping typedefs. */
  skipQualifiers(id: number): number {
    return this.#follow(id, qualifierKinds);
  }

  #follow(id: number, kinds: Set<number>): number {
    let cur = id;
    for (let depth = 0; depth <= MAX_RESOLVE_DEPTH; depth++) {
      if (cur === 0) return 0;
      const r = this.raw.get(cur);
      if (!kinds.has(r.kind)) return cur;
      cur = r.sizeOrType;
    }
    throw new FormatError('malformed', `type ${id}: typedef/qualifier chain longer than ${MAX_RESOLVE_DEPTH} (a loop?)`, {
      byteOffset: this.raw.view.baseOffset + this.raw.get(id).byteOffset,
    });
  }

  /** Error context pointing at the record of type `id` (its offset in the input). */
  recordAt(id: number): { byteOffset: number | undefined } {
    const off = id > 0 ? this.raw.offsets[id - 1] : undefined;
    return { byteOffset: off === undefined ? undefined : this.raw.view.baseOffset + off };
  }

  /** Size in bytes of a value of type `id` (pointers are 8 bytes); `malformed` for sizeless kinds. */
  sizeOf(id: number): number {
    let mult = 1;
    let cur = id;
    for (let depth = 0; depth <= MAX_RESOLVE_DEPTH; depth++) {
      const t = this.type(this.resolve(cur));
      switch (t.kind) {
        case 'int':
        case 'struct':
        case 'union':
        case 'enum':
        case 'enum64':
        case 'float':
        case 'datasec':
          return this.#checkedSize(mult * t.size, id);
        case 'ptr':
          return this.#checkedSize(mult * 8, id);
        case 'array':
          mult *= t.nelems;
          this.#checkedSize(mult, id);
          cur = t.type;
          continue;
        case 'var':
          cur = t.type;
          continue;
        default:
          throw new FormatError('malformed', `size of type ${id}: ${t.kind} has no size`, this.recordAt(id));
      }
    }
    throw new FormatError('malformed', `size of type ${id}: array/var chain longer than ${MAX_RESOLVE_DEPTH} (a loop?)`, this.recordAt(id));
  }

  #checkedSize(n: number, id: number): number {
    if (!Number.isSafeInteger(n) || n > 0xffffffff) throw new FormatError('out-of-range', `size of type ${id}: ${n} bytes overflows u32`, this.recordAt(id));
    return n;
  }

  /**
   * The member called `name` of struct/union `id` (after resolving typedefs), searching through
   * anonymous struct/union members as C does. Undefined when there is none.
   */
  member(id: number, name: string): BtfMemberMatch | undefined {
    return this.#member(id, name, 0, { left: MEMBER_SEARCH_BUDGET });
  }

  #member(id: number, name: string, depth: number, budget: { left: number }): BtfMemberMatch | undefined {
    if (depth > MAX_RESOLVE_DEPTH) throw new FormatError('malformed', `member ${name}: anonymous members nested deeper than ${MAX_RESOLVE_DEPTH}`, this.recordAt(id));
    if (--budget.left < 0) throw new FormatError('out-of-range', `member ${name}: more than ${MEMBER_SEARCH_BUDGET} anonymous members searched`, this.recordAt(id));
    const t = this.type(this.resolve(id));
    if (t.kind !== 'struct' && t.kind !== 'union') return undefined;
    for (let i = 0; i < t.members.length; i++) {
      const m = t.members[i] as BtfMember;
      if (m.name === name) return { member: m, bitOffset: m.bitOffset, indices: [i] };
      if (m.name === '') {
        const inner = this.#member(m.type, name, depth + 1, budget);
        if (inner !== undefined) return { member: inner.member, bitOffset: m.bitOffset + inner.bitOffset, indices: [i, ...inner.indices] };
      }
    }
    return undefined;
  }

  /** True when the resolved integer or enum type `id` is signed. */
  isSigned(id: number): boolean {
    const t = this.type(this.resolve(id));
    if (t.kind === 'int') return t.signed;
    if (t.kind === 'enum' || t.kind === 'enum64') return t.signed;
    return false;
  }
}

function linkage(n: number): BtfLinkage {
  return btfLinkageNames[n] ?? 'static';
}

/** Decodes one raw record (and its trailing data) into a friendly type. */
export function decodeBtfType(r: BtfRawType, spec: BtfSpec): BtfType {
  const v = spec.raw.view;
  const id = r.id;
  const name = spec.strings.get(r.nameOffset, `type ${id} name`);
  const extra = r.byteOffset + 12;
  const str = (off: number, what: string) => spec.strings.get(off, `type ${id} ${what}`);
  switch (r.kind) {
    case BtfKind.Int: {
      const word = v.u32(extra);
      const enc = (word >>> 24) & 0x0f;
      return {
        kind: 'int',
        id,
        name,
        size: r.sizeOrType,
        signed: (enc & BtfIntEncoding.Signed) !== 0,
        char: (enc & BtfIntEncoding.Char) !== 0,
        bool: (enc & BtfIntEncoding.Bool) !== 0,
        bitOffset: (word >>> 16) & 0xff,
        bits: word & 0xff,
      };
    }
    case BtfKind.Ptr:
      return { kind: 'ptr', id, name, type: r.sizeOrType };
    case BtfKind.Array:
      return { kind: 'array', id, name, type: v.u32(extra), indexType: v.u32(extra + 4), nelems: v.u32(extra + 8) };
    case BtfKind.Struct:
    case BtfKind.Union: {
      const members: BtfMember[] = [];
      for (let i = 0; i < r.vlen; i++) {
        const at = extra + i * 12;
        const off = v.u32(at + 8);
        members.push({
          name: str(v.u32(at), `member ${i} name`),
          type: v.u32(at + 4),
          bitOffset: r.kindFlag ? off & 0xffffff : off,
          bitfieldSize: r.kindFlag ? off >>> 24 : 0,
        });
      }
      return r.kind === BtfKind.Struct
        ? { kind: 'struct', id, name, size: r.sizeOrType, members }
        : { kind: 'union', id, name, size: r.sizeOrType, members };
    }
    case BtfKind.Enum: {
      const values = [];
      for (let i = 0; i < r.vlen; i++) {
        const at = extra + i * 8;
        values.push({ name: str(v.u32(at), `enumerator ${i} name`), value: r.kindFlag ? v.i32(at + 4) : v.u32(at + 4) });
      }
      return { kind: 'enum', id, name, size: r.sizeOrType, signed: r.kindFlag, values };
    }
    case BtfKind.Enum64: {
      const values = [];
      for (let i = 0; i < r.vlen; i++) {
        const at = extra + i * 12;
        const lo32 = v.u32(at + 4);
        const hi32 = v.u32(at + 8);
        const u = (BigInt(hi32) << 32n) | BigInt(lo32);
        values.push({ name: str(v.u32(at), `enumerator ${i} name`), value: r.kindFlag ? BigInt.asIntN(64, u) : u, lo32, hi32 });
      }
      return { kind: 'enum64', id, name, size: r.sizeOrType, signed: r.kindFlag, values };
    }
    case BtfKind.Fwd:
      return { kind: 'fwd', id, name, fwdKind: r.kindFlag ? 'union' : 'struct' };
    case BtfKind.Typedef:
      return { kind: 'typedef', id, name, type: r.sizeOrType };
    case BtfKind.Volatile:
      return { kind: 'volatile', id, name, type: r.sizeOrType };
    case BtfKind.Const:
      return { kind: 'const', id, name, type: r.sizeOrType };
    case BtfKind.Restrict:
      return { kind: 'restrict', id, name, type: r.sizeOrType };
    case BtfKind.TypeTag:
      return { kind: 'type_tag', id, name, type: r.sizeOrType };
    case BtfKind.Func:
      return { kind: 'func', id, name, type: r.sizeOrType, linkage: linkage(r.vlen) };
    case BtfKind.FuncProto: {
      const params = [];
      for (let i = 0; i < r.vlen; i++) {
        const at = extra + i * 8;
        params.push({ name: str(v.u32(at), `param ${i} name`), type: v.u32(at + 4) });
      }
      const last = params.at(-1);
      const variadic = last !== undefined && last.type === 0 && last.name === '';
      if (variadic) params.pop();
      return { kind: 'func_proto', id, name, returnType: r.sizeOrType, params, variadic };
    }
    case BtfKind.Var:
      return { kind: 'var', id, name, type: r.sizeOrType, linkage: linkage(v.u32(extra)) };
    case BtfKind.Datasec: {
      const vars = [];
      for (let i = 0; i < r.vlen; i++) {
        const at = extra + i * 12;
        vars.push({ type: v.u32(at), byteOffset: v.u32(at + 4), size: v.u32(at + 8) });
      }
      return { kind: 'datasec', id, name, size: r.sizeOrType, vars };
    }
    case BtfKind.Float:
      return { kind: 'float', id, name, size: r.sizeOrType };
    case BtfKind.DeclTag:
      return { kind: 'decl_tag', id, name, type: r.sizeOrType, componentIdx: v.i32(extra) };
    default:
      throw new FormatError('malformed', `type ${id}: unknown kind ${r.kind}`, { byteOffset: v.baseOffset + r.byteOffset + 4 });
  }
}

/**
 * Decodes a `.BTF` blob (either byte order, from its magic): header, type index, strings.
 * `baseOffset` is where the blob starts in a larger input (the `.BTF` section's file offset):
 * every error's `byteOffset`, including those of types decoded later, counts from there.
 */
export function decodeBtf(bytes: Uint8Array, baseOffset = 0): BtfSpec {
  const header = rebase(() => decodeBtfHeader(bytes), baseOffset, '.BTF');
  const typeStart = header.hdrLen + header.typeOff;
  const strStart = header.hdrLen + header.strOff;
  const raw = rebase(() => indexBtfTypes(bytes.subarray(typeStart, typeStart + header.typeLen), header.littleEndian, baseOffset + typeStart), 0, '.BTF');
  const strings = new BtfStrings(bytes.subarray(strStart, strStart + header.strLen), baseOffset + strStart);
  return new BtfSpec(header, raw, strings);
}

/** Runs `f`; a `FormatError` from it has `delta` added to its byte offset. */
export function rebase<T>(f: () => T, delta: number, section?: string): T {
  try {
    return f();
  } catch (e) {
    if (!(e instanceof FormatError) || (delta === 0 && section === undefined)) throw e;
    const moved = new FormatError(e.code, e.message, {
      byteOffset: e.byteOffset === undefined ? undefined : e.byteOffset + delta,
      line: e.line,
      section: e.section ?? section,
      event: e.event,
      cause: e.cause,
    });
    moved.stack = e.stack;
    throw moved;
  }
}

/** `decodeBtf` with errors prefixed "read btf: ". */
export function readBtf(bytes: Uint8Array, baseOffset = 0): BtfSpec {
  try {
    return decodeBtf(bytes, baseOffset);
  } catch (e) {
    if (e instanceof FormatError) throw e.withPrefix('read btf');
    throw e;
  }
}
