// probeyard run: relocate a program for a feed's own formats, verify, run it in packages/vm over
// the feed, print the maps the way bpftrace does.
//
// Loads a (relocated, verified) spec into packages/vm: its maps, global data, one runtime per
// program sharing them, and dispatch of records by event id.

import { ArrayMap, type BpfMap, createMap, EventRuntime, type EventRecord, type HelperEnvironment, type LoadedProgram, loadProgram, type MapType, type MapSnapshot, snapshotMap, type TraceRecordLike, Vm, type VmOutput } from '@probeyard/vm';
import { CompatError, checkCompat, formatVerdict, mapDefsOf, type ProgramSpec, profileFormat } from '@probeyard/compat';
import { sanitizeVerified, verify } from '@probeyard/verifier';
import { type EventFormat, FormatError, type RecordStream } from '@probeyard/formats';
import { openTraceDatStream, openTracefsStream } from '@probeyard/formats/node';
import { type Command, parseCommandArgs } from '../command.js';
import { CliError, ExitCode } from '../io.js';
import { loadProfile, loadSpecFile } from './inspect.js';

/** One loaded program and the event id its records carry (`common_type`). */
export interface LoadedSpecProgram {
  name: string;
  event: string | undefined;
  eventId: number | undefined;
  program: LoadedProgram;
  runtime: EventRuntime;
}

/** A spec loaded on one VM: shared maps, one runtime per program. */
export interface SpecRunner {
  vm: Vm;
  maps: BpfMap[];
  programs: LoadedSpecProgram[];
  outputs: VmOutput[];
  /** Runs every program attached to the record's event id on a raw record. */
  runRecord(eventId: number, record: EventRecord): number;
  /** The same for a packages/formats trace record cursor (no copy). */
  runTraceRecord(eventId: number, record: TraceRecordLike): number;
  /** Every map's keys and values, decoded with the spec's BTF key/value types where known. */
  snapshot(): MapSnapshot[];
}

export interface LoadSpecOptions {
  /** `system/event` → event id on the feed's kernel (from its profile formats). */
  eventIds?: ReadonlyMap<string, number>;
  cpuCount?: number;
  environment?: HelperEnvironment;
  budget?: number;
}

/** Loads `spec` (relocate and verify it first: see `checkCompat`) into a new VM. */
export function loadSpec(spec: ProgramSpec, options: LoadSpecOptions = {}): SpecRunner {
  const cpuCount = options.cpuCount ?? 1;
  const maps = spec.maps.map((m) =>
    createMap({ name: m.name, type: m.type as MapType, keySize: m.keySize, valueSize: m.valueSize, maxEntries: m.maxEntries, flags: m.flags }, { cpuCount }),
  );
  for (const g of spec.globals) {
    const index = spec.maps.findIndex((m) => m.globalSection === g.section);
    const map = maps[index];
    if (g.bytes !== undefined && map instanceof ArrayMap) {
      const value = new Uint8Array(map.spec.valueSize);
      value.set(g.bytes.subarray(0, value.length));
      map.update(new Uint8Array(4), value, 0);
    }
  }
  const outputs: VmOutput[] = [];
  const vmOptions: ConstructorParameters<typeof Vm>[0] = { maps, output: (o) => outputs.push(o) };
  if (options.environment) vmOptions.environment = options.environment;
  if (options.budget !== undefined) vmOptions.budget = options.budget;
  const vm = new Vm(vmOptions);
  const programs: LoadedSpecProgram[] = [];
  const mapDefs = mapDefsOf(spec);
  for (const p of spec.programs) {
    // the bytes as the kernel runs them once verified: dead code (poisoned reads guarded by
    // `field exists`, ...) becomes `ja -1`, exit offsets 0
    const verified = verify(p.instructions, { maps: mapDefs });
    if (!verified.ok) {
      const d = verified.diagnostics[0]!;
      throw new CompatError('unsupported', `load ${p.name} into the vm: the verifier rejects it: insn ${d.insnIndex} (${d.insnText}): ${d.message}`, { program: p.name, insnIndex: d.insnIndex });
    }
    const result = loadProgram(sanitizeVerified(p.instructions, verified), vm.loadOptions(p.name));
    if (!result.ok) {
      const d = result.diagnostics[0];
      throw new CompatError('unsupported', `load ${p.name} into the vm: ${d ? `insn ${d.insnIndex} (${d.insnText}): ${d.message}` : result.code}`, {
        program: p.name,
        insnIndex: d?.insnIndex,
      });
    }
    const event = p.attach.kind === 'tracepoint' ? `${p.attach.system}/${p.attach.event}` : undefined;
    programs.push({
      name: p.name,
      event,
      eventId: event === undefined ? undefined : options.eventIds?.get(event),
      program: result.program,
      runtime: new EventRuntime(vm, result.program),
    });
  }
  const byId = new Map<number, EventRuntime[]>();
  for (const p of programs) {
    if (p.eventId === undefined) continue;
    const list = byId.get(p.eventId) ?? [];
    list.push(p.runtime);
    byId.set(p.eventId, list);
  }
  return {
    vm,
    maps,
    programs,
    outputs,
    runRecord(eventId, record) {
      const list = byId.get(eventId);
      if (!list) return 0;
      for (const r of list) r.runEvent(record);
      return list.length;
    },
    runTraceRecord(eventId, record) {
      const list = byId.get(eventId);
      if (!list) return 0;
      for (const r of list) r.runTraceRecord(record);
      return list.length;
    },
    snapshot() {
      return maps.map((m, i) => {
        const s = spec.maps[i]!;
        const types: Parameters<typeof snapshotMap>[1] = {};
        if (s.keyType) types.key = s.keyType;
        if (s.valueType) types.value = s.valueType;
        return snapshotMap(m, types);
      });
    },
  };
}

