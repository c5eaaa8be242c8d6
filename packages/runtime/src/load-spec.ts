import {
  checkCompat,
  type DisplayHint,
  type KernelProfile,
  mapDefsOf,
  type ProgramSpec,
  type ProviderBinding,
  type ProviderDefinition,
  type ProviderRecordBuilder,
  profileFormat,
  providerRecordBuilder,
  type ReasonKind,
  type Verdict,
} from '@probeyard/compat';
import type { EventFormat } from '@probeyard/formats';
import { sanitizeVerified, verify } from '@probeyard/verifier';
import {
  ArrayMap,
  type BpfMap,
  createMap,
  EventRuntime,
  type EventRecord,
  isVmError,
  type HelperEnvironment,
  type LoadedProgram,
  loadProgram,
  type MapSnapshot,
  type MapType,
  mapTypeNames,
  type RunStatus,
  type RuntimeOptions,
  snapshotMap,
  type TraceRecordLike,
  Vm,
  type VmOutput,
  type VmTier,
} from '@probeyard/vm';
import { resolveDisplayHint } from './display.js';
import { RuntimeError } from './errors.js';
import { type OutputBounds, OutputQueue } from './output-queue.js';

/** One loaded program and the event id its records carry (`common_type`). */
export interface LoadedSpecProgram {
  name: string;
  /** `system/event`, undefined for a program that is not a tracepoint program. */
  event: string | undefined;
  eventId: number | undefined;
  program: LoadedProgram;
  runtime: EventRuntime;
}

/** Options of {@link loadSpec}. */
export interface LoadSpecOptions {
  /** `system/event` → event id on the feed's kernel (from its profile formats). */
  eventIds?: ReadonlyMap<string, number>;
  /**
   * `system/event` → the feed kernel's format: each program is verified with it as the context
   * layout (as `checkCompat` did); without it, as a generic tracepoint context.
   */
  formatOf?: (event: string) => EventFormat | undefined;
  /** CPUs of the feed (per-CPU maps hold one value each); default 1. */
  cpuCount?: number;
  environment?: HelperEnvironment;
  /** Instruction budget of one run (the VM's default: 1,000,000). */
  budget?: number;
  /** The VM tier (default `compiled`). */
  tier?: VmTier;
  /** Bounds of the output queue between two takes (see {@link OutputQueue}). */
  outputs?: OutputBounds;
  /** Time one run in this many for the CPU-time counters (default 16; 1 times every run). */
  timeEvery?: number;
  /**
   * Programs of provider probes bound to the feed's kernel (a verdict's `providers`): each runs on
   * its raw event's records, each record turned into the probe's arguments record first (built by
   * the implementation's argument expressions; `formatOf` must give the raw event's format), and
   * is verified with the arguments record's format as its context.
   */
  providers?: readonly ProviderBinding[];
}

/**
 * The runtime of a provider probe's program: every record of its raw event becomes the probe's
 * arguments record (packages/compat `providerRecordBuilder`) before the program runs on it.
 */
export class ProviderEventRuntime extends EventRuntime {
  private readonly build: ProviderRecordBuilder;

  constructor(vm: Vm, program: LoadedProgram, options: RuntimeOptions, build: ProviderRecordBuilder) {
    super(vm, program, options);
    this.build = build;
  }

  override runBytes(cpu: number, timeLo: number, timeHi: number, bytes: Uint8Array, byteOffset: number, length: number, pid?: number): RunStatus {
    const record = this.build(bytes, byteOffset, length);
    return super.runBytes(cpu, timeLo, timeHi, record, 0, record.length, pid);
  }

  /** The batch lane runs the built record too (per-run counting: the builder's record is its own). */
  override runBatchRecord(record: TraceRecordLike, timeLo: number, timeHi: number): RunStatus {
    this.counters.eventsSeen++;
    return this.runBytes(record.cpu, timeLo, timeHi, record.bytes, record.recordOffset, record.recordLength);
  }
}

/**
 * A spec loaded into its own VM: its maps (global data initialised), one runtime per program
 * sharing them, each map's resolved display hint, and the queue of what its programs emit.
 */
export class LoadedSpec {
  readonly spec: ProgramSpec;
  readonly vm: Vm;
  readonly maps: readonly BpfMap[];
  readonly programs: readonly LoadedSpecProgram[];
  /** Display hint of each map (same index as {@link maps}), from the spec or by convention. */
  readonly displays: readonly DisplayHint[];
  /** Ring-buffer and perf records and printk lines, bounded. */
  readonly outputs: OutputQueue;
  /** CPUs the per-CPU maps hold values for. */
  readonly cpuCount: number;
  private readonly byId = new Map<number, EventRuntime[]>();

