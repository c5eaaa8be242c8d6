import { type Diagnostic, verify } from '@probeyard/verifier';
import { applyFixups, computeFixups, type FixupPlan, type ProgramFixups, type UnresolvedKind } from './fixups.js';
import type { KernelProfile } from './kernel-profile.js';
import { mapDefsOf } from './manifest.js';
import type { ProgramSpec } from './program-spec.js';
import type { ProviderDefinition } from './provider.js';
import { bindProviderPrograms, hasProviderPrograms, type ProviderBinding } from './provider-program.js';
import { runtimeProbeOf } from './script-spec.js';

/** The verdict of one (spec, profile) pair, from best to worst. */
export type VerdictStatus = 'compatible' | 'relocated' | 'incompatible' | 'unknown';

/**
 * Kinds of reasons a program does not run as it is (or not at all) on a kernel.
 * `signedness-changed`: a scalar field the program reads is signed where it was built unsigned
 * (or the reverse), so a test such as `error < 0` or a widening load changes meaning.
 */
export type ReasonKind =
  | UnresolvedKind
  | 'layout-pinned'
  | 'verifier-rejected'
  | 'unsupported-attach'
  | 'signedness-changed'
  /** A provider probe (`proc:::fork`) that no implementation of the provider serves on this kernel. */
  | 'provider-unresolved'
  /**
   * Not a refusal: the program reads kernel memory (bpf_probe_read_kernel from a pointer such as
   * bpf_get_current_task's task_struct) that a userspace runtime cannot see; those reads fail with
   * -EFAULT and give zeros. Given up front so a `compatible` verdict is not taken for "the same
   * results as on a kernel".
   */
  | 'kernel-memory';

/** Options of {@link checkCompat}. */
export interface CompatOptions {
  /**
   * Also refuse a signedness change of a plain `char` field (text such as `comm`, signed on x86,
   * unsigned on ARM). Off by default: text is copied, not compared as numbers.
   */
  strictCharSign?: boolean;
  /**
   * The providers a compiled program's provider probes (`SEC("provider/proc/fork")`) resolve
   * through: the versions it pins. A provider probe with none of its provider here is
   * `provider-unresolved`.
   */
  providers?: readonly ProviderDefinition[];
}

/** One reason, as data and as text. */
export interface VerdictReason {
  kind: ReasonKind;
  program: string;
  /** `system/event` (or the bare event name of a CO-RE struct). */
  event: string;
  field?: string;
  insnIndex?: number;
  /** The verifier's first diagnostic, for `verifier-rejected` (and the others the verifier hit). */
  diagnostics?: Diagnostic[];
  text: string;
}

/** One program's part of a verdict. */
export interface ProgramVerdict {
  program: string;
  event: string | undefined;
  status: VerdictStatus;
  reasons: VerdictReason[];
  /** Readable fixups applied (`next_pid: offset 56 → 52`), changed ones only. */
  changes: string[];
  /** Fields a `field exists` check found absent on this kernel (the program adapts to them). */
  absentFields: string[];
  /**
   * For a program of a provider probe: the probe and the implementation chosen on this kernel
   * (`proc:::fork via proc@1.2.0, implementation for __data_loc parent_comm`).
   */
  via?: string;
  /** The same choice as data (what agents report in metrics and what the UI can group by). */
  provider?: ProviderChoice;
}

/** A provider implementation chosen for a probe on a kernel: `io:::done via io@1.1.0, implementation for error` as data. */
export interface ProviderChoice {
  /** `io:::done`. */
  probe: string;
  provider: string;
  version: string;
  /** The implementation chosen (its `for`). */
  implementation: string;
}

