import type { EventFormat } from '@probeyard/formats';
import { helperName } from '@probeyard/isa';
import { type MapDef, verify } from '@probeyard/verifier';
import { type EventLayout, formatOfLayout } from './event-layout.js';
import type { FieldNameSource, FieldRelocationKind, ProgramSpec, SpecFieldRelocation, SpecProgram } from './program-spec.js';

/** Every program version carries this tag: compatibility is computed per kernel, never assumed. */
export const ABI_TAG = 'module-like, no ABI';

/** A named field access the relocation step can rewrite (CO-RE, assembly symbol, or verifier-named). */
export interface NamedAccess extends SpecFieldRelocation {
  /** `core`, `asm`, or `verifier` (a hard-coded offset named from a declared build-time layout). */
  nameSource: FieldNameSource;
}

/** A read of the record at a hard-coded offset that nothing names. */
export interface PinnedAccess {
  program: string;
  /** `system/event`. */
  event: string;
  insnIndex: number;
  byteOffset: number;
  size: number;
}

/** One field read of the manifest, with the layout it was built for. */
export interface ManifestField {
  program: string;
  insnIndex: number;
  /** `system/event` when known (the program's attach point), else the bare event name. */
  event: string;
  field: string;
  kind: FieldRelocationKind;
  source: FieldNameSource;
  /** Build-time offset, size and signedness; undefined for assembly built without formats. */
  byteOffset: number | undefined;
  size: number | undefined;
  signed: boolean | undefined;
  dataLoc: boolean;
  flavor: string;
}

/** What a program version reads and uses, extracted when it is published. */
export interface Manifest {
  digest: string;
  tag: typeof ABI_TAG;
  /** `system/event` of every tracepoint program. */
  attachPoints: string[];
  fields: ManifestField[];
  /** Accesses that could not be named (see {@link Manifest.layoutPinned}). */
  pinned: PinnedAccess[];
  /**
   * True when some access could not be named: the program only runs on kernels whose layout of
   * that event is byte-identical to the one it was built for (`spec.pinnedLayouts`).
   */
  layoutPinned: boolean;
  /** Helpers called, by id, with the kernel's name. */
  helpers: { id: number; name: string }[];
  /** Map types used (`hash`, `array` …), sorted, each once. */
  mapTypes: string[];
  programs: { name: string; section: string; attach: string; insnCount: number; helpers: number[] }[];
}

/** The verifier's view of a spec's maps (by `lddw` index). */
export function mapDefsOf(spec: ProgramSpec): MapDef[] {
  return spec.maps.map((m) => {
    const d: MapDef = { type: m.type, keySize: m.keySize, valueSize: m.valueSize, maxEntries: m.maxEntries, name: m.name };
    if (m.readonly) {
      d.readonly = true;
      // libbpf freezes .rodata before load: its bytes are the verifier's constants
      const bytes = m.globalSection === undefined ? undefined : spec.globals.find((g) => g.section === m.globalSection)?.bytes;
      if (bytes !== undefined) d.frozen = bytes;
    }
    return d;
  });
}

/** `system/event` of a program, if it is a tracepoint program. */
export function attachKey(p: SpecProgram): string | undefined {
  return p.attach.kind === 'tracepoint' ? `${p.attach.system}/${p.attach.event}` : undefined;
}

/** A stand-in format with one byte-array field over the whole record: every ctx read is reported. */
function rawFormat(system: string, event: string): EventFormat {
  return formatOfLayout({
    system,
    event,
    fields: [{ name: '__record', type: 'char', byteOffset: 0, size: 8192, signed: false, arrayLength: 8192, isCommon: false }],
  });
}

function buildLayoutOf(spec: ProgramSpec, system: string, event: string): EventLayout | undefined {
  return spec.buildLayouts.find((l) => l.event === event && (l.system === system || l.system === ''));
}

/**
 * The named accesses of one program and the accesses nothing names. CO-RE relocations and
 * assembly symbols name themselves; every other read of the record the verifier reports is named
 * from the declared build-time layout of the event, or else is pinned.
 */
export function programAccesses(spec: ProgramSpec, program: SpecProgram): { named: NamedAccess[]; pinned: PinnedAccess[] } {
  const named: NamedAccess[] = program.fieldRelocations.map((r) => ({ ...r, nameSource: r.source }));
  const pinned: PinnedAccess[] = [];
  const p = program.attach;
  if (p.kind !== 'tracepoint') return { named, pinned };
  const covered = new Set(program.fieldRelocations.map((r) => r.insnIndex));
  const layout = buildLayoutOf(spec, p.system, p.event);
  const format = layout ? formatOfLayout(layout) : rawFormat(p.system, p.event);
  const result = verify(program.instructions, { maps: mapDefsOf(spec), context: { kind: 'tracepoint', event: format } });
  for (const a of result.contextAccesses) {
    if (covered.has(a.insnIndex)) continue;
    if (layout === undefined) {
      pinned.push({ program: program.name, event: `${p.system}/${p.event}`, insnIndex: a.insnIndex, byteOffset: a.offset, size: a.size });
      continue;
    }
    const f = layout.fields.find((x) => x.name === a.field);
    if (f === undefined) continue;
    named.push({
      insnIndex: a.insnIndex,
      source: 'asm',
      nameSource: 'verifier',
      kind: 'byte-offset',
      event: p.event,
      flavor: '',
      field: f.name,
      dataLoc: f.dynamic !== undefined,
      addend: a.fieldOffset,
      accessSize: a.size,
      built: f.arrayLength !== undefined ? { byteOffset: f.byteOffset, size: f.size, signed: f.signed, array: true, arrayLength: f.arrayLength } : { byteOffset: f.byteOffset, size: f.size, signed: f.signed, array: false },
    });
  }
  named.sort((x, y) => x.insnIndex - y.insnIndex);
  return { named, pinned };
}

