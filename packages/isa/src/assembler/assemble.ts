import { IsaError } from '../errors.js';
import type { Instruction } from '../instruction.js';
import { placeInstructions, slotCount } from '../instruction.js';
import { CallSource, classMask, InsnClass, Mode, Opcode } from '../opcode.js';
import { checkInstruction } from '../validate.js';
import { parseConformanceLine } from './conformance-syntax.js';
import { type ParsedInsn, SourceLine } from './line.js';
import { looksLlvm, parseLlvmLine } from './llvm-syntax.js';
import { type MapDeclaration, parseMapDirective } from './maps.js';

/** Which syntax the assembler reads: `auto` decides per file (the majority of unambiguous lines). */
export type AssemblerSyntax = 'auto' | 'llvm' | 'conformance';

/** Layout of one tracepoint field, as a resolver reports it (from a kernel's `format` file). */
export interface FieldLayout {
  byteOffset: number;
  size: number;
  signed: boolean;
}

/** Resolves a symbolic field operand `event.field`; undefined when the event or field does not exist. */
export type FieldResolver = (event: string, field: string) => FieldLayout | undefined;

/** Options of {@link assemble}. */
export interface AssembleOptions {
  /** Default `auto`. */
  syntax?: AssemblerSyntax;
  /**
   * Resolves symbolic field operands. Without it every field instruction is emitted with offset 0 (plus
   * any constant addend) and its relocation is marked unresolved; with it, an unknown field is an error.
   */
  resolveField?: FieldResolver;
}

/** A memory access through a symbolic tracepoint field operand (`[r1 + sched_switch.next_pid]`). */
export interface FieldRelocation {
  insnIndex: number;
  event: string;
  field: string;
  /** Constant added to the field's offset (`[r1 + sched_switch.prev_comm + 4]`). */
  addend: number;
  /** Bytes the instruction reads or writes: 1, 2, 4 or 8. */
  accessSize: number;
  /** Whether the resolver gave the field's layout (then the instruction's offset is final). */
  resolved: boolean;
  layout?: FieldLayout;
  line: number;
  column: number;
}

/** An `lddw` of a map by name; the loader puts the map's fd or index in `imm`. */
export interface MapRelocation {
  insnIndex: number;
  map: string;
  line: number;
  column: number;
}

/** Where a program attaches, parsed from its section name. */
export type AttachPoint =
  | { kind: 'tracepoint'; system: string; event: string }
  | { kind: 'raw_tracepoint'; event: string }
  | { kind: 'kprobe' | 'kretprobe'; function: string }
  | { kind: 'other'; section: string };

/** One program of an assembled file. */
export interface AssembledProgram {
  name: string;
  /** The section name (`tracepoint/sched/sched_switch`), `.text` when the file names none. */
  section: string;
  attachPoint: AttachPoint | undefined;
  instructions: Instruction[];
  fieldRelocations: FieldRelocation[];
  mapRelocations: MapRelocation[];
  /** Label name → instruction slot index. */
  labels: Record<string, number>;
}

/** Everything one assembly file declares. */
export interface AssembledObject {
  programs: AssembledProgram[];
  maps: MapDeclaration[];
  license: string | undefined;
}

interface PendingInsn {
  parsed: ParsedInsn;
  src: SourceLine;
  slot: number;
}

interface PendingProgram {
  name: string | undefined;
  section: string;
  line: number;
  explicit: boolean;
  insns: PendingInsn[];
  slots: number;
  labels: Map<string, { slot: number; line: number }>;
}

/** Removes a `#`, `;` or `//` comment (outside double quotes), keeping columns. */
export function stripComment(line: string): string {
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '#' || c === ';' || (c === '/' && line[i + 1] === '/'))) return line.slice(0, i);
  }
  return line;
}

/** Parses a section name into an attach point (undefined for `.text`). */
export function parseAttachPoint(section: string): AttachPoint | undefined {
  if (section === '.text' || section === '') return undefined;
  const parts = section.split('/');
  const [kind, a, b] = parts;
  if ((kind === 'tracepoint' || kind === 'tp') && a && b && parts.length === 3) return { kind: 'tracepoint', system: a, event: b };
  if ((kind === 'raw_tracepoint' || kind === 'raw_tp') && a && parts.length === 2) return { kind: 'raw_tracepoint', event: a };
  if ((kind === 'kprobe' || kind === 'kretprobe') && a && parts.length === 2) return { kind, function: a };
  return { kind: 'other', section };
}

const ignoredDirectives = new Set(['.globl', '.global', '.p2align', '.type', '.size', '.file']);
const ambiguousRe = /^\s*(exit|call\b.*)\s*$/;

function unquote(text: string): string {
  const t = text.trim();
  return t.length >= 2 && t.startsWith('"') && t.endsWith('"') ? t.slice(1, -1) : t;
}