  /** Use {@link loadSpec}. */
  constructor(spec: ProgramSpec, vm: Vm, maps: BpfMap[], programs: LoadedSpecProgram[], outputs: OutputQueue, cpuCount: number) {
    this.spec = spec;
    this.vm = vm;
    this.maps = maps;
    this.programs = programs;
    this.outputs = outputs;
    this.cpuCount = cpuCount;
    this.displays = spec.maps.map(resolveDisplayHint);
    for (const p of programs) {
      if (p.eventId === undefined) continue;
      const list = this.byId.get(p.eventId) ?? [];
      list.push(p.runtime);
      this.byId.set(p.eventId, list);
    }
  }

  /** `system/event` of every tracepoint program, once each. */
  get events(): string[] {
    return [...new Set(this.programs.flatMap((p) => (p.event === undefined ? [] : [p.event])))];
  }

  /** Event ids the programs attach to (those known on the feed). */
  get eventIds(): number[] {
    return [...this.byId.keys()];
  }

  /** The runtimes attached to an event id, or undefined. */
  runtimesOf(eventId: number): readonly EventRuntime[] | undefined {
    return this.byId.get(eventId);
  }

  /** Runs every program attached to the record's event id on a raw record; returns how many ran. */
  runRecord(eventId: number, record: EventRecord): number {
    const list = this.byId.get(eventId);
    if (!list) return 0;
    for (const r of list) r.runEvent(record);
    return list.length;
  }

  /** The same for a packages/formats trace record cursor (no copy). */
  runTraceRecord(eventId: number, record: TraceRecordLike): number {
    const list = this.byId.get(eventId);
    if (!list) return 0;
    for (const r of list) r.runTraceRecord(record);
    return list.length;
  }

  /** Every map's keys and values, decoded with the spec's BTF key/value types where known. */
  snapshot(): MapSnapshot[] {
    return this.maps.map((m, i) => {
      const s = this.spec.maps[i]!;
      const types: Parameters<typeof snapshotMap>[1] = {};
      if (s.keyType) types.key = s.keyType;
      if (s.valueType) types.value = s.valueType;
      return snapshotMap(m, types);
    });
  }
}

const perCpuTypes = new Set([5, 6, 10]);

/** libbpf-tools' default `--stack-storage-size` (offcputime, profile, ...): stack-trace slots. */
export const DEFAULT_STACK_TRACE_ENTRIES = 1024;

/**
 * `max_entries` of a map once loaded on `cpuCount` CPUs, as libbpf sizes maps an object leaves at
 * 0: a perf event array gets one slot per CPU (libbpf's `libbpf_num_possible_cpus()`: here the
 * feed's CPUs), a stack-trace map libbpf-tools' default of {@link DEFAULT_STACK_TRACE_ENTRIES}
 * (their user-space halves set it before load). Any other map of 0 entries stays 0, which
 * {@link loadSpec} refuses with the map's name: its tool sizes it in user space, and nothing
 * here knows how big.
 */
export function loadedMaxEntries(map: { type: number; maxEntries: number }, cpuCount: number): number {
  if (map.maxEntries !== 0) return map.maxEntries;
  if (map.type === 4) return Math.max(1, cpuCount);
  if (map.type === 7) return DEFAULT_STACK_TRACE_ENTRIES;
  return 0;
}

/**
 * Bytes the maps of `spec` take once loaded on `cpuCount` CPUs (keys, values and per-CPU copies;
 * ring buffers their size), so a loader can refuse a spec over its memory budget before creating
 * anything.
 */
export function mapMemoryBytes(spec: ProgramSpec, cpuCount = 1): number {
  let total = 0;
  for (const m of spec.maps) {
    const entries = loadedMaxEntries(m, cpuCount);
    if (m.type === 27) total += entries;
    else total += entries * (m.keySize + ((m.valueSize + 7) & ~7) * (perCpuTypes.has(m.type) ? cpuCount : 1));
  }
  return total;
}

/**
 * Loads `spec` (relocated and checked for the feed's kernel: see {@link loadForProfile}) into a
 * new VM. Each program is verified (with the feed's format of its event when `formatOf` gives it)
 * and sanitized as the kernel rewrites a verified program (dead code → `ja -1`, exit offsets 0),
 * then loaded on the VM's tier. A program the verifier or the VM refuses throws a
 * {@link RuntimeError} `load-fault` naming the program and the instruction.
 */
