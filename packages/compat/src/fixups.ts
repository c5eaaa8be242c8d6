// CO-RE for tracepoint records, as libbpf does it for kernel types: compute fixups for every named
// access against a kernel profile (pure data), then apply them to a copy of the spec. A fixup that
// cannot be resolved poisons its instruction instead of failing the program: the verifier decides
// whether the program still holds (a poisoned instruction on a path guarded by `field exists` is
// dead code there).

import { type EventFormat, parseSyscallArgField } from '@probeyard/formats';
import { CompatError } from './errors.js';
import { type LayoutField, layoutHash, layoutOf } from './event-layout.js';
import { findProfileEvent, type KernelProfile } from './kernel-profile.js';
import { type NamedAccess, type PinnedAccess, programAccesses } from './manifest.js';
import type { ProgramSpec, SpecFieldRelocation, SpecProgram } from './program-spec.js';

/**
 * The helper id a poisoned instruction calls: libbpf's own choice (`0xbad2310`, "bad relo"). The
 * verifier rejects the call where it is reachable ("invalid func unknown#195896080"); where it is
 * not, the program still verifies, exactly as with libbpf and the kernel.
 */
export const POISON_HELPER_ID = 0xbad2310;

/** Why an access cannot be relocated (also the kinds of an incompatible verdict's reasons). */
export type UnresolvedKind =
  /** The record struct's event is not in the profile. */
  | 'event-missing'
  /** The event has no field of that name. */
  | 'field-missing'
  /** An inline field (`char comm[16]`) became `__data_loc` / `__rel_loc`. */
  | 'became-dynamic'
  /** A `__data_loc` field became inline. */
  | 'became-static'
  /** `__data_loc` became `__rel_loc` (the locator counts from another base). */
  | 'locator-changed'
  /** The field changed size in a way no load size or sign extension bridges. */
  | 'size-unbridgeable';

/** How one instruction changes. `off`/`imm`/`opcode` are the new raw fields. */
export interface InsnPatch {
  off?: number;
  imm?: number;
  /** New opcode byte (a load size or MEMSX change). */
  opcode?: number;
}

/** One fixup: a patch of one instruction, or its poisoning with the reason. */
export type Fixup = {
  insnIndex: number;
  access: NamedAccess;
  /** The target field, when the event and field exist. */
  target: LayoutField | undefined;
  /** What changes, in words: `next_pid: offset 56 → 52`. */
  text: string;
} & (
  | { action: 'patch'; before: Required<InsnPatch>; after: Required<InsnPatch>; changed: boolean }
  | { action: 'poison'; reason: UnresolvedKind }
);

/** A pinned read on a kernel whose layout of the event differs from the pinned one. */
export interface PinnedMismatch extends PinnedAccess {
  /** The field the offset falls in on this kernel, if any. */
  targetField: string | undefined;
  text: string;
}

/** The fixups of one program for one profile. */
export interface ProgramFixups {
  program: string;
  /** `system/event` of the attach point; undefined for non-tracepoint programs. */
  event: string | undefined;
  /** The profile's format of the attach event (undefined: the profile lacks it). */
  format: EventFormat | undefined;
  fixups: Fixup[];
  pinned: PinnedMismatch[];
}

/** Everything `applyFixups` needs, computed from a spec and a profile; plain data. */
export interface FixupPlan {
  profileHash: string;
  specDigest: string;
  programs: ProgramFixups[];
}

const CLASS_LDX = 0x01;
const CLASS_ALU = 0x04;
const CLASS_ALU64 = 0x07;
const MODE_MEM = 0x60;
const MODE_MEMSX = 0x80;
const sizeBits: Record<number, number> = { 1: 0x10, 2: 0x08, 4: 0x00, 8: 0x18 };
const sizeOfBits: Record<number, number> = { 16: 1, 8: 2, 0: 4, 24: 8 };

interface RawInsn {
  opcode: number;
  off: number;
  imm: number;
}