export interface Verdict {
  status: VerdictStatus;
  /** The kernel: `complete` false for a profile that holds some of its events only (a trace.dat). */
  profile: { release: string; arch: string; hash: string; complete: boolean };
  programs: ProgramVerdict[];
  /** All reasons of all programs. */
  reasons: VerdictReason[];
  /**
   * Programs left out because their event is not on this kernel while the others run (libbpf-tools
   * turn such programs off with `bpf_program__set_autoload(false)`); empty when none. The relocated
   * spec holds only the programs that run.
   */
  skipped: string[];
  /** Programs that read kernel memory a userspace runtime cannot see (see the `kernel-memory` reason). */
  kernelMemory: string[];
  /** The fixups computed (the input of {@link applyFixups}). */
  plan: FixupPlan;
  /** The relocated spec when the status is `compatible` or `relocated`. */
  relocated: ProgramSpec | undefined;
  /**
   * For a spec with provider programs: each bound program's implementation, raw event, argument
   * expressions and arguments record format (what the runtime needs to build its records).
   */
  providers?: ProviderBinding[];
}

const rank: Record<VerdictStatus, number> = { compatible: 0, relocated: 1, unknown: 2, incompatible: 3 };

/** The worse of two statuses (`incompatible` > `unknown` > `relocated` > `compatible`). */
export function worseStatus(a: VerdictStatus, b: VerdictStatus): VerdictStatus {
  return rank[a] >= rank[b] ? a : b;
}

/** A plain `char` (or `char[]` element): text, whose signedness is the architecture's choice. */
function isPlainChar(type: string): boolean {
  return /^(?:const\s+)?char$/.test(type.trim());
}

/**
 * The signedness changes of the scalar fields `pf`'s program reads (loads or addresses of an
 * inline field, at reached instructions), except where the program asks the field's signedness by
 * CO-RE (`bpf_core_field_signed`: it adapts) and, unless `strictCharSign`, plain `char` text.
 */
function signednessReasons(pf: ProgramFixups, event: string, coverage: Uint8Array | undefined, options: CompatOptions): VerdictReason[] {
  const adapts = new Set(pf.fixups.filter((f) => f.access.kind === 'signed').map((f) => f.access.field));
  const out: VerdictReason[] = [];
  const seen = new Set<string>();
  for (const f of pf.fixups) {
    if (f.action !== 'patch' || f.access.kind !== 'byte-offset' || f.target === undefined || f.access.built === undefined) continue;
    if (f.access.dataLoc || f.target.dynamic !== undefined || adapts.has(f.access.field)) continue;
    if (f.access.built.signed === f.target.signed) continue;
    if (!options.strictCharSign && isPlainChar(f.target.type)) continue;
    if (coverage !== undefined && ((coverage[f.insnIndex] ?? 0) & 1) === 0) continue;
    if (seen.has(f.access.field)) continue;
    seen.add(f.access.field);
    const was = f.access.built.signed ? 'signed' : 'unsigned';
    const now = f.target.signed ? 'signed' : 'unsigned';
    out.push({
      kind: 'signedness-changed',
      program: pf.program,
      event,
      field: f.access.field,
      insnIndex: f.insnIndex,
      text: `${pf.program}: ${f.access.field}: built ${was}, ${now} (${f.target.type}) on this kernel: comparisons and sign extension of it change meaning (insn ${f.insnIndex})`,
    });
  }
  return out;
}

/**
 * Computes whether `spec` runs on the kernel of `profile`: relocates every program (compute then
 * apply fixups), verifies each again with the profile's format of its event as the context layout,
 * and names every reason it cannot run. An attach event the profile lacks (`event-missing`) makes
 * it `incompatible` on a complete profile (the kernel has no such event) and `unknown` on a partial
 * one (a trace.dat: the kernel may have it). A scalar field read whose signedness changed is
 * `signedness-changed` (plain `char` text only with `strictCharSign`). A runtime probe (a script's
 * BEGIN, END, interval: {@link runtimeProbeOf}) runs on every kernel the verifier accepts it for.
 * A program of a provider probe (`provider/proc/fork`: {@link bindProviderPrograms}) is resolved
 * through `options.providers`, relocated and verified against its probe's arguments record, and
 * says which implementation it runs through (`via`); the bindings are `verdict.providers`. One no
 * implementation serves (or without its provider) is `provider-unresolved`.
 */
