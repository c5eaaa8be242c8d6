import {
  type BtfSpec,
  type EventFormat,
  FormatError,
  findField,
  isFieldSigned,
  type ObjectSpec,
  readBpfObject,
  sha256Hex,
  tracepointFieldAccesses,
  transitiveCallees,
} from '@probeyard/formats';
import { type AssembledObject, assemble, encode, IsaError } from '@probeyard/isa';
import { linkObjectProgram, VerifierError } from '@probeyard/verifier';
import { type DisplayHint, displayTagPrefix, parseDisplayTag } from './display-hint.js';
import type { SpecScript } from './script-spec.js';
import { CompatError } from './errors.js';
import { type EventLayout, layoutOf } from './event-layout.js';

/** What a program attaches to: a tracefs event (its format file applies), or anything else. */
export type SpecAttach = { kind: 'tracepoint'; system: string; event: string } | { kind: 'other'; section: string };

/** Kinds of field relocations (libbpf's `BPF_CORE_FIELD_*`; assembly symbols are `byte-offset`). */
export type FieldRelocationKind = 'byte-offset' | 'byte-size' | 'exists' | 'signed' | 'lshift-u64' | 'rshift-u64';

/** Where the name of an accessed field came from, best first (`script`: compiled from a script's `args.FIELD`). */
export type FieldNameSource = 'core' | 'asm' | 'script' | 'verifier';

/** The field as the program was built for it (top-level field of the record). */
export interface BuiltField {
  byteOffset: number;
  size: number;
  signed: boolean;
  /** An inline array (`char comm[16]`). */
  array: boolean;
  /** Its element count, when known (element size = size / arrayLength). */
  arrayLength?: number;
}

/**
 * One instruction whose operand depends on an event's layout, named: a CO-RE relocation against
 * `struct trace_event_raw_<event>`, a symbolic operand `[r1 + event.field]` of assembly, or a
 * script's `args.FIELD` (packages/script: always a field of the program's own attach event).
 */
export interface SpecFieldRelocation {
  /** Instruction (slot) index in the program's linked instructions. */
  insnIndex: number;
  source: 'core' | 'asm' | 'script';
  kind: FieldRelocationKind;
  /** Event name as the struct or symbol names it (`sched_switch`), no system. */
  event: string;
  /** CO-RE flavor (`old` for `trace_event_raw_x___old`), '' for none. */
  flavor: string;
  /** The format file's field name (`common_pid` for `ent.pid`, `filename` for `__data_loc_filename`). */
  field: string;
  /** The program reads the `__data_loc` locator of the field, not an inline value. */
  dataLoc: boolean;
  /** Bytes from the start of the field to where the access starts (`prev_comm[3]` → 3). */
  addend: number;
  /** Bytes the access covers (`byte-offset` of a load: the load size; of an address: the member's size). */
  accessSize: number;
  /** The field's layout at build time; undefined for assembly assembled without build formats. */
  built: BuiltField | undefined;
}

/** One program (entry point), linked: subprograms appended, map references by index. */
export interface SpecProgram {
  name: string;
  section: string;
  attach: SpecAttach;
  /** Little-endian `struct bpf_insn`s; `lddw` of map i has src 1 and imm i (global data: src 2). */
  instructions: Uint8Array;
  fieldRelocations: SpecFieldRelocation[];
}

/**
 * A key or value layout, from BTF (`__type(key, …)`): the same shape as packages/vm's
 * `TypeDescription`, so snapshots can decode with it.
 */
export type ValueType =
  | { kind: 'int'; size: 1 | 2 | 4 | 8; signed?: boolean }
  | { kind: 'string'; size: number }
  | { kind: 'array'; element: ValueType; length: number }
  | { kind: 'struct'; fields: { name: string; offset: number; type: ValueType }[] };

