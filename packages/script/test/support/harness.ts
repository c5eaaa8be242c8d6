// Test-side runner of compiled scripts on packages/vm: loads a spec's maps and programs, runs
// BEGIN, the records, intervals and END, and carries out the output ring buffer's actions, so
// tests compare map contents and printf text with hand-computed expectations.
import { formatPrintf, mapDefsOf, type ProgramSpec, runtimeProbeOf, type ScriptAction, type ValueType } from '@probeyard/compat';
import type { EventFormat } from '@probeyard/formats';
import { sanitizeVerified, verify } from '@probeyard/verifier';
import { type BpfMap, createMap, EventRuntime, type HelperEnvironment, loadProgram, type MapType, snapshotMap, Vm, type VmOutput } from '@probeyard/vm';
export { fixtureFormats, fixtureFormatsDir, repoRoot, target618 } from './formats.js';

/** Values of a record's fields by name; strings for char arrays and `__data_loc` strings. */
export type FieldValues = Record<string, number | bigint | string>;

/** A raw record of `format` with these field values (common_type = the format's id, common_pid = `pid`). */
export function makeRecord(format: EventFormat, values: FieldValues, pid = 1): Uint8Array {
  const fields = [...format.commonFields, ...format.fields];
  const tail: Uint8Array[] = [];
  let tailAt = format.fixedSize;
  const locators: [number, number, number][] = [];
  for (const f of fields) {
    const v = f.name === 'common_type' ? format.id : f.name === 'common_pid' ? pid : values[f.name];
    if (v === undefined || f.dynamic === undefined) continue;
    const bytes = new TextEncoder().encode(`${String(v)}\0`);
    locators.push([f.byteOffset, tailAt, bytes.length]);
    tail.push(bytes);
    tailAt += bytes.length;
  }
  const out = new Uint8Array(tailAt);
  const view = new DataView(out.buffer);
  for (const f of fields) {
    const v = f.name === 'common_type' ? format.id : f.name === 'common_pid' ? pid : values[f.name];
    if (v === undefined || f.dynamic !== undefined) continue;
    if (typeof v === 'string') {
      out.set(new TextEncoder().encode(v).subarray(0, f.size - 1), f.byteOffset);
      continue;
    }
    const b = BigInt.asUintN(64, BigInt(v));
    for (let i = 0; i < f.size; i++) out[f.byteOffset + i] = Number((b >> BigInt(8 * i)) & 0xffn);
  }
  let at = format.fixedSize;
  for (const [off, start, len] of locators) view.setUint32(off, ((len & 0xffff) << 16) | (start & 0xffff), true);
  for (const t of tail) {
    out.set(t, at);
    at += t.length;
  }
  return out;
}

/** One record to run: its event, raw bytes, time, CPU. */
export interface TestRecord {
  event: string;
  data: Uint8Array;
  timestamp: number;
  cpu?: number;
}

type Typed = number | bigint | string | Typed[] | { [k: string]: Typed };

const toJs = (v: unknown): Typed =>
  typeof v === 'bigint' ? (v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v) : Array.isArray(v) ? v.map(toJs) : v !== null && typeof v === 'object' && !(v instanceof Uint8Array) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJs(x)])) : (v as Typed);

/** A spec loaded on a VM, run as the runtime runs scripts (BEGIN, records, intervals, END, actions). */
export class ScriptRun {
  readonly vm: Vm;
  readonly maps: BpfMap[];
  /** printf text and the maps `print()` printed, in order. */
  readonly out: string[] = [];
  exited = false;
  private readonly byEvent = new Map<string, EventRuntime[]>();
  private readonly runtime: { kind: string; periodNs?: number; rt: EventRuntime }[] = [];
  private readonly outputs: VmOutput[] = [];
  /** Instructions run on records (not runtime probes). */
  instructions = 0;
  runs = 0;

  constructor(
    readonly spec: ProgramSpec,
    options: { environment?: HelperEnvironment; formats?: readonly EventFormat[] } = {},
  ) {
    this.maps = spec.maps.map((m) => createMap({ name: m.name, type: m.type as MapType, keySize: m.keySize, valueSize: m.valueSize, maxEntries: m.maxEntries, flags: m.flags }, { cpuCount: 2 }));
    const vmOptions: ConstructorParameters<typeof Vm>[0] = { maps: this.maps, output: (o) => this.outputs.push(o) };
    if (options.environment) vmOptions.environment = options.environment;
    this.vm = new Vm(vmOptions);
    const defs = mapDefsOf(spec);
    for (const p of spec.programs) {
      const format = p.attach.kind === 'tracepoint' ? options.formats?.find((f) => f.system === (p.attach as { system: string }).system && f.name === (p.attach as { event: string }).event) : undefined;
      const verified = verify(p.instructions, { maps: defs, context: format ? { kind: 'tracepoint', event: format } : { kind: 'tracepoint' } });
      if (!verified.ok) throw new Error(`verifier refuses ${p.name}: ${JSON.stringify(verified.diagnostics[0])}`);
      const loaded = loadProgram(sanitizeVerified(p.instructions, verified), this.vm.loadOptions(p.name));
      if (!loaded.ok) throw new Error(`vm refuses ${p.name}: ${JSON.stringify(loaded.diagnostics[0])}`);
      const rt = new EventRuntime(this.vm, loaded.program);
      const probe = runtimeProbeOf(p.attach);
      if (p.attach.kind === 'tracepoint') {
        const key = `${p.attach.system}/${p.attach.event}`;
        this.byEvent.set(key, [...(this.byEvent.get(key) ?? []), rt]);
      } else if (probe !== undefined) {
        this.runtime.push({ kind: probe.kind, periodNs: probe.kind === 'interval' ? probe.periodNs : undefined, rt });
      } else throw new Error(`program ${p.name} attaches to ${p.section}`);
    }
  }

