import { parseDisplayHint } from './display-hint.js';
import { CompatError } from './errors.js';
import type { EventLayout, LayoutField } from './event-layout.js';
import type { BuiltField, ProgramSpec, SpecAttach, SpecFieldRelocation, SpecGlobal, SpecMap, SpecProgram, ValueType } from './program-spec.js';
import type { ScriptAction, SpecScript } from './script-spec.js';

/** The JSON form of a {@link ProgramSpec}: byte arrays as lowercase hex, everything else as is. */
export interface ProgramSpecJson {
  version: 1;
  sourceKind: 'elf' | 'asm' | 'script';
  digest: string;
  byteLength: number;
  license: string | null;
  programs: (Omit<SpecProgram, 'instructions' | 'fieldRelocations'> & { instructions: string; fieldRelocations: (Omit<SpecFieldRelocation, 'built'> & { built: BuiltField | null })[] })[];
  maps: SpecMap[];
  globals: (Omit<SpecGlobal, 'bytes'> & { bytes?: string })[];
  buildLayouts: EventLayout[];
  pinnedLayouts: Record<string, string>;
  script?: SpecScript;
}

const hexOf = (b: Uint8Array) => {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
};

function bytesOf(hex: unknown, what: string): Uint8Array {
  if (typeof hex !== 'string' || hex.length % 2 !== 0 || !/^[0-9a-f]*$/.test(hex)) throw bad(`${what}: not a hex string`);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

const bad = (detail: string) => new CompatError('malformed', `program spec json: ${detail}`);

/** A spec as JSON-safe data (see {@link specFromJson}; the pair loses nothing). */
export function specToJson(spec: ProgramSpec): ProgramSpecJson {
  return {
    version: 1,
    sourceKind: spec.sourceKind,
    digest: spec.digest,
    byteLength: spec.byteLength,
    license: spec.license ?? null,
    programs: spec.programs.map((p) => ({
      name: p.name,
      section: p.section,
      attach: { ...p.attach },
      instructions: hexOf(p.instructions),
      fieldRelocations: p.fieldRelocations.map((r) => ({ ...r, built: r.built === undefined ? null : { ...r.built } })),
    })),
    maps: spec.maps.map((m) => structuredClone(m)),
    globals: spec.globals.map((g) => {
      const { bytes, ...rest } = g;
      return bytes === undefined ? structuredClone(rest) : { ...structuredClone(rest), bytes: hexOf(bytes) };
    }),
    buildLayouts: structuredClone(spec.buildLayouts),
    pinnedLayouts: { ...spec.pinnedLayouts },
    ...(spec.script === undefined ? {} : { script: structuredClone(spec.script) }),
  };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function str(o: Obj, key: string, what: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw bad(`${what}.${key}: want a string`);
  return v;
}
function int(o: Obj, key: string, what: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw bad(`${what}.${key}: want an integer`);
  return v;
}
function bool(o: Obj, key: string, what: string): boolean {
  const v = o[key];
  if (typeof v !== 'boolean') throw bad(`${what}.${key}: want a boolean`);
  return v;
}
function arr(o: Obj, key: string, what: string): unknown[] {
  const v = o[key];
  if (!Array.isArray(v)) throw bad(`${what}.${key}: want an array`);
  return v;
}
function obj(v: unknown, what: string): Obj {
  if (!isObj(v)) throw bad(`${what}: want an object`);
  return v;
}

function valueType(v: unknown, what: string, depth = 0): ValueType {
  if (depth > 32) throw bad(`${what}: nested too deep`);
  const o = obj(v, what);
  switch (o.kind) {
    case 'int': {
      const size = int(o, 'size', what);
      if (size !== 1 && size !== 2 && size !== 4 && size !== 8) throw bad(`${what}.size: ${size} is not 1, 2, 4 or 8`);
      return o.signed === undefined ? { kind: 'int', size } : { kind: 'int', size, signed: bool(o, 'signed', what) };
    }
    case 'string':
      return { kind: 'string', size: int(o, 'size', what) };
    case 'array':
      return { kind: 'array', element: valueType(o.element, `${what}.element`, depth + 1), length: int(o, 'length', what) };
    case 'struct':
      return {
        kind: 'struct',
        fields: arr(o, 'fields', what).map((f, i) => {
          const fo = obj(f, `${what}.fields[${i}]`);
          return { name: str(fo, 'name', what), offset: int(fo, 'offset', what), type: valueType(fo.type, `${what}.fields[${i}].type`, depth + 1) };
        }),
      };
    default:
      throw bad(`${what}.kind: unknown '${String(o.kind)}'`);
  }
}

function attach(v: unknown, what: string): SpecAttach {
  const o = obj(v, what);
  if (o.kind === 'tracepoint') return { kind: 'tracepoint', system: str(o, 'system', what), event: str(o, 'event', what) };
  if (o.kind === 'other') return { kind: 'other', section: str(o, 'section', what) };
  throw bad(`${what}.kind: unknown '${String(o.kind)}'`);
}

const relocationKinds = new Set(['byte-offset', 'byte-size', 'exists', 'signed', 'lshift-u64', 'rshift-u64']);

function relocation(v: unknown, what: string): SpecFieldRelocation {
  const o = obj(v, what);
  const kind = str(o, 'kind', what);
  if (!relocationKinds.has(kind)) throw bad(`${what}.kind: unknown '${kind}'`);
  const source = str(o, 'source', what);
  if (source !== 'core' && source !== 'asm' && source !== 'script') throw bad(`${what}.source: unknown '${source}'`);
  let built: BuiltField | undefined;
  if (o.built !== null && o.built !== undefined) {
    const b = obj(o.built, `${what}.built`);
    built = { byteOffset: int(b, 'byteOffset', what), size: int(b, 'size', what), signed: bool(b, 'signed', what), array: bool(b, 'array', what) };
    if (b.arrayLength !== undefined) built.arrayLength = int(b, 'arrayLength', what);
  }
  return {
    insnIndex: int(o, 'insnIndex', what),
    source,
    kind: kind as SpecFieldRelocation['kind'],
    event: str(o, 'event', what),
    flavor: str(o, 'flavor', what),
    field: str(o, 'field', what),
    dataLoc: bool(o, 'dataLoc', what),
    addend: int(o, 'addend', what),
    accessSize: int(o, 'accessSize', what),
    built,
  };
}

function layout(v: unknown, what: string): EventLayout {
  const o = obj(v, what);
  return {
    system: str(o, 'system', what),
    event: str(o, 'event', what),
    fields: arr(o, 'fields', what).map((f, i) => {
      const w = `${what}.fields[${i}]`;
      const fo = obj(f, w);
      const out: LayoutField = {
        name: str(fo, 'name', w),
        type: str(fo, 'type', w),
        byteOffset: int(fo, 'byteOffset', w),
        size: int(fo, 'size', w),
        signed: bool(fo, 'signed', w),
        isCommon: bool(fo, 'isCommon', w),
      };
      if (fo.arrayLength !== undefined) out.arrayLength = int(fo, 'arrayLength', w);
      if (fo.dynamic !== undefined) {
        if (fo.dynamic !== 'data_loc' && fo.dynamic !== 'rel_loc') throw bad(`${w}.dynamic: unknown '${String(fo.dynamic)}'`);
        out.dynamic = fo.dynamic;
      }
      return out;
    }),
  };
}

/** Reads the JSON form back (a parsed object or its text); `malformed` names the bad member. */
export function specFromJson(json: unknown): ProgramSpec {
  let root: unknown = json;
  if (typeof json === 'string') {
    try {
      root = JSON.parse(json);
    } catch (e) {
      throw new CompatError('malformed', `program spec json: ${(e as Error).message}`, { cause: e });
    }
  }
  const o = obj(root, 'spec');
  if (o.version !== 1) throw bad(`spec.version: want 1, got ${String(o.version)}`);
  const sourceKind = str(o, 'sourceKind', 'spec');
  if (sourceKind !== 'elf' && sourceKind !== 'asm' && sourceKind !== 'script') throw bad(`spec.sourceKind: unknown '${sourceKind}'`);
  const license = o.license === null ? undefined : str(o, 'license', 'spec');
  const programs: SpecProgram[] = arr(o, 'programs', 'spec').map((v, i) => {
    const w = `spec.programs[${i}]`;
    const p = obj(v, w);
    const instructions = bytesOf(p.instructions, `${w}.instructions`);
    if (instructions.length % 8 !== 0) throw bad(`${w}.instructions: ${instructions.length} bytes, not a multiple of 8`);
    return {
      name: str(p, 'name', w),
      section: str(p, 'section', w),
      attach: attach(p.attach, `${w}.attach`),
      instructions,
      fieldRelocations: arr(p, 'fieldRelocations', w).map((r, j) => relocation(r, `${w}.fieldRelocations[${j}]`)),
    };
  });
  const maps: SpecMap[] = arr(o, 'maps', 'spec').map((v, i) => {
    const w = `spec.maps[${i}]`;
    const m = obj(v, w);
    const out: SpecMap = {
      name: str(m, 'name', w),
      type: int(m, 'type', w),
      typeName: str(m, 'typeName', w),
      keySize: int(m, 'keySize', w),
      valueSize: int(m, 'valueSize', w),
      maxEntries: int(m, 'maxEntries', w),
      flags: int(m, 'flags', w),
    };
    if (m.keyType !== undefined) out.keyType = valueType(m.keyType, `${w}.keyType`);
    if (m.valueType !== undefined) out.valueType = valueType(m.valueType, `${w}.valueType`);
    if (m.globalSection !== undefined) out.globalSection = str(m, 'globalSection', w);
    if (m.readonly !== undefined) out.readonly = bool(m, 'readonly', w);
    if (m.display !== undefined) out.display = parseDisplayHint(m.display, `${w}.display`);
    if (m.eventType !== undefined) out.eventType = valueType(m.eventType, `${w}.eventType`);
    return out;
  });
  const globals: SpecGlobal[] = arr(o, 'globals', 'spec').map((v, i) => {
    const w = `spec.globals[${i}]`;
    const g = obj(v, w);
    const kind = str(g, 'kind', w);
    if (kind !== 'rodata' && kind !== 'data' && kind !== 'bss') throw bad(`${w}.kind: unknown '${kind}'`);
    const out: SpecGlobal = {
      section: str(g, 'section', w),
      kind,
      size: int(g, 'size', w),
      vars: arr(g, 'vars', w).map((x, j) => {
        const vo = obj(x, `${w}.vars[${j}]`);
        return { name: str(vo, 'name', w), byteOffset: int(vo, 'byteOffset', w), size: int(vo, 'size', w) };
      }),
    };
    if (g.bytes !== undefined) out.bytes = bytesOf(g.bytes, `${w}.bytes`);
    return out;
  });
  const pinned = obj(o.pinnedLayouts, 'spec.pinnedLayouts');
  const pinnedLayouts: Record<string, string> = {};
  for (const [k, v] of Object.entries(pinned)) {
    if (typeof v !== 'string') throw bad(`spec.pinnedLayouts.${k}: want a string`);
    pinnedLayouts[k] = v;
  }
  const spec: ProgramSpec = {
    sourceKind,
    digest: str(o, 'digest', 'spec'),
    byteLength: int(o, 'byteLength', 'spec'),
    license,
    programs,
    maps,
    globals,
    buildLayouts: arr(o, 'buildLayouts', 'spec').map((v, i) => layout(v, `spec.buildLayouts[${i}]`)),
    pinnedLayouts,
  };
  if (o.script !== undefined) spec.script = script(o.script, maps.length);
  return spec;
}

function mapIndex(o: Obj, key: string, what: string, mapCount: number, allowNone = false): number {
  const i = int(o, key, what);
  if ((i < 0 || i >= mapCount) && !(allowNone && i === -1)) throw bad(`${what}.${key}: map ${i} is not one of the ${mapCount} maps`);
  return i;
}

function action(v: unknown, what: string, mapCount: number): ScriptAction {
  const o = obj(v, what);
  switch (o.kind) {
    case 'printf':
      return {
        kind: 'printf',
        format: str(o, 'format', what),
        args: arr(o, 'args', what).map((a, i) => {
          const w = `${what}.args[${i}]`;
          const ao = obj(a, w);
          return { byteOffset: int(ao, 'byteOffset', w), type: valueType(ao.type, `${w}.type`) };
        }),
      };
    case 'print':
      return { kind: 'print', map: mapIndex(o, 'map', what, mapCount), top: int(o, 'top', what), div: int(o, 'div', what) };
    case 'clear':
    case 'zero':
      return { kind: o.kind, map: mapIndex(o, 'map', what, mapCount) };
    case 'time':
      return { kind: 'time', format: str(o, 'format', what) };
    case 'exit':
      return { kind: 'exit' };
    default:
      throw bad(`${what}.kind: unknown '${String(o.kind)}'`);
  }
}

function script(v: unknown, mapCount: number): SpecScript {
  const o = obj(v, 'spec.script');
  return {
    source: str(o, 'source', 'spec.script'),
    outputMap: mapIndex(o, 'outputMap', 'spec.script', mapCount, true),
    actions: arr(o, 'actions', 'spec.script').map((a, i) => action(a, `spec.script.actions[${i}]`, mapCount)),
  };
}