/** A map, by the index its `lddw` uses. Global data sections come last, as one-entry arrays. */
export interface SpecMap {
  name: string;
  /** `BPF_MAP_TYPE_*` number. */
  type: number;
  typeName: string;
  keySize: number;
  valueSize: number;
  maxEntries: number;
  flags: number;
  keyType?: ValueType;
  valueType?: ValueType;
  /** The global data section this map stands for (`.rodata`, `.bss`). */
  globalSection?: string;
  readonly?: boolean;
  /** How the map wants to be shown (see {@link DisplayHint}); undefined: decided by convention at run time. */
  display?: DisplayHint;
  /**
   * Ring buffers and perf event arrays: the layout of the records the program emits into it,
   * from the object's BTF struct named `<map>_event`, the map's name without a final `s`
   * (`events` → `event`), or `event`, whichever exists first (clang emits a struct to BTF only
   * when a global or a function names it: libbpf-tools declare `struct event *unused_event;`).
   */
  eventType?: ValueType;
}

/** A global data section (`.rodata`, `.data`, `.bss`): initial bytes and variables. */
export interface SpecGlobal {
  section: string;
  kind: 'rodata' | 'data' | 'bss';
  size: number;
  /** Undefined for `.bss`. */
  bytes?: Uint8Array;
  vars: { name: string; byteOffset: number; size: number }[];
}

/**
 * One normalized spec of a tracing program, whatever it was written in: a BPF ELF object (clang
 * `-target bpf`) or a Probeyard assembly file. Parse only: nothing here depends on a kernel.
 */
export interface ProgramSpec {
  /** What the original bytes were (`script`: a script compiled by packages/script). */
  sourceKind: 'elf' | 'asm' | 'script';
  /** SHA-256 (hex) of the original bytes. */
  digest: string;
  byteLength: number;
  license: string | undefined;
  programs: SpecProgram[];
  maps: SpecMap[];
  globals: SpecGlobal[];
  /**
   * Layouts the program declares it was built against (hard-coded offsets are named by matching
   * the verifier's context-access report against these).
   */
  buildLayouts: EventLayout[];
  /**
   * Events whose layout the program is pinned to without naming fields: `system/event` → the
   * {@link layoutKey} hash of the layout it was built for. Such a program only runs where that
   * event's layout is byte-identical.
   */
  pinnedLayouts: Record<string, string>;
  /** Present for a program compiled from a script: its text, runtime probes and output actions. */
  script?: SpecScript;
}

/** Options of {@link readProgramSpec}. */
export interface ReadProgramOptions {
  /**
   * Formats the program was built against: assembly symbols resolve against these (their
   * offsets become the build-time ones) and hard-coded offsets are named from them.
   */
  buildFormats?: readonly EventFormat[];
}

const isElf = (b: Uint8Array) => b.length >= 4 && b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46;

/** Reads a program spec from the bytes of an ELF object or of an assembly file (UTF-8 text). */
export async function readProgramSpec(bytes: Uint8Array, options: ReadProgramOptions = {}): Promise<ProgramSpec> {
  const digest = await sha256Hex(bytes);
  const spec = isElf(bytes) ? specOfObject(bytes, options) : specOfAssembly(bytes, options);
  spec.digest = digest;
  return spec;
}

function attachOf(section: string, attach: { kind: string; system?: string; event?: string }): SpecAttach {
  if (attach.kind === 'tracepoint' && attach.system !== undefined && attach.event !== undefined) {
    return { kind: 'tracepoint', system: attach.system, event: attach.event };
  }
  return { kind: 'other', section };
}

const MAX_TYPE_DEPTH = 16;

/** The record layout of a ring buffer or perf event array named `map` (see {@link SpecMap.eventType}). */
function eventTypeOf(btf: BtfSpec, map: string): ValueType | undefined {
  for (const name of [`${map}_event`, map.replace(/s$/, ''), 'event']) {
    for (const id of btf.typeIdsByName(name)) {
      if (btf.kindOf(id) !== 'struct') continue;
      const t = valueTypeOfBtf(btf, id);
      if (t) return t;
    }
  }
  return undefined;
}