function readInsn(program: SpecProgram, insnIndex: number): RawInsn {
  const at = insnIndex * 8;
  if (insnIndex < 0 || at + 8 > program.instructions.length) {
    throw new CompatError('invalid-fixup', `fixup of ${program.name}: instruction ${insnIndex} is past the ${program.instructions.length / 8} of the program`, {
      program: program.name,
      insnIndex,
    });
  }
  const view = new DataView(program.instructions.buffer, program.instructions.byteOffset + at, 8);
  return { opcode: view.getUint8(0), off: view.getInt16(2, true), imm: view.getInt32(4, true) };
}

function poison(access: NamedAccess, target: LayoutField | undefined, reason: UnresolvedKind, text: string): Fixup {
  return { insnIndex: access.insnIndex, access, target, action: 'poison', reason, text };
}

function patch(access: NamedAccess, target: LayoutField | undefined, before: RawInsn, after: InsnPatch, text: string): Fixup {
  const b = { opcode: before.opcode, off: before.off, imm: before.imm };
  const a = { opcode: after.opcode ?? b.opcode, off: after.off ?? b.off, imm: after.imm ?? b.imm };
  const changed = a.opcode !== b.opcode || a.off !== b.off || a.imm !== b.imm;
  return { insnIndex: access.insnIndex, access, target, action: 'patch', before: b, after: a, changed, text };
}

const isPow2Size = (n: number) => n === 1 || n === 2 || n === 4 || n === 8;

/** A value-producing fixup (`exists`, `byte-size`, `signed`): the instruction's immediate. */
function valueFixup(program: SpecProgram, access: NamedAccess, target: LayoutField | undefined, value: number, what: string): Fixup {
  const insn = readInsn(program, access.insnIndex);
  const cls = insn.opcode & 0x07;
  if (!(cls === CLASS_ALU || cls === CLASS_ALU64 || insn.opcode === 0x18) || (cls !== 0 && (insn.opcode & 0x08) !== 0)) {
    throw new CompatError('invalid-fixup', `fixup of ${program.name} insn ${access.insnIndex}: ${access.kind} relocation on opcode 0x${insn.opcode.toString(16)}`, {
      program: program.name,
      insnIndex: access.insnIndex,
    });
  }
  return patch(access, target, insn, { imm: value }, `${access.field} ${what}: ${insn.imm} → ${value}`);
}

/**
 * The format's field an access names: by name, or for `syscall_trace_enter.args[i]`
 * ({@link syscallArgField}) the i-th field after `__syscall_nr` (a syscall's format lists its
 * arguments there, in order).
 */
function targetField(fields: readonly LayoutField[], field: string): LayoutField | undefined {
  const arg = parseSyscallArgField(field);
  if (arg === undefined) return fields.find((f) => f.name === field);
  const nr = fields.findIndex((f) => f.name === '__syscall_nr');
  return nr < 0 ? undefined : fields[nr + 1 + arg];
}