export function checkCompat(spec: ProgramSpec, profile: KernelProfile, options: CompatOptions = {}): Verdict {
  if (!hasProviderPrograms(spec)) return checkBound(spec, profile, options, new Map());
  // provider programs: each bound to its arguments record's format (relocated and verified against
  // it as a tracepoint program against its event's), or decided unresolved up front
  const bound = bindProviderPrograms(spec, profile, options.providers ?? []);
  const decided = new Map<string, ProgramVerdict>();
  for (const f of bound.failures) {
    const text = `${f.program}: ${f.probe}: ${f.reason}`;
    decided.set(f.program, { program: f.program, event: undefined, status: f.status, reasons: [{ kind: 'provider-unresolved', program: f.program, event: '', text }], changes: [], absentFields: [] });
  }
  const v = checkBound(bound.spec, bound.profile, options, decided);
  for (const b of bound.bindings) {
    const synthetic = `${b.format.system}/${b.format.name}`;
    const raw = `${b.system}/${b.event}`;
    const pv = v.programs.find((p) => p.program === b.program);
    if (pv === undefined) continue;
    pv.via = `${b.probe} via ${b.via}`;
    pv.provider = { probe: b.probe, provider: b.provider, version: b.version, implementation: b.implementation };
    if (pv.event === synthetic) pv.event = raw;
    for (const r of pv.reasons) if (r.event === synthetic) r.event = raw;
  }
  // the relocated spec keeps the programs' own attach points (`provider/proc/fork`)
  const relocated = v.relocated === undefined ? undefined : { ...v.relocated, programs: v.relocated.programs.map((p) => ({ ...p, attach: spec.programs.find((x) => x.name === p.name)?.attach ?? p.attach })) };
  return { ...v, profile: { release: profile.release, arch: profile.arch, hash: profile.hash, complete: profile.complete }, relocated, providers: bound.bindings };
}

