// Test-side runner of compiled scripts through packages/runtime as the CLI and the agent run them:
// loadSpec (verify, sanitize, VM), ScriptSession (BEGIN, intervals, actions, END), the maps as
// bpftrace prints them (drawMaps) and decoded (encodeMapSnapshot), so tests compare both with
// hand-computed expectations.
import type { ProgramSpec } from '@probeyard/compat';
import type { EventFormat } from '@probeyard/formats';
import { drawMaps, encodeMapSnapshot, type JsonValue, type LoadedSpec, loadSpec, ScriptSession } from '@probeyard/runtime';
import type { HelperEnvironment, VmTier } from '@probeyard/vm';

export { fixtureFormats, fixtureFormatsDir, repoRoot, target618 } from './formats.js';

/** Values of a record's fields by name; strings for char arrays and `__data_loc` strings. */
export type FieldValues = Record<string, number | bigint | string>;

/** A raw record of `format` with these field values (common_type = the format's id, common_pid = `pid`). */
export function makeRecord(format: EventFormat, values: FieldValues, pid = 1): Uint8Array {
  const fields = [...format.commonFields, ...format.fields];
  const fieldValue = (name: string) => (name === 'common_type' ? format.id : name === 'common_pid' ? pid : values[name]);
  const strings: { field: number; bytes: Uint8Array }[] = [];
  let size = format.fixedSize;
  for (const f of fields) {
    const v = fieldValue(f.name);
    if (v === undefined || f.dynamic === undefined) continue;
    const bytes = new TextEncoder().encode(`${String(v)}\0`);
    strings.push({ field: f.byteOffset, bytes });
    size += bytes.length;
  }
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  for (const f of fields) {
    const v = fieldValue(f.name);
    if (v === undefined || f.dynamic !== undefined) continue;
    if (typeof v === 'string') {
      out.set(new TextEncoder().encode(v).subarray(0, f.size - 1), f.byteOffset);
      continue;
    }
    const b = BigInt.asUintN(64, BigInt(v));
    for (let i = 0; i < f.size; i++) out[f.byteOffset + i] = Number((b >> BigInt(8 * i)) & 0xffn);
  }
  let at = format.fixedSize;
  for (const s of strings) {
    view.setUint32(s.field, ((s.bytes.length & 0xffff) << 16) | (at & 0xffff), true);
    out.set(s.bytes, at);
    at += s.bytes.length;
  }
  return out;
}

/** One record to run: its event (`system/event`), raw bytes, time, CPU. */
export interface TestRecord {
  event: string;
  data: Uint8Array;
  timestamp: number;
  cpu?: number;
}

/** A spec loaded through packages/runtime and run as a script. */
export class ScriptRun {
  readonly loaded: LoadedSpec;
  readonly session: ScriptSession;
  /** printf text and what print() drew, in order. */
  text = '';
  /** Instructions and runs on records (not runtime probes). */
  instructions = 0;
  runs = 0;
  private readonly eventIds = new Map<string, number>();

  constructor(
    readonly spec: ProgramSpec,
    options: { environment?: HelperEnvironment; formats?: readonly EventFormat[]; now?: () => Date; tier?: VmTier } = {},
  ) {
    const formats = options.formats ?? [];
    for (const f of formats) this.eventIds.set(`${f.system}/${f.name}`, f.id);
    const loadOptions: Parameters<typeof loadSpec>[1] = { eventIds: this.eventIds, formatOf: (e) => formats.find((f) => `${f.system}/${f.name}` === e), cpuCount: 2 };
    if (options.environment) loadOptions.environment = options.environment;
    if (options.tier) loadOptions.tier = options.tier;
    this.loaded = loadSpec(spec, loadOptions);
    this.session = new ScriptSession(this.loaded, options.now ? { onText: (t) => (this.text += t), now: options.now } : { onText: (t) => (this.text += t) });
  }

  /** BEGIN, every record (intervals fired by trace time before it), END; faults fail the test. */
  run(records: readonly TestRecord[]): this {
    let last = 0n;
    for (const r of records) {
      const ts = BigInt(r.timestamp);
      this.session.beforeRecord({ tsHigh: Number(ts >> 32n), tsLow: Number(ts & 0xffffffffn) });
      if (this.session.exited) break;
      const id = this.eventIds.get(r.event);
      if (id === undefined) throw new Error(`no format for ${r.event}`);
      for (const rt of this.loaded.runtimesOf(id) ?? []) {
        const before = rt.counters.instructions;
        rt.runEvent({ cpu: r.cpu ?? 0, timestamp: r.timestamp, data: r.data });
        if (rt.counters.faults > 0) throw new Error(`fault in ${rt.program.name}: ${rt.vm.fault?.message}`);
        this.instructions += rt.counters.instructions - before;
        this.runs++;
      }
      last = ts;
      if (this.session.drain()) break;
    }
    this.session.end(last);
    return this;
  }

  private snapshot() {
    return encodeMapSnapshot(this.loaded, { runId: 'test', eventsSeen: this.runs, eventsLost: 0 });
  }

  /** The maps as bpftrace prints them at exit. */
  draw(): string {
    return drawMaps(this.snapshot().maps);
  }

  /** A map's entries as [key, value] (key undefined for a map without keys), sorted by key (numbers numerically). */
  entries(name: string): [JsonValue | undefined, JsonValue | undefined][] {
    const m = this.snapshot().maps.find((x) => x.name === name);
    if (m === undefined) throw new Error(`no map @${name}`);
    const rows = m.entries.map((e) => {
      const k = e.key;
      const key = k !== null && typeof k === 'object' && !Array.isArray(k) && Object.keys(k).length === 0 ? undefined : k;
      return [key, e.value] as [JsonValue | undefined, JsonValue | undefined];
    });
    const order = (a: JsonValue | undefined, b: JsonValue | undefined) =>
      typeof a === 'number' && typeof b === 'number' ? a - b : JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0;
    return rows.sort((a, b) => order(a[0], b[0]));
  }
}