/**
 * Display hints the object declares on its map variables: BTF declaration tags
 * `probeyard.display:KIND[,key=value...]` (see {@link parseDisplayTag}), by the tagged VAR's id.
 * A malformed tag is the object's error (`malformed`, naming the variable).
 */
export function displayHintsOfBtf(btf: BtfSpec): Map<number, DisplayHint> {
  const out = new Map<number, DisplayHint>();
  for (let id = 1; id < btf.typeCount; id++) {
    if (btf.kindOf(id) !== 'decl_tag') continue;
    const t = btf.type(id);
    if (t.kind !== 'decl_tag' || t.componentIdx !== -1 || !t.name.startsWith(displayTagPrefix)) continue;
    out.set(t.type, parseDisplayTag(t.name, `of ${btf.nameOf(t.type) || `type ${t.type}`}`));
  }
  return out;
}

/** A BTF type as a {@link ValueType}; undefined for kinds a map layout does not use. */
export function valueTypeOfBtf(btf: BtfSpec, typeId: number, depth = 0): ValueType | undefined {
  if (depth > MAX_TYPE_DEPTH) return undefined;
  const id = btf.resolve(typeId);
  const t = btf.type(id);
  switch (t.kind) {
    case 'int':
      if (t.size === 1 || t.size === 2 || t.size === 4 || t.size === 8) return { kind: 'int', size: t.size, signed: t.signed };
      return undefined;
    case 'enum':
      return t.size === 1 || t.size === 2 || t.size === 4 || t.size === 8 ? { kind: 'int', size: t.size, signed: false } : undefined;
    case 'ptr':
      return { kind: 'int', size: 8, signed: false };
    case 'array': {
      const el = btf.type(btf.resolve(t.type));
      if (el.kind === 'int' && el.size === 1 && (el.char || el.name === 'char')) return { kind: 'string', size: t.nelems };
      const element = valueTypeOfBtf(btf, t.type, depth + 1);
      return element === undefined ? undefined : { kind: 'array', element, length: t.nelems };
    }
    case 'struct': {
      const fields: { name: string; offset: number; type: ValueType }[] = [];
      for (const m of t.members) {
        if (m.bitfieldSize !== 0 || m.bitOffset % 8 !== 0) return undefined;
        const type = valueTypeOfBtf(btf, m.type, depth + 1);
        if (type === undefined) return undefined;
        fields.push({ name: m.name, offset: m.bitOffset / 8, type });
      }
      return { kind: 'struct', fields };
    }
    default:
      return undefined;
  }
}