// ---- printing maps the way bpftrace does ------------------------------------------------------

type Typed = number | bigint | string | Typed[] | { [k: string]: Typed };

/**
 * A key or value without a type (assembly maps, objects without BTF): 1, 2, 4 or 8 bytes read as a
 * little-endian unsigned integer, as bpftrace prints integer keys and counters; otherwise undefined.
 */
export function untypedInteger(raw: Uint8Array | undefined): bigint | undefined {
  if (!raw || ![1, 2, 4, 8].includes(raw.length)) return undefined;
  let v = 0n;
  for (let i = raw.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(raw[i]!);
  return v;
}

function keyText(k: Typed | undefined, raw: Uint8Array): string {
  if (k === undefined) return String(untypedInteger(raw) ?? [...raw].map((b) => b.toString(16).padStart(2, '0')).join(''));
  if (typeof k === 'string') return k;
  if (typeof k === 'number' || typeof k === 'bigint') return String(k);
  if (Array.isArray(k)) return k.map((x) => keyText(x, raw)).join(', ');
  const values = Object.entries(k).filter(([name]) => !/^(pad|__pad)\w*$/.test(name)).map(([, v]) => v);
  return values.map((x) => keyText(x, raw)).join(', ');
}

function count(v: Typed | undefined): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(v);
  return undefined;
}

/** A log2 histogram: a 64-slot array map of counters (slot k counts values in [2^k, 2^(k+1))). */
export function isLog2Histogram(m: MapSnapshot): boolean {
  return m.type === 'array' && m.maxEntries === 64 && m.keySize === 4 && m.valueSize === 8;
}

function bucketLabel(slot: number): string {
  const unit = (n: bigint) => {
    const units = ['', 'K', 'M', 'G', 'T', 'P', 'E'];
    let i = 0;
    while (n >= 1024n && n % 1024n === 0n && i < units.length - 1) {
      n /= 1024n;
      i++;
    }
    return `${n}${units[i]}`;
  };
  if (slot === 0) return '[0, 2)';
  return `[${unit(1n << BigInt(slot))}, ${unit(1n << BigInt(slot + 1))})`;
}

