// Runs a library program the way the agent and `probeyard run` do, through packages/runtime's
// loadForProfile: relocate for a kernel profile (a recording's own formats, or a bundled kernel),
// verify with that kernel's formats, sanitize, load into packages/vm; then run each program on
// the records of its event, and read the maps (decoded with their BTF types) and the ring-buffer
// records (decoded as the struct the catalog names for each events map, `<name>_event`).
import { readFileSync } from 'node:fs';
import { type KernelProfile, readProgramSpec, valueTypeOfBtf, type Verdict } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { readBpfObject } from '@probeyard/formats';
import { openTraceDatStream } from '@probeyard/formats/node';
import { loadForProfile } from '@probeyard/runtime';
import { decodeTyped, type EventRecord, type HelperEnvironment, type MapSnapshot, type TraceRecordLike, type TypedValue, type VmOutput } from '@probeyard/vm';
import { objectPath } from '../../src/paths.js';

export interface LoadedLibraryProgram {
  verdict: Verdict;
  /** Runs the programs attached to the record's event; returns how many ran. */
  runTraceRecord(record: TraceRecordLike & { eventId: number }): number;
  runRecord(event: string, record: EventRecord): number;
  /** Records each program ran on, by program name. */
  runs(): Record<string, number>;
  /** Faults by program name (a verified program has none). */
  faults(): Record<string, number>;
  maps(): Map<string, MapSnapshot>;
  /** Ring-buffer records so far, by map name, decoded as `struct <name>_event`. */
  events(): Map<string, Record<string, TypedValue>[]>;
}

function recordDecoder(bytes: Uint8Array, mapName: string): (data: Uint8Array) => Record<string, TypedValue> {
  const btf = readBpfObject(bytes).btf!;
  const name = `${mapName.replace(/_events$/, '')}_event`;
  const id = btf.typeIdsByName(name).find((i) => btf.kindOf(i) === 'struct');
  const type = id === undefined ? undefined : valueTypeOfBtf(btf, id);
  if (type === undefined) throw new Error(`run-recording: no struct ${name} for ${mapName}`);
  return (data) => decodeTyped(data, type) as Record<string, TypedValue>;
}

/** Relocates `program` for `profile` and loads it (packages/runtime). Throws when it is refused there. */
export async function loadLibraryProgram(program: string, profile: KernelProfile, options: { cpuCount?: number; environment?: HelperEnvironment } = {}): Promise<LoadedLibraryProgram> {
  const bytes = new Uint8Array(readFileSync(objectPath(program)));
  const out = loadForProfile(await readProgramSpec(bytes), profile, options);
  if (!out.ok) throw new Error(`run-recording: ${program} ${out.status} on ${profile.release || profile.hash}: ${out.status === 'refused' ? out.reasons.map((r) => r.text).join('; ') : out.fault.message}`);
  const loaded = out.loaded;
  const outputs: VmOutput[] = [];
  const decoders = new Map<string, (d: Uint8Array) => Record<string, TypedValue>>();
  const eventIdOf = (event: string) => loaded.programs.find((p) => p.event === event)?.eventId ?? -1;
  return {
    verdict: out.verdict,
    runTraceRecord: (record) => loaded.runTraceRecord(record.eventId, record),
    runRecord: (event, record) => loaded.runRecord(eventIdOf(event), record),
    runs: () => Object.fromEntries(loaded.programs.map((p) => [p.name, p.runtime.counters.eventsSeen])),
    faults: () => Object.fromEntries(loaded.programs.map((p) => [p.name, p.runtime.counters.faults])),
    maps() {
      const snaps = loaded.snapshot();
      return new Map(loaded.spec.maps.map((m, i) => [m.name, snaps[i]!]));
    },
    events() {
      const taken = loaded.outputs.take();
      if (taken.dropped > 0) throw new Error(`run-recording: ${taken.dropped} outputs dropped`);
      outputs.push(...taken.outputs);
      const out = new Map<string, Record<string, TypedValue>[]>();
      for (const o of outputs) {
        if (o.kind !== 'ringbuf') continue;
        let decode = decoders.get(o.map);
        if (!decode) decoders.set(o.map, (decode = recordDecoder(bytes, o.map)));
        out.set(o.map, [...(out.get(o.map) ?? []), decode(o.data)]);
      }
      return out;
    },
  };
}

export interface RecordingRun {
  verdict: Verdict;
  /** Records in the recording. */
  records: number;
  runs: Record<string, number>;
  faults: Record<string, number>;
  maps: Map<string, MapSnapshot>;
  events: Map<string, Record<string, TypedValue>[]>;
}

/** Runs `program` over every record of a trace.dat, relocated for the recording's own formats. */
export async function runOverRecording(program: string, recording: string): Promise<RecordingRun> {
  const stream = openTraceDatStream(recording);
  let records = 0;
  let loaded: LoadedLibraryProgram;
  try {
    loaded = await loadLibraryProgram(program, await readProfile(recording), {
      cpuCount: Math.max(1, stream.info.cpuCount),
      environment: { commOf: (pid) => stream.info.comm(pid) },
    });
    for await (const batch of stream) {
      for (let r = batch.next(); r; r = batch.next()) {
        records++;
        loaded.runTraceRecord(r);
      }
    }
  } finally {
    await stream.close();
  }
  return { verdict: loaded.verdict, records, runs: loaded.runs(), faults: loaded.faults(), maps: loaded.maps(), events: loaded.events() };
}

/** A map's entries as [typed key, typed value] (per-CPU maps: the first CPU's value). */
export function entriesOf(run: { maps: Map<string, MapSnapshot> }, map: string): [TypedValue, TypedValue][] {
  const m = run.maps.get(map);
  if (!m) throw new Error(`no map ${map}`);
  return m.entries.map((e) => [e.typedKey!, e.typedValues![0]!]);
}