/** The fixup of one named access against the profile's format of its event (undefined: no such event). */
function fixupOf(program: SpecProgram, access: NamedAccess, format: EventFormat | undefined, sizedFields: ReadonlySet<string>): Fixup {
  const eventName = access.event;
  if (format === undefined) {
    if (access.kind === 'exists') return valueFixup(program, access, undefined, 0, 'exists');
    return poison(access, undefined, 'event-missing', `${access.field}: event ${eventName} is not in the profile`);
  }
  const target = targetField(layoutOf(format).fields, access.field);
  const built = access.built;
  const dynamicMismatch = (): Fixup | undefined => {
    if (target === undefined) return undefined;
    if (!access.dataLoc && target.dynamic !== undefined) {
      const was = built?.array ? `char[${built.size}]` : 'an inline field';
      return poison(access, target, 'became-dynamic', `${access.field}: was ${was}, is __${target.dynamic} on this kernel`);
    }
    if (access.dataLoc && target.dynamic === undefined) return poison(access, target, 'became-static', `${access.field}: was __data_loc, is inline on this kernel`);
    if (access.dataLoc && target.dynamic === 'rel_loc') return poison(access, target, 'locator-changed', `${access.field}: was __data_loc, is __rel_loc on this kernel`);
    return undefined;
  };
  switch (access.kind) {
    case 'exists':
      return valueFixup(program, access, target, target !== undefined && dynamicMismatch() === undefined ? 1 : 0, 'exists');
    case 'byte-size':
    case 'signed':
    case 'lshift-u64':
    case 'rshift-u64': {
      if (target === undefined) return poison(access, undefined, 'field-missing', `${access.field}: no such field in ${format.system}/${format.name}`);
      const bad = dynamicMismatch();
      if (bad) return bad;
      if (access.kind === 'byte-size') return valueFixup(program, access, target, target.size, 'size');
      if (access.kind === 'signed') return valueFixup(program, access, target, target.signed ? 1 : 0, 'signed');
      // no bitfields in format files: a whole-field load needs no shifts beyond the load unit
      return valueFixup(program, access, target, access.kind === 'lshift-u64' ? 64 - target.size * 8 : 64 - target.size * 8, access.kind);
    }
    case 'byte-offset':
      break;
  }
  if (target === undefined) return poison(access, undefined, 'field-missing', `${access.field}: no such field in ${format.system}/${format.name}`);
  const bad = dynamicMismatch();
  if (bad) return bad;
  const insn = readInsn(program, access.insnIndex);
  const cls = insn.opcode & 0x07;
  // where the access starts inside the field stays the same; only the field's offset moves
  const delta = built === undefined ? target.byteOffset : target.byteOffset - built.byteOffset;
  const builtSize = built?.size;
  // an element of an array whose element size changed (`unsigned long args[6]`: 8 → 4 bytes on
  // 32-bit kernels): the same index, at the new element size
  const builtElem = built?.array && built.arrayLength ? built.size / built.arrayLength : undefined;
  const targetElem = target.arrayLength ? target.size / target.arrayLength : undefined;
  if (cls === CLASS_LDX && builtElem !== undefined && targetElem !== undefined && builtElem !== targetElem) {
    const index = access.addend / builtElem;
    if (!Number.isInteger(index) || access.accessSize !== builtElem || !isPow2Size(targetElem) || index >= (target.arrayLength ?? 0)) {
      return poison(access, target, 'size-unbridgeable', `${access.field}: elements are ${builtElem} bytes at build time, ${targetElem} on this kernel`);
    }
    const off = target.byteOffset + index * targetElem;
    const signExtend = targetElem < builtElem && target.signed;
    const opcode = CLASS_LDX | (signExtend ? MODE_MEMSX : MODE_MEM) | (sizeBits[targetElem] ?? 0);
    return patch(access, target, insn, { off, opcode }, `${access.field}[${index}]: offset ${insn.off} → ${off}, load size ${builtElem} → ${targetElem}`);
  }
  const isAddress = cls === CLASS_ALU || cls === CLASS_ALU64 || insn.opcode === 0x18;
  if (!isAddress && access.addend + access.accessSize > target.size && !(cls === CLASS_LDX && access.addend === 0 && builtSize === access.accessSize)) {
    return poison(access, target, 'size-unbridgeable', `${access.field}: reads ${access.accessSize} bytes at +${access.addend}, the field has ${target.size} bytes on this kernel`);
  }
  if (cls === CLASS_LDX) {
    const mode = insn.opcode & 0xe0;
    if (mode !== MODE_MEM && mode !== MODE_MEMSX) {
      throw new CompatError('invalid-fixup', `fixup of ${program.name} insn ${access.insnIndex}: field offset on opcode 0x${insn.opcode.toString(16)}`, {
        program: program.name,
        insnIndex: access.insnIndex,
      });
    }
    const loadSize = sizeOfBits[insn.opcode & 0x18] ?? 0;
    const off = built === undefined ? target.byteOffset + access.addend : insn.off + delta;
    const wholeField = access.addend === 0 && builtSize !== undefined && loadSize === builtSize && !built?.array;
    if (!wholeField || target.size === loadSize) {
      return patch(access, target, insn, { off }, `${access.field}: offset ${insn.off} → ${off}`);
    }
    // the field changed width: load the new width; a narrower signed field is sign-extended (MEMSX)
    if (!isPow2Size(target.size) || target.arrayLength !== undefined) {
      return poison(access, target, 'size-unbridgeable', `${access.field}: ${loadSize}-byte load of a field that is ${target.size} bytes on this kernel`);
    }
    const narrower = target.size < loadSize;
    const signExtend = narrower && target.signed && target.size < 8;
    const opcode = CLASS_LDX | (signExtend ? MODE_MEMSX : MODE_MEM) | (sizeBits[target.size] ?? 0);
    const how = signExtend ? `, sign-extended (ldxs${['', 'b', 'h', '', 'w'][target.size]})` : '';
    const moved = off === insn.off ? '' : `offset ${insn.off} → ${off}, `;
    return patch(access, target, insn, { off, opcode }, `${access.field}: ${moved}load size ${loadSize} → ${target.size}${how}`);
  }
  if (cls === CLASS_ALU || cls === CLASS_ALU64 || insn.opcode === 0x18) {
    // an address (`&ctx->next_comm`): the program copies what it was built for from there,
    // unless it asks the field's size too (`bpf_core_read(dst, bpf_core_field_size(f), &f)`)
    if (builtSize !== undefined && access.addend === 0 && target.size < builtSize && !sizedFields.has(access.field)) {
      return poison(access, target, 'size-unbridgeable', `${access.field}: ${builtSize} bytes at build time, ${target.size} on this kernel`);
    }
    const imm = built === undefined ? target.byteOffset + access.addend : insn.imm + delta;
    return patch(access, target, insn, { imm }, `${access.field}: offset ${insn.imm} → ${imm}`);
  }
  throw new CompatError('invalid-fixup', `fixup of ${program.name} insn ${access.insnIndex}: field offset on opcode 0x${insn.opcode.toString(16)}`, {
    program: program.name,
    insnIndex: access.insnIndex,
  });
}