function specOfObject(bytes: Uint8Array, options: ReadProgramOptions): ProgramSpec {
  let object: ObjectSpec;
  try {
    object = readBpfObject(bytes);
  } catch (e) {
    if (e instanceof FormatError) throw new CompatError(e.code === 'unsupported' ? 'unsupported' : 'malformed', `read object: ${e.message}`, { cause: e });
    throw e;
  }
  if (!object.littleEndian) throw new CompatError('unsupported', 'read object: big-endian objects are not supported');
  const btf = object.btf;
  const accesses = tracepointFieldAccesses(object);
  const programs: SpecProgram[] = [];
  for (const p of object.programs) {
    let linked: ReturnType<typeof linkObjectProgram>;
    try {
      linked = linkObjectProgram(object, p.name);
    } catch (e) {
      if (e instanceof VerifierError) {
        throw new CompatError(e.code === 'unsupported' ? 'unsupported' : 'malformed', e.message.startsWith('link program') ? e.message : `link program ${p.name}: ${e.message}`, { program: p.name, cause: e });
      }
      throw e;
    }
    // the same function order linkObjectProgram uses: the program, then its callees
    const starts = new Map<string, number>();
    let total = 0;
    for (const name of [p.name, ...transitiveCallees(object, p.name)]) {
      starts.set(name, total);
      total += object.program(name)?.insnCount ?? 0;
    }
    const fieldRelocations: SpecFieldRelocation[] = [];
    for (const a of accesses) {
      const start = starts.get(a.program);
      if (start === undefined) continue;
      const access = a.relocation.access;
      const members = access?.steps.filter((s) => s.kind === 'member') ?? [];
      const entry = a.field.startsWith('common_') && members.length > 1 && !a.memberPath.startsWith('common_');
      const step = entry ? members[1] : members[0];
      let built: BuiltField | undefined;
      let addend = 0;
      if (a.syscallArg !== undefined && step !== undefined && step.kind === 'member' && btf !== undefined) {
        // `syscall_trace_enter.args[i]`: an `unsigned long` at args + i × sizeof(long), standing
        // for the i-th argument field of the syscall's format
        const t = btf.type(btf.resolve(step.typeId));
        const elem = t.kind === 'array' ? btf.sizeOf(t.type) : 8;
        const fieldByteOffset = step.bitOffset / 8 + a.syscallArg * elem;
        built = { byteOffset: fieldByteOffset, size: elem, signed: false, array: false };
        addend = a.kind === 'byte-offset' ? a.byteOffset - fieldByteOffset : 0;
      } else if (step !== undefined && step.kind === 'member' && btf !== undefined) {
        const fieldByteOffset = ((entry ? (members[0]?.kind === 'member' ? members[0].bitOffset : 0) : 0) + step.bitOffset) / 8;
        const t = btf.type(btf.resolve(step.typeId));
        built = { byteOffset: fieldByteOffset, size: btf.sizeOf(step.typeId), signed: btf.isSigned(step.typeId), array: t.kind === 'array' };
        if (t.kind === 'array') {
          built.arrayLength = t.nelems;
        }
        addend = a.kind === 'byte-offset' ? a.byteOffset - fieldByteOffset : 0;
      }
      fieldRelocations.push({
        insnIndex: start + a.insnIndex,
        source: 'core',
        kind: a.kind,
        event: a.event,
        flavor: a.flavor,
        field: a.field,
        dataLoc: a.dataLoc,
        addend,
        accessSize: a.byteSize,
        built,
      });
    }
    fieldRelocations.sort((x, y) => x.insnIndex - y.insnIndex);
    programs.push({ name: p.name, section: p.section, attach: attachOf(p.section, p.attach), instructions: linked.bytes, fieldRelocations });
  }
  const displayTags = btf === undefined ? new Map<number, DisplayHint>() : displayHintsOfBtf(btf);
  const maps: SpecMap[] = object.maps.map((m) => {
    const out: SpecMap = {
      name: m.name,
      type: m.type,
      typeName: m.typeName,
      keySize: m.keySize,
      valueSize: m.valueSize,
      maxEntries: m.maxEntries,
      flags: m.flags,
    };
    if (btf !== undefined && m.keyTypeId !== undefined) {
      const t = valueTypeOfBtf(btf, m.keyTypeId);
      if (t) out.keyType = t;
    }
    if (btf !== undefined && m.valueTypeId !== undefined) {
      const t = valueTypeOfBtf(btf, m.valueTypeId);
      if (t) out.valueType = t;
    }
    if (btf !== undefined && (m.type === 27 || m.type === 4)) {
      const t = eventTypeOf(btf, m.name);
      if (t) out.eventType = t;
    }
    const display = m.btfVarId === undefined ? undefined : displayTags.get(m.btfVarId);
    if (display) out.display = display;
    return out;
  });
  const globals: SpecGlobal[] = [];
  for (const g of object.globals) {
    maps.push({
      name: g.section,
      type: 2,
      typeName: 'array',
      keySize: 4,
      valueSize: Math.max(g.size, 1),
      maxEntries: 1,
      flags: 0,
      globalSection: g.section,
      readonly: g.readonly,
    });
    const sg: SpecGlobal = { section: g.section, kind: g.kind, size: g.size, vars: g.vars.map((v) => ({ name: v.name, byteOffset: v.byteOffset, size: v.size })) };
    if (g.bytes !== undefined) sg.bytes = new Uint8Array(g.bytes);
    globals.push(sg);
  }
  return {
    sourceKind: 'elf',
    digest: '',
    byteLength: bytes.length,
    license: object.license,
    programs,
    maps,
    globals,
    buildLayouts: (options.buildFormats ?? []).map(layoutOf),
    pinnedLayouts: {},
  };
}