/** `@name:` and one bar a bucket from the first to the last non-empty one (52 columns of @). */
export function formatHistogram(name: string, counts: bigint[]): string {
  const first = counts.findIndex((c) => c > 0n);
  if (first < 0) return `@${name}:\n\n`;
  let last = counts.length - 1;
  while (counts[last] === 0n) last--;
  let max = 0n;
  for (const c of counts) if (c > max) max = c;
  const lines = [`@${name}:`];
  for (let i = first; i <= last; i++) {
    const c = counts[i] ?? 0n;
    const width = max === 0n ? 0 : Number((c * 52n) / max);
    lines.push(`${bucketLabel(i).padEnd(20)}${String(c).padStart(8)} |${'@'.repeat(width).padEnd(52)}|`);
  }
  return `${lines.join('\n')}\n\n`;
}

/** Maps as bpftrace prints them at exit: histograms as bars, other maps `@name[key]: value` sorted by value. */
export function formatMaps(snapshots: readonly MapSnapshot[]): string {
  let out = '';
  for (const m of snapshots) {
    if (isLog2Histogram(m)) {
      const counts = new Array<bigint>(64).fill(0n);
      for (const e of m.entries) {
        const slot = typeof e.typedKey === 'number' ? e.typedKey : new DataView(e.key.buffer, e.key.byteOffset, 4).getUint32(0, true);
        counts[slot] = count(e.typedValues?.[0] as Typed) ?? 0n;
      }
      out += formatHistogram(m.name, counts);
      continue;
    }
    if (m.type !== 'hash' && m.type !== 'lru_hash' && m.type !== 'array' && m.type !== 'percpu_hash' && m.type !== 'percpu_array') continue;
    const rows = m.entries
      .map((e) => {
        const values = (e.typedValues ?? e.values.map(untypedInteger)) as (Typed | undefined)[];
        const total = values.reduce<bigint | undefined>((s, v) => {
          const c = count(v);
          return c === undefined || s === undefined ? undefined : s + c;
        }, 0n);
        return { key: keyText(e.typedKey as Typed | undefined, e.key), value: total, raw: e.values[0] };
      })
      .filter((r) => r.value === undefined || r.value !== 0n || m.type.endsWith('hash'));
    rows.sort((a, b) => (a.value !== undefined && b.value !== undefined ? (a.value < b.value ? -1 : a.value > b.value ? 1 : a.key.localeCompare(b.key)) : 0));
    for (const r of rows) {
      const value = r.value ?? [...(r.raw ?? [])].map((b) => b.toString(16).padStart(2, '0')).join('');
      out += `@${m.name}[${r.key}]: ${value}\n`;
    }
    out += '\n';
  }
  return out;
}

function snapshotJson(m: MapSnapshot): unknown {
  const conv = (v: unknown): unknown =>
    typeof v === 'bigint' ? (v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString()) : Array.isArray(v) ? v.map(conv) : v !== null && typeof v === 'object' && !(v instanceof Uint8Array) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, conv(x)])) : v;
  return {
    name: m.name,
    type: m.type,
    entries: m.entries.map((e) => ({
      key: e.typedKey === undefined ? Buffer.from(e.key).toString('hex') : conv(e.typedKey),
      values: e.typedValues === undefined ? e.values.map((v) => Buffer.from(v).toString('hex')) : conv(e.typedValues),
    })),
  };
}

// ---- the command -----------------------------------------------------------------------------

const help = `usage: probeyard run PROGRAM --feed FILE.dat|live [--duration S] [--json] [--built-against P]

Runs a tracing program over a trace feed in Probeyard's VM: relocates it for the feed's own event
formats (a trace.dat's formats, or this machine's tracefs), verifies it, runs every program on the
records of its event, and prints the maps at the end as bpftrace does (counts sorted, log2
histograms drawn as bars).

  PROGRAM          a BPF ELF object or Probeyard assembly
  --feed FILE.dat  replay a trace-cmd recording (its formats are the kernel profile)
  --feed live      the live tracefs ring buffer (root), in a private instance
  --duration S     stop a live feed after S seconds (default 5)
  --built-against  formats the program was built for (names hard-coded offsets)
  --json           print { verdict, counters, maps } as JSON

Exit codes: 0 ran, 1 refused on this feed's kernel (the reasons are printed), 2 unusable input.`;