export function loadSpec(spec: ProgramSpec, options: LoadSpecOptions = {}): LoadedSpec {
  const cpuCount = Math.max(1, options.cpuCount ?? 1);
  const maps = spec.maps.map((m) => {
    const maxEntries = loadedMaxEntries(m, cpuCount);
    if (maxEntries === 0) {
      throw new RuntimeError(
        'load-fault',
        `load maps: map ${m.name} has max_entries 0: its tool sizes it in user space before load (bpf_map__set_max_entries), and a ${mapTypeLabel(m.type)} has no size libbpf would give it; build it with a size`,
        { map: m.name },
      );
    }
    try {
      return createMap({ name: m.name, type: m.type as MapType, keySize: m.keySize, valueSize: m.valueSize, maxEntries, flags: m.flags }, { cpuCount });
    } catch (e) {
      if (!isVmError(e)) throw e;
      throw new RuntimeError('load-fault', `load maps: ${e.message}`, { map: m.name, cause: e });
    }
  });
  for (const g of spec.globals) {
    const index = spec.maps.findIndex((m) => m.globalSection === g.section);
    const map = maps[index];
    if (g.bytes !== undefined && map instanceof ArrayMap) {
      const value = new Uint8Array(map.spec.valueSize);
      value.set(g.bytes.subarray(0, value.length));
      map.update(new Uint8Array(4), value, 0);
    }
  }
  const queue = new OutputQueue(options.outputs);
  const vmOptions: ConstructorParameters<typeof Vm>[0] = { maps, output: (o: VmOutput) => queue.push(o) };
  if (options.environment) vmOptions.environment = options.environment;
  if (options.budget !== undefined) vmOptions.budget = options.budget;
  if (options.tier !== undefined) vmOptions.tier = options.tier;
  const vm = new Vm(vmOptions);
  const programs: LoadedSpecProgram[] = [];
  const mapDefs = mapDefsOf(spec);
  for (const p of spec.programs) {
    const binding = options.providers?.find((b) => b.program === p.name);
    const event = binding !== undefined ? `${binding.system}/${binding.event}` : p.attach.kind === 'tracepoint' ? `${p.attach.system}/${p.attach.event}` : undefined;
    const raw = event === undefined ? undefined : options.formatOf?.(event);
    let build: ProviderRecordBuilder | undefined;
    if (binding !== undefined) {
      if (raw === undefined) throw new RuntimeError('load-fault', `load ${p.name}: ${binding.probe} fires on ${event}, whose format the feed does not give`, { program: p.name });
      build = providerRecordBuilder(binding, raw);
    }
    // a provider program's context is its probe's arguments record
    const format = binding !== undefined ? binding.format : raw;
    // the bytes as the kernel runs them once verified: dead code (poisoned reads guarded by
    // `field exists`, ...) becomes `ja -1`, exit offsets 0
    const verified = verify(p.instructions, format ? { maps: mapDefs, context: { kind: 'tracepoint', event: format } } : { maps: mapDefs });
    if (!verified.ok) {
      const d = verified.diagnostics[0]!;
      throw new RuntimeError('load-fault', `load ${p.name}: the verifier rejects it: insn ${d.insnIndex} (${d.insnText}): ${d.message}`, {
        program: p.name,
        insnIndex: d.insnIndex,
        insnText: d.insnText,
      });
    }
    const result = loadProgram(sanitizeVerified(p.instructions, verified), vm.loadOptions(p.name));
    if (!result.ok) {
      const d = result.diagnostics[0];
      throw new RuntimeError('load-fault', `load ${p.name}: the vm refuses it: ${d ? `insn ${d.insnIndex} (${d.insnText}): ${d.message}` : result.code}`, {
        program: p.name,
        insnIndex: d?.insnIndex,
        insnText: d?.insnText,
      });
    }
    programs.push({
      name: p.name,
      event,
      eventId: event === undefined ? undefined : options.eventIds?.get(event),
      program: result.program,
      runtime: build === undefined ? new EventRuntime(vm, result.program, { timeEvery: options.timeEvery ?? 16 }) : new ProviderEventRuntime(vm, result.program, { timeEvery: options.timeEvery ?? 16 }, build),
    });
  }
  return new LoadedSpec(spec, vm, maps, programs, queue, cpuCount);
}