/** {@link checkCompat} of a spec whose provider programs are bound; `decided` programs are taken as given. */
function checkBound(spec: ProgramSpec, profile: KernelProfile, options: CompatOptions, decided: ReadonlyMap<string, ProgramVerdict>): Verdict {
  const plan = computeFixups(spec, profile);
  const relocated = applyFixups(spec, plan);
  const programs: ProgramVerdict[] = [];
  /** Per program: the helpers by which it reads kernel memory (from the verifier's report). */
  const kernelReads = new Map<string, string[]>();
  for (const pf of plan.programs) {
    const pre = decided.get(pf.program);
    if (pre !== undefined) {
      programs.push(pre);
      continue;
    }
    const program = relocated.programs.find((p) => p.name === pf.program)!;
    const reasons: VerdictReason[] = [];
    const changes = pf.fixups.filter((f) => f.action === 'patch' && f.changed && f.access.kind === 'byte-offset').map((f) => f.text);
    const absentFields = pf.fixups.filter((f) => f.action === 'patch' && f.access.kind === 'exists' && f.after.imm === 0).map((f) => f.access.field);
    if (pf.event === undefined && runtimeProbeOf(program.attach) !== undefined) {
      // BEGIN, END, interval: fired by the runtime on any kernel; only the verifier decides
      const result = verify(program.instructions, { maps: mapDefsOf(relocated), context: { kind: 'tracepoint' } });
      const d = result.diagnostics[0];
      const reasons: VerdictReason[] = result.ok
        ? []
        : [{ kind: 'verifier-rejected', program: pf.program, event: program.section, insnIndex: d?.insnIndex, diagnostics: result.diagnostics, text: `${pf.program}: verifier: ${d === undefined ? 'rejected' : `insn ${d.insnIndex} (${d.insnText}): ${d.message}`}` }];
      programs.push({ program: pf.program, event: undefined, status: result.ok ? 'compatible' : 'incompatible', reasons, changes, absentFields });
      continue;
    }
    if (pf.event === undefined) {
      const text = `${pf.program}: attaches to ${program.section}, not a tracepoint`;
      programs.push({ program: pf.program, event: undefined, status: 'unknown', reasons: [{ kind: 'unsupported-attach', program: pf.program, event: program.section, text }], changes, absentFields });
      continue;
    }
    const event = pf.event;
    if (pf.format === undefined) {
      const text = profile.complete
        ? `${pf.program}: event ${event} does not exist on this kernel (complete profile)`
        : `${pf.program}: event ${event} is not in this partial profile (the kernel may have it)`;
      programs.push({ program: pf.program, event, status: profile.complete ? 'incompatible' : 'unknown', reasons: [{ kind: 'event-missing', program: pf.program, event, text }], changes, absentFields });
      continue;
    }
    for (const p of pf.pinned) {
      const r: VerdictReason = { kind: 'layout-pinned', program: pf.program, event, insnIndex: p.insnIndex, text: `${pf.program}: ${p.text}` };
      if (p.targetField !== undefined) r.field = p.targetField;
      reasons.push(r);
    }
    const result = verify(program.instructions, { maps: mapDefsOf(relocated), context: { kind: 'tracepoint', event: pf.format } });
    kernelReads.set(pf.program, kernelMemoryHelpers(result.outsideReads ?? []));
    if (!result.ok) {
      const d = result.diagnostics[0];
      const poisoned = d === undefined ? undefined : pf.fixups.find((f) => f.action === 'poison' && f.insnIndex === d.insnIndex);
      if (poisoned !== undefined && poisoned.action === 'poison') {
        reasons.push({
          kind: poisoned.reason,
          program: pf.program,
          event: poisoned.access.nameSource !== 'asm' || poisoned.access.event === pf.format.name ? event : poisoned.access.event,
          field: poisoned.access.field,
          insnIndex: poisoned.insnIndex,
          diagnostics: result.diagnostics,
          text: `${pf.program}: ${poisoned.text} (insn ${poisoned.insnIndex} is reachable)`,
        });
      } else {
        const why = d === undefined ? 'rejected' : `insn ${d.insnIndex} (${d.insnText}): ${d.message}`;
        reasons.push({ kind: 'verifier-rejected', program: pf.program, event, insnIndex: d?.insnIndex, diagnostics: result.diagnostics, text: `${pf.program}: verifier: ${why}` });
      }
    }
    reasons.push(...signednessReasons(pf, event, result.coverage, options));
    const anyChange = pf.fixups.some((f) => f.action === 'poison' || f.changed);
    // a reachable read of another event the partial profile lacks: not known either way
    const onlyMissing = reasons.length > 0 && reasons.every((r) => r.kind === 'event-missing');
    const status: VerdictStatus = reasons.length > 0 ? (onlyMissing && !profile.complete ? 'unknown' : 'incompatible') : anyChange ? 'relocated' : 'compatible';
    programs.push({ program: pf.program, event, status, reasons, changes, absentFields });
  }
  // optional programs: a program whose event this kernel lacks is skipped when every other
  // program runs (and at least one does)
  const runs = programs.filter((p) => p.status === 'compatible' || p.status === 'relocated');
  // (incompatible on a complete profile, unknown on a partial one: either way only its event is missing)
  const missing = programs.filter((p) => p.reasons.length > 0 && p.reasons.every((r) => r.kind === 'event-missing'));
  const skipped = runs.length > 0 && missing.length > 0 && runs.length + missing.length === programs.length ? missing.map((p) => p.program) : [];
  let status: VerdictStatus = 'compatible';
  for (const p of programs) if (!skipped.includes(p.program)) status = worseStatus(status, p.status);
  if (programs.length === 0) status = 'unknown';
  // reads of kernel memory, said up front (not a refusal: the program runs, those reads give zeros)
  const kernelMemory: string[] = [];
  for (const p of programs) {
    if (skipped.includes(p.program) || (p.status !== 'compatible' && p.status !== 'relocated')) continue;
    const program = relocated.programs.find((x) => x.name === p.program)!;
    const how = kernelReads.get(p.program) ?? [];
    if (how.length === 0) continue;
    kernelMemory.push(p.program);
    p.reasons.push({
      kind: 'kernel-memory',
      program: p.program,
      event: p.event ?? program.section,
      text: `${p.program}: reads kernel memory (${how.join(', ')}) that a userspace runtime cannot see: those reads fail with -EFAULT and give zeros (counted as kernelReadsFailed)`,
    });
  }
  const runnable = status === 'compatible' || status === 'relocated';
  return {
    status,
    profile: { release: profile.release, arch: profile.arch, hash: profile.hash, complete: profile.complete },
    programs,
    reasons: programs.flatMap((p) => p.reasons),
    skipped,
    kernelMemory,
    plan,
    relocated: !runnable ? undefined : skipped.length === 0 ? relocated : { ...relocated, programs: relocated.programs.filter((p) => !skipped.includes(p.name)) },
  };
}