function pinnedMismatches(spec: ProgramSpec, pins: PinnedAccess[], format: EventFormat | undefined): PinnedMismatch[] {
  if (format === undefined) return [];
  const layout = layoutOf(format);
  const out: PinnedMismatch[] = [];
  for (const p of pins) {
    const pinned = spec.pinnedLayouts[p.event];
    if (pinned !== undefined && pinned === layoutHash(layout)) continue;
    const f = layout.fields.find((x) => p.byteOffset >= x.byteOffset && p.byteOffset + p.size <= x.byteOffset + x.size);
    const on = f === undefined ? 'no single field on this kernel' : `${f.name}${p.byteOffset === f.byteOffset ? '' : ` +${p.byteOffset - f.byteOffset}`} on this kernel`;
    const why = pinned === undefined ? 'no build-time layout declared' : `this kernel's layout of ${p.event} differs from the pinned one`;
    out.push({ ...p, targetField: f?.name, text: `insn ${p.insnIndex} reads offset ${p.byteOffset}, size ${p.size} (${on}) by a hard-coded offset: ${why}` });
  }
  return out;
}

/**
 * The format an access resolves against. A tracepoint program's context is its own event's record,
 * so a CO-RE struct always means the attach event, whatever its name: kernels name record structs
 * after the event *class* (`trace_event_raw_sched_wakeup_template` for `sched_wakeup`,
 * `trace_event_raw_block_rq` for `block_rq_issue`). An assembly symbol names its event; it is looked
 * up as named (normally the attach event too).
 */
function eventFormatOf(program: SpecProgram, access: NamedAccess, own: EventFormat | undefined, profile: KernelProfile): EventFormat | undefined {
  const attach = program.attach;
  if (attach.kind !== 'tracepoint') return findProfileEvent(profile, access.event)?.format;
  if (access.event === attach.event || access.nameSource === 'core' || access.nameSource === 'verifier') return own;
  return findProfileEvent(profile, access.event, attach.system)?.format;
}

/**
 * Computes the fixups of every named access of every program of `spec` for `profile`: new
 * offsets, load sizes (with sign extension where a signed field got narrower), CO-RE
 * `exists`/`size`/`signed` values from the profile's truth, and poisons with their reason for
 * what cannot be resolved. Pure: neither input changes.
 */