  private fire(kind: string, timestamp: number): void {
    for (const p of this.runtime) if (p.kind === kind && !this.exited) this.runOne(p.rt, { cpu: 0, timestamp, data: new Uint8Array(8), pid: 0 }, false);
  }

  private runOne(rt: EventRuntime, rec: { cpu: number; timestamp: number; data: Uint8Array; pid?: number }, count: boolean): void {
    const before = rt.counters.instructions;
    rt.runEvent(rec);
    if (rt.counters.faults > 0) throw new Error(`fault in ${rt.program.name}`);
    if (count) {
      this.instructions += rt.counters.instructions - before;
      this.runs++;
    }
    this.drain();
  }

  private drain(): void {
    const script = this.spec.script;
    for (const o of this.outputs.splice(0)) {
      if (o.kind !== 'ringbuf' || script === undefined) continue;
      const id = Number(new DataView(o.data.buffer, o.data.byteOffset).getBigUint64(0, true));
      const a = script.actions[id] as ScriptAction;
      switch (a.kind) {
        case 'printf':
          this.out.push(formatPrintf(a, o.data));
          break;
        case 'print':
          this.out.push(JSON.stringify({ print: this.spec.maps[a.map]!.name, entries: this.entries(this.spec.maps[a.map]!.name) }));
          break;
        case 'clear': {
          const m = this.maps[a.map]!;
          for (const k of [...m.keys()]) m.delete(k);
          break;
        }
        case 'zero': {
          const m = this.maps[a.map]!;
          for (const k of [...m.keys()]) m.update(k, new Uint8Array(m.spec.valueSize), 0);
          break;
        }
        case 'exit':
          this.exited = true;
          break;
      }
    }
  }

  /** BEGIN, every record (with intervals fired by trace time from the first record), END. */
  run(records: readonly TestRecord[]): this {
    const start = records[0]?.timestamp ?? 0;
    this.fire('begin', start);
    const next = new Map(this.runtime.filter((p) => p.kind === 'interval').map((p) => [p, start + p.periodNs!]));
    let last = start;
    for (const r of records) {
      if (this.exited) break;
      for (const [p, due] of next) {
        let d = due;
        while (d <= r.timestamp && !this.exited) {
          this.runOne(p.rt, { cpu: 0, timestamp: d, data: new Uint8Array(8), pid: 0 }, false);
          d += p.periodNs!;
        }
        next.set(p, d);
      }
      if (this.exited) break;
      for (const rt of this.byEvent.get(r.event) ?? []) {
        this.runOne(rt, { cpu: r.cpu ?? 0, timestamp: r.timestamp, data: r.data }, true);
        if (this.exited) break;
      }
      last = r.timestamp;
    }
    this.exited = false;
    this.fire('end', last);
    return this;
  }

  /** A map's entries decoded with its types, sorted by key text: [key, value] (key undefined for keyless maps). */
  entries(name: string): [Typed | undefined, Typed][] {
    const i = this.spec.maps.findIndex((m) => m.name === name);
    if (i < 0) throw new Error(`no map ${name}`);
    const s = this.spec.maps[i]!;
    const types: { key?: ValueType; value?: ValueType } = {};
    if (s.keyType) types.key = s.keyType;
    if (s.valueType) types.value = s.valueType;
    const snap = snapshotMap(this.maps[i]!, types as Parameters<typeof snapshotMap>[1]);
    const rows = snap.entries.map((e) => {
      const k = toJs(e.typedKey);
      const key = typeof k === 'object' && k !== null && !Array.isArray(k) && Object.keys(k).length === 0 ? undefined : k;
      return [key, toJs(e.typedValues?.[0])] as [Typed | undefined, Typed];
    });
    return rows.sort((a, b) => (JSON.stringify(a[0], big) < JSON.stringify(b[0], big) ? -1 : 1));
  }
}

const big = (_: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);