/**
 * Assembles a whole Probeyard assembly file: instructions in the LLVM or the conformance syntax (or
 * both), labels, `.section` programs with subprograms, `.map` declarations, `.license`, symbolic
 * tracepoint field operands and named map references. Errors are {@link IsaError}s naming line and
 * column. See the package README for the syntax.
 */
export function assemble(text: string, options: AssembleOptions = {}): AssembledObject {
  const lines = text.split(/\r?\n/);
  const maps: MapDeclaration[] = [];
  let license: string | undefined;
  const programs: PendingProgram[] = [];
  let current: PendingProgram = { name: undefined, section: '.text', line: 1, explicit: false, insns: [], slots: 0, labels: new Map() };
  programs.push(current);

  // Lines that read the same in both syntaxes are parsed once the file's majority syntax is known.
  const deferred: { src: SourceLine; program: PendingProgram; index: number }[] = [];
  let llvmVotes = 0;
  let conformanceVotes = 0;

  const startProgram = (section: string, line: number) => {
    current = { name: undefined, section, line, explicit: true, insns: [], slots: 0, labels: new Map() };
    programs.push(current);
  };

  for (let i = 0; i < lines.length; i++) {
    const src = new SourceLine(i + 1, stripComment(lines[i]!));
    let rest = src.text;
    let offset = 0;
    // Labels: `name:` (several may share a line).
    for (;;) {
      const lm = /^(\s*)([A-Za-z_.$][\w.$]*)\s*:/.exec(rest);
      if (!lm) break;
      const name = lm[2]!;
      const column = offset + lm[1]!.length + 1;
      if (current.labels.has(name)) {
        const prev = current.labels.get(name)!;
        throw src.error('duplicate-label', `duplicate label '${name}': first defined on line ${prev.line}`, column);
      }
      current.labels.set(name, { slot: current.slots, line: src.line });
      if (current.name === undefined && current.insns.length === 0) current.name = name;
      offset += lm[0].length;
      rest = rest.slice(lm[0].length);
    }
    if (rest.trim() === '') continue;
    const dm = /^(\s*)(\.[A-Za-z_][\w.]*)(.*)$/.exec(rest);
    if (dm) {
      const directive = dm[2]!;
      const args = dm[3]!;
      const column = offset + dm[1]!.length + 1;
      const argsColumn = offset + dm[1]!.length + directive.length + 1;
      if (directive === '.section') {
        const name = unquote(args.split(',')[0] ?? '');
        if (name === '') throw src.error('syntax', 'syntax error: .section needs a name', column);
        startProgram(name, src.line);
      } else if (directive === '.text') {
        startProgram('.text', src.line);
      } else if (directive === '.license') {
        const value = unquote(args);
        if (value === '') throw src.error('syntax', 'syntax error: .license needs a value, like .license "GPL"', column);
        license = value;
      } else if (directive === '.map') {
        const decl = parseMapDirective(args, src, argsColumn);
        const dup = maps.find((m) => m.name === decl.name);
        if (dup) throw src.error('duplicate-map', `duplicate map '${decl.name}': first declared on line ${dup.line}`, argsColumn);
        maps.push(decl);
      } else if (!ignoredDirectives.has(directive)) {
        throw src.error('unknown-directive', `unknown directive '${directive}'`, column);
      }
      continue;
    }
    const lineSrc = offset === 0 ? src : new SourceLine(src.line, ' '.repeat(offset) + rest);
    const forced = options.syntax === 'llvm' || options.syntax === 'conformance' ? options.syntax : undefined;
    if (!forced && ambiguousRe.test(rest)) {
      // `exit` and `call ...` read differently per syntax but always take one slot: parse them later.
      deferred.push({ src: lineSrc, program: current, index: current.insns.length });
      current.insns.push({ parsed: { fields: { opcode: Opcode.exit, dst: 0, src: 0, offset: 0, imm: 0 } }, src: lineSrc, slot: current.slots });
      current.slots += 1;
      continue;
    }
    const syntax = forced ?? (looksLlvm(rest) ? 'llvm' : 'conformance');
    if (syntax === 'llvm') llvmVotes++;
    else conformanceVotes++;
    const parsed = syntax === 'llvm' ? parseLlvmLine(lineSrc) : parseConformanceLine(lineSrc);
    current.insns.push({ parsed, src: lineSrc, slot: current.slots });
    current.slots += slotCount(parsed.fields);
  }

  // A tie (only `exit` and `call` lines) reads as LLVM, the default disassembly syntax.
  const fileSyntax = llvmVotes >= conformanceVotes ? 'llvm' : 'conformance';
  for (const d of deferred) {
    const parsed = fileSyntax === 'llvm' ? parseLlvmLine(d.src) : parseConformanceLine(d.src);
    d.program.insns[d.index]!.parsed = parsed;
  }

  const out: AssembledProgram[] = [];
  const names = new Map<string, number>();
  for (const program of programs) {
    if (program.insns.length === 0) {
      if (program.explicit) {
        throw new IsaError('empty-program', `empty program: section '${program.section}' has no instructions`, { line: program.line, column: 1 });
      }
      continue;
    }
    const finished = finishProgram(program, maps, options);
    const first = names.get(finished.name);
    if (first !== undefined) {
      throw new IsaError('duplicate-label', `duplicate program name '${finished.name}': first used on line ${first}`, { line: program.line, column: 1 });
    }
    names.set(finished.name, program.line);
    out.push(finished);
  }
  return { programs: out, maps, license };
}

