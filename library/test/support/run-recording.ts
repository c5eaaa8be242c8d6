// Runs a library program over a trace.dat the way the agent and `probeyard run` do: relocate for
// the recording's own formats, verify, sanitize, load into packages/vm, run each program on the
// records of its event; then the maps (decoded with their BTF types) and the ring-buffer records
// (decoded with the struct the catalog names for each events map).
import { readFileSync } from 'node:fs';
import { checkCompat, mapDefsOf, profileFormat, type ProgramSpec, readProgramSpec, valueTypeOfBtf, type Verdict } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { readBpfObject } from '@probeyard/formats';
import { openTraceDatStream } from '@probeyard/formats/node';
import { sanitizeVerified, verify } from '@probeyard/verifier';
import { ArrayMap, createMap, decodeTyped, EventRuntime, loadProgram, type MapSnapshot, type MapType, snapshotMap, type TypedValue, Vm, type VmOutput } from '@probeyard/vm';
import { objectPath } from '../../src/paths.js';

export interface RecordingRun {
  verdict: Verdict;
  /** Records in the recording. */
  records: number;
  /** Records each program ran on, by program name. */
  runs: Record<string, number>;
  /** Faults, by program name (a verified program should have none). */
  faults: Record<string, number>;
  maps: Map<string, MapSnapshot>;
  /** Ring-buffer records by map name, decoded as `struct <name>_event`. */
  events: Map<string, Record<string, TypedValue>[]>;
}

function recordDecoder(bytes: Uint8Array, mapName: string): (data: Uint8Array) => Record<string, TypedValue> {
  const btf = readBpfObject(bytes).btf!;
  const name = `${mapName.replace(/_events$/, '')}_event`;
  const id = btf.typeIdsByName(name).find((i) => btf.kindOf(i) === 'struct');
  const type = id === undefined ? undefined : valueTypeOfBtf(btf, id);
  if (type === undefined) throw new Error(`run-recording: no struct ${name} for ${mapName}`);
  return (data) => decodeTyped(data, type) as Record<string, TypedValue>;
}

/** Loads the relocated spec into a fresh VM and runs it over every record of `recording`. */
export async function runOverRecording(program: string, recording: string): Promise<RecordingRun> {
  const bytes = new Uint8Array(readFileSync(objectPath(program)));
  const spec: ProgramSpec = await readProgramSpec(bytes);
  const profile = await readProfile(recording);
  const verdict = checkCompat(spec, profile);
  if (verdict.relocated === undefined) throw new Error(`run-recording: ${program} refused on ${recording}: ${verdict.status}`);
  const relocated = verdict.relocated;

  const stream = openTraceDatStream(recording);
  const cpuCount = Math.max(1, stream.info.cpuCount);
  const maps = relocated.maps.map((m) =>
    createMap({ name: m.name, type: m.type as MapType, keySize: m.keySize, valueSize: m.valueSize, maxEntries: m.maxEntries, flags: m.flags }, { cpuCount }),
  );
  for (const g of relocated.globals) {
    const map = maps[relocated.maps.findIndex((m) => m.globalSection === g.section)];
    if (g.bytes !== undefined && map instanceof ArrayMap) {
      const value = new Uint8Array(map.spec.valueSize);
      value.set(g.bytes.subarray(0, value.length));
      map.update(new Uint8Array(4), value, 0);
    }
  }
  const outputs: VmOutput[] = [];
  const vm = new Vm({ maps, output: (o) => outputs.push(o), environment: { commOf: (pid) => stream.info.comm(pid) } });
  const mapDefs = mapDefsOf(relocated);
  const byEventId = new Map<number, { name: string; runtime: EventRuntime }[]>();
  const runtimes: { name: string; runtime: EventRuntime }[] = [];
  for (const p of relocated.programs) {
    if (p.attach.kind !== 'tracepoint') continue;
    const verified = verify(p.instructions, { maps: mapDefs });
    if (!verified.ok) throw new Error(`run-recording: ${program}/${p.name} rejected: ${verified.diagnostics[0]?.message}`);
    const loaded = loadProgram(sanitizeVerified(p.instructions, verified), vm.loadOptions(p.name));
    if (!loaded.ok) throw new Error(`run-recording: ${program}/${p.name} does not load: ${loaded.code}`);
    const format = profileFormat(profile, `${p.attach.system}/${p.attach.event}`)!;
    const entry = { name: p.name, runtime: new EventRuntime(vm, loaded.program) };
    runtimes.push(entry);
    byEventId.set(format.id, [...(byEventId.get(format.id) ?? []), entry]);
  }

  let records = 0;
  try {
    for await (const batch of stream) {
      for (let r = batch.next(); r; r = batch.next()) {
        records++;
        for (const e of byEventId.get(r.eventId) ?? []) e.runtime.runTraceRecord(r);
      }
    }
  } finally {
    await stream.close();
  }

  const snapshots = new Map<string, MapSnapshot>();
  maps.forEach((m, i) => {
    const s = relocated.maps[i]!;
    snapshots.set(s.name, snapshotMap(m, { ...(s.keyType ? { key: s.keyType } : {}), ...(s.valueType ? { value: s.valueType } : {}) }));
  });
  const events = new Map<string, Record<string, TypedValue>[]>();
  const decoders = new Map<string, (d: Uint8Array) => Record<string, TypedValue>>();
  for (const o of outputs) {
    if (o.kind !== 'ringbuf') continue;
    let decode = decoders.get(o.map);
    if (!decode) decoders.set(o.map, (decode = recordDecoder(bytes, o.map)));
    events.set(o.map, [...(events.get(o.map) ?? []), decode(o.data)]);
  }
  return {
    verdict,
    records,
    runs: Object.fromEntries(runtimes.map((e) => [e.name, e.runtime.counters.eventsSeen])),
    faults: Object.fromEntries(runtimes.map((e) => [e.name, e.runtime.counters.faults])),
    maps: snapshots,
    events,
  };
}

/** A map's entries as [typed key, typed value] (the first CPU's value; per-CPU maps: each CPU). */
export function entriesOf(run: RecordingRun, map: string): [TypedValue, TypedValue][] {
  const m = run.maps.get(map);
  if (!m) throw new Error(`no map ${map}`);
  return m.entries.map((e) => [e.typedKey!, e.typedValues![0]!]);
}