function findBuildFormat(formats: readonly EventFormat[], event: string): EventFormat | undefined {
  return formats.find((f) => f.name === event);
}

function specOfAssembly(bytes: Uint8Array, options: ReadProgramOptions): ProgramSpec {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (e) {
    throw new CompatError('malformed', 'read assembly: neither an ELF object nor UTF-8 text', { cause: e });
  }
  const formats = options.buildFormats ?? [];
  let object: AssembledObject;
  try {
    object = assemble(text, {
      resolveField:
        formats.length === 0
          ? undefined
          : (event, field) => {
              const format = findBuildFormat(formats, event);
              const f = format && findField(format, field);
              return f && { byteOffset: f.byteOffset, size: f.size, signed: isFieldSigned(f) };
            },
    });
  } catch (e) {
    if (e instanceof IsaError) throw new CompatError('malformed', `read assembly: ${e.message}`, { cause: e });
    throw e;
  }
  const maps: SpecMap[] = object.maps.map((m) => ({
    name: m.name,
    type: m.typeId,
    typeName: m.type,
    keySize: m.keySize,
    valueSize: m.valueSize,
    maxEntries: m.maxEntries,
    flags: m.flags,
  }));
  const programs: SpecProgram[] = [];
  for (const p of object.programs) {
    const instructions = encode(p.instructions);
    const view = new DataView(instructions.buffer, instructions.byteOffset, instructions.byteLength);
    for (const r of p.mapRelocations) {
      const index = maps.findIndex((m) => m.name === r.map);
      if (index < 0) throw new CompatError('malformed', `read assembly: line ${r.line}: program ${p.name} names undeclared map ${r.map}`, { program: p.name, insnIndex: r.insnIndex });
      view.setUint8(r.insnIndex * 8 + 1, (view.getUint8(r.insnIndex * 8 + 1) & 0x0f) | 0x10);
      view.setInt32(r.insnIndex * 8 + 4, index, true);
    }
    const fieldRelocations: SpecFieldRelocation[] = p.fieldRelocations.map((r) => {
      let built: BuiltField | undefined;
      let dataLoc = false;
      if (r.layout !== undefined) {
        const format = findBuildFormat(formats, r.event);
        const f = format && findField(format, r.field);
        built = { byteOffset: r.layout.byteOffset, size: r.layout.size, signed: r.layout.signed, array: f?.array !== undefined };
        if (f?.array?.length !== undefined) built.arrayLength = f.array.length;
        dataLoc = f?.dynamic !== undefined;
      }
      return {
        insnIndex: r.insnIndex,
        source: 'asm',
        kind: 'byte-offset',
        event: r.event,
        flavor: '',
        field: r.field,
        dataLoc,
        addend: r.addend,
        accessSize: r.accessSize,
        built,
      };
    });
    const ap = p.attachPoint;
    const attach: SpecAttach = ap?.kind === 'tracepoint' ? { kind: 'tracepoint', system: ap.system, event: ap.event } : { kind: 'other', section: p.section };
    programs.push({ name: p.name, section: p.section, attach, instructions, fieldRelocations });
  }
  return {
    sourceKind: 'asm',
    digest: '',
    byteLength: bytes.length,
    license: object.license,
    programs,
    maps,
    globals: [],
    buildLayouts: formats.map(layoutOf),
    pinnedLayouts: {},
  };
}