function finishProgram(program: PendingProgram, maps: MapDeclaration[], options: AssembleOptions): AssembledProgram {
  const labels = program.labels;
  const fieldRelocations: FieldRelocation[] = [];
  const mapRelocations: MapRelocation[] = [];
  let firstExit: number | undefined;
  for (const p of program.insns) if (firstExit === undefined && p.parsed.fields.opcode === Opcode.exit) firstExit = p.slot;

  for (const p of program.insns) {
    const { parsed, src, slot } = p;
    const f = parsed.fields;
    if (parsed.target) {
      const t = parsed.target;
      const label = labels.get(t.label);
      const targetSlot = label?.slot ?? (t.label === 'exit' ? firstExit : undefined);
      if (targetSlot === undefined) {
        if (t.helperFallback !== undefined) {
          f.src = CallSource.helper;
          f.imm = t.helperFallback;
        } else {
          throw src.error('unknown-label', `unknown label '${t.label}'`, t.column);
        }
      } else {
        const distance = targetSlot - (slot + 1);
        if (t.into === 'offset') {
          if (distance < -0x8000 || distance > 0x7fff) {
            throw src.error('out-of-range', `jump out of range: '${t.label}' is ${distance} instructions away (a 16-bit offset reaches -32768 to 32767; use gotol)`, t.column);
          }
          f.offset = distance;
        } else {
          f.imm = distance;
        }
      }
    }
    if (parsed.field) {
      const fo = parsed.field;
      const accessSize = accessSizeOf(f.opcode);
      const rel: FieldRelocation = { insnIndex: slot, event: fo.event, field: fo.field, addend: fo.addend, accessSize, resolved: false, line: src.line, column: fo.column };
      if (options.resolveField) {
        const layout = options.resolveField(fo.event, fo.field);
        if (!layout) throw src.error('unknown-field', `unknown field '${fo.event}.${fo.field}'`, fo.column);
        const offset = layout.byteOffset + fo.addend;
        if (offset < -0x8000 || offset > 0x7fff) {
          throw src.error('out-of-range', `offset out of range: ${fo.event}.${fo.field} at byte ${offset} does not fit in 16 bits`, fo.column);
        }
        f.offset = offset;
        rel.resolved = true;
        rel.layout = layout;
      }
      fieldRelocations.push(rel);
    }
    if (parsed.map) {
      const { name, column } = parsed.map;
      if (!maps.some((m) => m.name === name)) throw src.error('unknown-map', `unknown map '${name}' (declare it with .map)`, column);
      mapRelocations.push({ insnIndex: slot, map: name, line: src.line, column });
    }
    const problem = checkInstruction(f);
    if (problem) throw src.error(problem.code, problem.message);
  }
  const instructions = placeInstructions(program.insns.map((p) => p.parsed.fields));
  const name = program.name ?? (program.section === '.text' ? 'main' : program.section.split('/').at(-1)!);
  const labelRecord: Record<string, number> = {};
  for (const [k, v] of labels) labelRecord[k] = v.slot;
  return {
    name,
    section: program.section,
    attachPoint: parseAttachPoint(program.section),
    instructions,
    fieldRelocations,
    mapRelocations,
    labels: labelRecord,
  };
}

function accessSizeOf(opcode: number): number {
  const cls = opcode & classMask;
  if (cls === InsnClass.ldx || cls === InsnClass.st || cls === InsnClass.stx || (cls === InsnClass.ld && (opcode & 0xe0) !== Mode.imm)) {
    const size = opcode & 0x18;
    return size === 0x10 ? 1 : size === 0x08 ? 2 : size === 0x00 ? 4 : 8;
  }
  return 0;
}

/**
 * Assembles plain code (no sections or relocations needed) into instructions. Throws `empty-program`
 * for text without instructions and `unsupported` for text with more than one program.
 */
export function assembleInstructions(text: string, options: AssembleOptions = {}): Instruction[] {
  const object = assemble(text, options);
  if (object.programs.length === 0) throw new IsaError('empty-program', 'empty program: no instructions', { line: 1, column: 1 });
  if (object.programs.length > 1) {
    throw new IsaError('unsupported', `unsupported: the text has ${object.programs.length} programs; use assemble() to get each`, { line: 1, column: 1 });
  }
  return object.programs[0]!.instructions;
}