function mapTypeLabel(type: number): string {
  return (mapTypeNames as Record<number, string>)[type] ?? `map of type ${type}`;
}

/** Why a spec does not run on a kernel: one verdict reason, as data. */
export interface Refusal {
  kind: ReasonKind;
  program: string;
  event: string;
  field?: string;
  insnIndex?: number;
  text: string;
}

/** A relocated program that still does not load: the program, the instruction and why. */
export interface LoadFault {
  /** The program that does not load (undefined when a map cannot be created). */
  program?: string;
  /** The map that cannot be created. */
  map?: string;
  insnIndex?: number;
  insnText?: string;
  message: string;
}

/** What {@link loadForProfile} gives: a loaded spec, a refusal with reasons, or a load fault. */
export type LoadOutcome =
  | { ok: true; status: 'compatible' | 'relocated'; verdict: Verdict; loaded: LoadedSpec; changes: string[] }
  | { ok: false; status: 'refused'; verdict: Verdict; reasons: Refusal[] }
  | { ok: false; status: 'failed'; verdict: Verdict; fault: LoadFault };

/** Options of {@link loadForProfile}: those of {@link loadSpec} but the event ids and formats (the profile's). */
export type LoadForProfileOptions = Omit<LoadSpecOptions, 'eventIds' | 'formatOf' | 'providers'> & {
  /** Event ids when the feed numbers events differently from the profile (default: the profile's). */
  eventIds?: ReadonlyMap<string, number>;
  /** The providers a compiled program's provider probes (`provider/proc/fork`) resolve through (the versions it pins). */
  providers?: readonly ProviderDefinition[];
  /** Also refuse a read of a plain `char` field whose signedness changed (packages/compat `CompatOptions`). */
  strictCharSign?: boolean;
};

/**
 * Relocates `spec` for the kernel of `profile`, verifies it there, sanitizes it and loads it into
 * a VM (compiled tier): `ok` with the verdict (`compatible` or `relocated`, with the field moves
 * as text), or `refused` with each reason as data (which program, event, field, instruction, why),
 * or `failed` with the instruction of a load fault. Never throws for a program that does not fit.
 */
export function loadForProfile(spec: ProgramSpec, profile: KernelProfile, options: LoadForProfileOptions = {}): LoadOutcome {
  const verdict = checkCompat(spec, profile, {
    ...(options.providers !== undefined ? { providers: options.providers } : {}),
    ...(options.strictCharSign !== undefined ? { strictCharSign: options.strictCharSign } : {}),
  });
  if (verdict.relocated === undefined) {
    const reasons = verdict.reasons.map((r) => {
      const out: Refusal = { kind: r.kind, program: r.program, event: r.event, text: r.text };
      if (r.field !== undefined) out.field = r.field;
      if (r.insnIndex !== undefined) out.insnIndex = r.insnIndex;
      return out;
    });
    return { ok: false, status: 'refused', verdict, reasons };
  }
  const relocated = verdict.relocated;
  const eventIds = new Map<string, number>(options.eventIds ?? []);
  if (options.eventIds === undefined) {
    const keys = relocated.programs.flatMap((p) => (p.attach.kind === 'tracepoint' ? [`${p.attach.system}/${p.attach.event}`] : []));
    for (const b of verdict.providers ?? []) keys.push(`${b.system}/${b.event}`);
    for (const key of keys) {
      const f = profileFormat(profile, key);
      if (f) eventIds.set(key, f.id);
    }
  }
  const { providers: _definitions, strictCharSign: _strict, ...loadOptions } = options;
  try {
    const loaded = loadSpec(relocated, { ...loadOptions, eventIds, formatOf: (event) => profileFormat(profile, event), ...(verdict.providers !== undefined ? { providers: verdict.providers } : {}) });
    const changes = verdict.programs.flatMap((p) => p.changes.map((c) => `${p.program}: ${c}`));
    return { ok: true, status: verdict.status === 'compatible' ? 'compatible' : 'relocated', verdict, loaded, changes };
  } catch (e) {
    if (!(e instanceof RuntimeError) || e.code !== 'load-fault') throw e;
    const fault: LoadFault = { message: e.message };
    if (e.program !== undefined) fault.program = e.program;
    if (e.map !== undefined) fault.map = e.map;
    if (e.insnIndex !== undefined) fault.insnIndex = e.insnIndex;
    if (e.insnText !== undefined) fault.insnText = e.insnText;
    return { ok: false, status: 'failed', verdict, fault };
  }
}