export const runCommand: Command = {
  name: 'run',
  summary: 'relocate, verify and run a program over a trace.dat or the live feed; print its maps',
  help,
  async run(args, io) {
    const parsed = parseCommandArgs(args, {
          feed: { type: 'string' },
          duration: { type: 'string' },
          json: { type: 'boolean', default: false },
          'built-against': { type: 'string' },
        }, help);
    const { values, positionals } = parsed;
    if (positionals.length !== 1) throw new CliError(`expected one PROGRAM, got ${positionals.length}\n\n${help}`);
    const feed = values.feed;
    if (feed === undefined) throw new CliError(`--feed FILE.dat|live is needed\n\n${help}`);
    const duration = values.duration === undefined ? 5 : Number(values.duration);
    if (!Number.isFinite(duration) || duration <= 0) throw new CliError(`--duration takes seconds > 0, not ${values.duration}`);
    const spec = await loadSpecFile(io, positionals[0]!, values['built-against']);
    const profile = await loadProfile(feed);
    const verdict = checkCompat(spec, profile);
    if (verdict.relocated === undefined) {
      io.stderr(`probeyard run: refused on this feed's kernel (${profile.release || profile.hash.slice(0, 16)}): ${formatVerdict(verdict)}`);
      return ExitCode.refused;
    }
    const eventIds = new Map<string, number>();
    for (const key of profile.events.keys()) {
      const f = profileFormat(profile, key);
      if (f) eventIds.set(key, f.id);
    }
    const events = verdict.relocated.programs.flatMap((p) => (p.attach.kind === 'tracepoint' ? [`${p.attach.system}/${p.attach.event}`] : []));
    let stream: RecordStream<EventFormat>;
    try {
      stream = feed === 'live' ? openTracefsStream({ events }) : openTraceDatStream(feed);
    } catch (e) {
      if (e instanceof FormatError) throw new CliError(`feed ${feed}: ${e.message}`);
      throw e;
    }
    const runner = loadSpec(verdict.relocated, { eventIds, cpuCount: Math.max(1, stream.info.cpuCount), environment: { commOf: (pid) => stream.info.comm(pid) } });
    const wanted = new Set(runner.programs.map((p) => p.eventId).filter((id): id is number => id !== undefined));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = feed === 'live' ? Date.now() + duration * 1000 : undefined;
    if (feed === 'live') timer = setTimeout(() => void stream.close(), duration * 1000);
    let records = 0;
    try {
      for await (const batch of stream) {
        for (let r = batch.next(); r; r = batch.next()) {
          records++;
          if (wanted.has(r.eventId)) runner.runTraceRecord(r.eventId, r);
        }
        // a busy live feed may never leave the microtask queue: check the clock between batches too
        if (deadline !== undefined && Date.now() >= deadline) break;
      }
    } finally {
      if (timer) clearTimeout(timer);
      await stream.close();
    }
    const counters = runner.programs.map((p) => ({ program: p.name, event: p.event, ...p.runtime.counters }));
    const snapshots = runner.snapshot();
    if (values.json) {
      io.stdout(
        `${JSON.stringify({ verdict: { status: verdict.status, reasons: verdict.reasons, programs: verdict.programs }, records, counters, maps: snapshots.map(snapshotJson) }, null, 2)}\n`,
      );
      return ExitCode.ok;
    }
    const changes = verdict.programs.flatMap((p) => p.changes.map((c) => `${p.program}: ${c}`));
    io.stderr(`${verdict.status} for this feed's kernel${changes.length ? ` (${changes.join('; ')})` : ''}; ${records} records\n`);
    for (const c of counters) if (c.faults > 0) io.stderr(`${c.program}: ${c.faults} faults\n`);
    io.stdout(formatMaps(snapshots));
    return ExitCode.ok;
  },
};