export function computeFixups(spec: ProgramSpec, profile: KernelProfile): FixupPlan {
  const programs: ProgramFixups[] = [];
  for (const p of spec.programs) {
    const attach = p.attach;
    const event = attach.kind === 'tracepoint' ? `${attach.system}/${attach.event}` : undefined;
    const system = attach.kind === 'tracepoint' ? attach.system : undefined;
    const own = event === undefined ? undefined : findProfileEvent(profile, attach.kind === 'tracepoint' ? attach.event : '', system);
    const format = own !== undefined && own.key === event ? own.format : undefined;
    const { named, pinned } = programAccesses(spec, p);
    const sizedFields = new Set(named.filter((a) => a.kind === 'byte-size').map((a) => a.field));
    const fixups = named.map((a) => fixupOf(p, a, eventFormatOf(p, a, format, profile), sizedFields));
    programs.push({ program: p.name, event, format, fixups, pinned: pinnedMismatches(spec, pinned, format) });
  }
  return { profileHash: profile.hash, specDigest: spec.digest, programs };
}

function writePoison(bytes: Uint8Array, insnIndex: number): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = insnIndex * 8;
  const wide = bytes[at] === 0x18;
  for (const slot of wide ? [at, at + 8] : [at]) {
    view.setUint8(slot, 0x85);
    view.setUint8(slot + 1, 0);
    view.setInt16(slot + 2, 0, true);
    view.setInt32(slot + 4, POISON_HELPER_ID, true);
  }
}

/**
 * Applies a plan to a copy of `spec`: each patch rewrites its instruction (checked against the
 * instruction it was computed from), each poison turns its instruction into `call 0xbad2310`.
 * Relocation records of the copy describe the new layout, so it can be relocated again.
 */
export function applyFixups(spec: ProgramSpec, plan: FixupPlan): ProgramSpec {
  const programs = spec.programs.map((p) => {
    const pf = plan.programs.find((x) => x.program === p.name);
    const bytes = new Uint8Array(p.instructions);
    const view = new DataView(bytes.buffer);
    const relocations: SpecFieldRelocation[] = p.fieldRelocations.map((r) => ({ ...r, built: r.built && { ...r.built } }));
    for (const f of pf?.fixups ?? []) {
      const at = f.insnIndex * 8;
      if (at + 8 > bytes.length) {
        throw new CompatError('invalid-fixup', `apply fixups to ${p.name}: instruction ${f.insnIndex} is past the end`, { program: p.name, insnIndex: f.insnIndex });
      }
      if (f.action === 'poison') {
        writePoison(bytes, f.insnIndex);
        continue;
      }
      const cur = { opcode: view.getUint8(at), off: view.getInt16(at + 2, true), imm: view.getInt32(at + 4, true) };
      if (cur.opcode !== f.before.opcode || cur.off !== f.before.off || cur.imm !== f.before.imm) {
        throw new CompatError('invalid-fixup', `apply fixups to ${p.name}: instruction ${f.insnIndex} is not the one the fixup was computed for`, {
          program: p.name,
          insnIndex: f.insnIndex,
        });
      }
      view.setUint8(at, f.after.opcode);
      view.setInt16(at + 2, f.after.off, true);
      view.setInt32(at + 4, f.after.imm, true);
      if (bytes[at] === 0x18) view.setInt32(at + 12, 0, true);
      const rel = relocations.find((r) => r.insnIndex === f.insnIndex && r.kind === f.access.kind && r.field === f.access.field);
      if (rel && f.target && f.access.kind === 'byte-offset') {
        rel.built = { byteOffset: f.target.byteOffset, size: f.target.size, signed: f.target.signed, array: f.target.arrayLength !== undefined };
        if (f.target.arrayLength !== undefined) rel.built.arrayLength = f.target.arrayLength;
        if (f.after.opcode !== f.before.opcode) rel.accessSize = sizeOfBits[f.after.opcode & 0x18] ?? rel.accessSize;
      }
    }
    return { ...p, instructions: bytes, fieldRelocations: relocations };
  });
  // hard-coded offsets named from a build-time layout now match the profile's layout
  const buildLayouts = spec.buildLayouts.map((l) => {
    const pf = plan.programs.find((x) => x.format !== undefined && x.format.name === l.event && (l.system === '' || x.format.system === l.system));
    return pf?.format ? layoutOf(pf.format) : l;
  });
  return { ...spec, programs, buildLayouts };
}