/** Helper ids a program calls (`call imm` with src 0), sorted. */
export function helpersOf(instructions: Uint8Array): number[] {
  const view = new DataView(instructions.buffer, instructions.byteOffset, instructions.byteLength);
  const ids = new Set<number>();
  for (let at = 0; at + 8 <= instructions.length; at += 8) {
    const op = instructions[at]!;
    if (op === 0x85 && (instructions[at + 1]! & 0xf0) === 0) ids.add(view.getInt32(at + 4, true));
    if (op === 0x18) at += 8;
  }
  return [...ids].sort((a, b) => a - b);
}

/** The manifest of a spec: attach points, every field read by name, helpers and map types. */
export function buildManifest(spec: ProgramSpec): Manifest {
  const fields: ManifestField[] = [];
  const pinned: PinnedAccess[] = [];
  const programs: Manifest['programs'] = [];
  const allHelpers = new Set<number>();
  for (const p of spec.programs) {
    const key = attachKey(p);
    const { named, pinned: pins } = programAccesses(spec, p);
    for (const a of named) {
      // a CO-RE struct of a tracepoint program is its own record, whatever the (class) name
      const eventKey = p.attach.kind === 'tracepoint' && (a.event === p.attach.event || a.nameSource !== 'asm') ? (key ?? a.event) : a.event;
      fields.push({
        program: p.name,
        insnIndex: a.insnIndex,
        event: eventKey,
        field: a.field,
        kind: a.kind,
        source: a.nameSource,
        byteOffset: a.built === undefined ? undefined : a.built.byteOffset + a.addend,
        size: a.built === undefined ? undefined : a.kind === 'byte-offset' ? a.accessSize : a.built.size,
        signed: a.built?.signed,
        dataLoc: a.dataLoc,
        flavor: a.flavor,
      });
    }
    pinned.push(...pins);
    const helpers = helpersOf(p.instructions);
    for (const h of helpers) allHelpers.add(h);
    programs.push({ name: p.name, section: p.section, attach: key ?? p.section, insnCount: p.instructions.length / 8, helpers });
  }
  return {
    digest: spec.digest,
    tag: ABI_TAG,
    attachPoints: [...new Set(spec.programs.map(attachKey).filter((k): k is string => k !== undefined))],
    fields,
    pinned,
    layoutPinned: pinned.length > 0,
    helpers: [...allHelpers].sort((a, b) => a - b).map((id) => ({ id, name: helperName(id) ?? `helper#${id}` })),
    mapTypes: [...new Set(spec.maps.map((m) => m.typeName))].sort(),
    programs,
  };
}

/** Readable text of a manifest (what `probeyard inspect` prints). */
export function formatManifest(manifest: Manifest): string {
  const lines = [`digest ${manifest.digest}`, `tag: ${manifest.tag}`];
  for (const p of manifest.programs) lines.push(`program ${p.name} (${p.section}): ${p.insnCount} insns, attach ${p.attach}`);
  lines.push('fields read:');
  for (const f of manifest.fields) {
    const at = f.byteOffset === undefined ? 'unresolved' : `offset ${f.byteOffset}, size ${f.size}, ${f.signed ? 'signed' : 'unsigned'}`;
    const flavor = f.flavor === '' ? '' : ` (flavor ${f.flavor})`;
    lines.push(`  ${f.program} insn ${f.insnIndex}: ${f.event}.${f.field}${f.dataLoc ? ' (__data_loc)' : ''} ${f.kind}${flavor}: ${at} [${f.source}]`);
  }
  if (manifest.pinned.length > 0) {
    lines.push('layout-pinned reads (hard-coded offsets, no build-time format):');
    for (const p of manifest.pinned) lines.push(`  ${p.program} insn ${p.insnIndex}: ${p.event} offset ${p.byteOffset}, size ${p.size}`);
  }
  lines.push(`helpers: ${manifest.helpers.map((h) => h.name).join(', ') || 'none'}`);
  lines.push(`map types: ${manifest.mapTypes.join(', ') || 'none'}`);
  return `${lines.join('\n')}\n`;
}