/** Helpers that read kernel memory (the legacy probe_read reads kernel addresses first). */
const KERNEL_READS = new Map([
  [4, 'bpf_probe_read'],
  [45, 'bpf_probe_read_str'],
  [113, 'bpf_probe_read_kernel'],
  [115, 'bpf_probe_read_kernel_str'],
]);

/**
 * The kernel-memory helpers among the verifier's `outsideReads` (probe reads from a plain number,
 * such as a `task_struct` pointer from bpf_get_current_task or a socket pointer of a record), once
 * each in id order. A probe read of the record, the stack or a map value is not one.
 */
function kernelMemoryHelpers(reads: readonly { helper: number }[]): string[] {
  return [...new Set(reads.map((r) => r.helper))]
    .sort((a, b) => a - b)
    .flatMap((id) => {
      const name = KERNEL_READS.get(id);
      return name === undefined ? [] : [name];
    });
}

/**
 * The status as a verdict line says it: `compatible`, or `compatible, reads kernel memory` when a
 * program that runs reads memory a userspace runtime cannot see, and the programs skipped.
 */
export function verdictHeadline(v: Pick<Verdict, 'status' | 'skipped' | 'kernelMemory'>): string {
  let head: string = v.status;
  if (v.kernelMemory.length > 0) head += `, reads kernel memory (${v.kernelMemory.join(', ')})`;
  if (v.skipped.length > 0) head += `; skipped: ${v.skipped.join(', ')} (event not on this kernel)`;
  return head;
}

/** Readable text of a verdict: the status, then one line a reason or change. */
export function formatVerdict(v: Verdict): string {
  const lines: string[] = [verdictHeadline(v)];
  for (const p of v.programs) {
    for (const r of p.reasons) lines.push(`  ${r.kind}: ${r.text}`);
    for (const c of p.changes) lines.push(`  relocated ${p.program}: ${c}`);
    for (const f of p.absentFields) lines.push(`  ${p.program}: field ${f} absent here (checked with field exists)`);
    if (p.via !== undefined) lines.push(`  ${p.program}: ${p.via}`);
  }
  return `${lines.join('\n')}\n`;
}


/** The JSON-safe part of a verdict (what a registry stores and an API returns): no plan, no bytes. */
export interface VerdictSummary {
  status: VerdictStatus;
  profile: Verdict['profile'];
  programs: ProgramVerdict[];
  reasons: VerdictReason[];
  skipped: string[];
  kernelMemory: string[];
}

/** A verdict without its fixup plan and relocated spec; survives `JSON.stringify` unchanged. */
export function verdictSummary(v: Verdict): VerdictSummary {
  return structuredClone({ status: v.status, profile: v.profile, programs: v.programs, reasons: v.reasons, skipped: v.skipped, kernelMemory: v.kernelMemory });
}
